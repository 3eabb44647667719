"""Play a saved sb3-contrib ``MaskablePPO`` model as an agent (spec ``"sb3:PATH.zip"``).

The model must have been trained on ``observation["observation"]`` alone (as
``training/sb3_maskable_ppo.py`` does); the action mask goes to ``predict(action_masks=...)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cf_env import ObservationEncoder, RulesConfig

__all__ = ["SB3Agent"]


class SB3Agent:
    """The most likely legal action of a MaskablePPO policy (deterministic: SB3 samples with
    torch's global generator, which would bypass the ``rng`` this protocol hands in)."""

    def __init__(self, path: str | Path, config: RulesConfig, name: str | None = None) -> None:
        from sb3_contrib import MaskablePPO

        if not Path(path).is_file():
            raise FileNotFoundError(f"no MaskablePPO model at {path}")
        self.model = MaskablePPO.load(str(path), device="cpu")
        self.config = config
        self.name = name or f"sb3:{path}"
        expected = (ObservationEncoder(config).size,)
        shape = self.model.observation_space.shape
        if shape != expected:
            raise ValueError(f"{path} was trained on observations of shape {shape}, these rules give {expected}")
        if self.model.action_space.n != config.num_actions:
            raise ValueError(f"{path} has {self.model.action_space.n} actions, these rules have {config.num_actions}")

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        action, _ = self.model.predict(observation["observation"], action_masks=mask,
                                       deterministic=True)
        return int(action)
