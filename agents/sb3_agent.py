"""Play a saved sb3-contrib ``MaskablePPO`` model as an agent (spec ``"sb3:PATH.zip"``).

The model must have been trained on ``observation["observation"]`` alone (as
``training/sb3_maskable_ppo.py`` does); the action mask goes to ``predict(action_masks=...)``.

**Untrusted files.** An SB3 zip stores some of its settings as cloudpickle, and unpickling runs
whatever code the file's author put there. ``sb3:PATH`` therefore never unpickles: it rebuilds
each pickled entry an inference needs (the policy class, spaces, schedules, buffer class) from
this package's own code and the rules, loads the weights with torch's weights-only loader, and
refuses a file that pickles anything else. ``sb3+trust:PATH`` loads the file as SB3 itself does,
pickles included: use it only for files you made or trust.
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.spec import AgentSpecError
from cf_env import ObservationEncoder, RulesConfig
from cf_env.observation import VERSIONS

__all__ = ["SB3Agent", "SB3ModelError", "UntrustedFileError"]

# pickled entries that sb3:PATH rebuilds itself; none of them is unpickled from the file
_REBUILT = ("policy_class", "observation_space", "action_space", "lr_schedule", "clip_range", "clip_range_vf",
            "rollout_buffer_class", "_last_obs", "_last_episode_starts", "ep_info_buffer", "ep_success_buffer")


class UntrustedFileError(AgentSpecError):
    """Loading the file would unpickle entries that could run code; the message says how to
    vouch for it."""


class SB3ModelError(AgentSpecError):
    """The file is not a saved MaskablePPO model for these rules; the message says what differs."""


def _readable(entry: Any, field: str) -> Any:
    """A plain value that SB3 writes beside a pickled entry (e.g. a space's shape), or None."""
    if isinstance(entry, dict) and isinstance(entry.get(field), str):
        try:
            return ast.literal_eval(entry[field])
        except (ValueError, SyntaxError):
            return None
    return None


def _safe_objects(path: Path, config: RulesConfig) -> dict[str, Any]:
    """``custom_objects`` for ``MaskablePPO.load`` that replace every pickled entry of the file;
    :class:`UntrustedFileError` when it pickles something else."""
    import gymnasium
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.utils import ConstantSchedule

    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SB3ModelError(f"{path} is not a saved SB3 model (a zip with a 'data' entry): {exc}") from None
    if not isinstance(data, dict):
        raise SB3ModelError(f"{path} is not a saved SB3 model: its 'data' entry is not a mapping")
    pickled = sorted(k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v)
    unknown = [k for k in pickled if k not in _REBUILT]
    if unknown:
        raise UntrustedFileError(
            f"{path} stores {unknown} as pickles, and unpickling an untrusted file can run arbitrary code; "
            f"if you made this file or trust it, load it with the spec 'sb3+trust:{path}'")
    shape = _readable(data.get("observation_space"), "_shape")
    encoder = _encoder_for(shape, config, path)
    n = _readable(data.get("action_space"), "n")
    if n is not None and n != config.num_actions:
        raise SB3ModelError(f"{path} has {n} actions, these rules have {config.num_actions}")
    low, high = encoder.bounds()
    rebuilt = {
        "policy_class": MaskableActorCriticPolicy,
        "observation_space": gymnasium.spaces.Box(low, high, dtype=np.float32),
        "action_space": gymnasium.spaces.Discrete(config.num_actions),
        "lr_schedule": ConstantSchedule(0.0), "clip_range": ConstantSchedule(0.2), "clip_range_vf": None,
        "rollout_buffer_class": MaskableRolloutBuffer, "_last_obs": None, "_last_episode_starts": None,
        "ep_info_buffer": None, "ep_success_buffer": None,
    }
    return {k: rebuilt[k] for k in pickled}


def _encoder_for(shape: Any, config: RulesConfig, path: Path) -> ObservationEncoder:
    """The encoder of the observation version a model of observation ``shape`` was trained on
    (the newest when the shape is not recorded)."""
    if shape is None:
        return ObservationEncoder(config)
    for version in reversed(VERSIONS):
        encoder = ObservationEncoder(config, version)
        if tuple(shape) == (encoder.size,):
            return encoder
    sizes = {f"v{v}": ObservationEncoder(config, v).size for v in VERSIONS}
    raise SB3ModelError(f"{path} was trained on observations of shape {tuple(shape)}, these rules give {sizes}")


class SB3Agent:
    """The most likely legal action of a MaskablePPO policy (deterministic: SB3 samples with
    torch's global generator, which would bypass the ``rng`` this protocol hands in)."""

    def __init__(self, path: str | Path, config: RulesConfig, name: str | None = None, trust: bool = False) -> None:
        from sb3_contrib import MaskablePPO

        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {path} (expected a MaskablePPO model .zip)")
        custom = None if trust else _safe_objects(path, config)
        try:
            self.model = MaskablePPO.load(str(path), device="cpu", custom_objects=custom)
        except (RuntimeError, KeyError, zipfile.BadZipFile) as exc:  # weights that do not fit the rebuilt policy
            raise SB3ModelError(f"{path} does not load as a MaskablePPO model for these rules: "
                             f"{str(exc).splitlines()[0][:300]}") from None
        self.config = config
        self.name = name or f"sb3:{path}"
        self.encoder = _encoder_for(self.model.observation_space.shape, config, path)
        actions = int(getattr(self.model.action_space, "n", -1))  # a Discrete space (SB3 types it as any Space)
        if actions != config.num_actions:
            raise SB3ModelError(f"{path} has {actions} actions, these rules have {config.num_actions}")

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        obs = self.encoder.select(observation["observation"])  # a model trained on an older version reads its part
        action, _ = self.model.predict(obs, action_masks=mask,
                                       deterministic=True)
        return int(action)
