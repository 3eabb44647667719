"""An action-masking PPO RLModule for RLlib's new API stack, built on RLlib's public
``DefaultPPOTorchRLModule`` (RLlib's own masking module lives in its examples, is not public API
and mutates the batch it is given; this one does neither).

It expects the observation space of :class:`cf_env.integrations.rllib.ChickenFootMultiAgentEnv`:
``Dict(observations=Box, action_mask=Box(0, 1))``. The networks (RLlib's catalog: MLP encoder, pi
and value heads, sized by ``model_config``) see only ``observations``; the mask sets the logits of
illegal actions to the dtype's minimum in every forward pass (inference, exploration and training),
so sampling and log-probabilities never touch an illegal action.

    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    spec = RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config={"fcnet_hiddens": [256, 256]})
"""

from __future__ import annotations

from typing import Any

import gymnasium
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns

from cf_env.integrations.rllib import MASK_KEY, OBS_KEY  # the env adapter defines the keys once

__all__ = ["MaskedPPOTorchRLModule", "OBS_KEY", "MASK_KEY"]


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """``DefaultPPOTorchRLModule`` over the ``observations`` entry, with masked action logits."""

    def __init__(self, *args: Any, observation_space: gymnasium.Space | None = None, **kwargs: Any) -> None:
        if not (isinstance(observation_space, gymnasium.spaces.Dict)
                and {OBS_KEY, MASK_KEY} <= set(observation_space.spaces)):
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with keys "
                             f"{OBS_KEY!r} and {MASK_KEY!r} (ChickenFootMultiAgentEnv's), got {observation_space}")
        self._space_with_mask = observation_space
        # the catalog builds the encoder for the inner observation only
        super().__init__(*args, observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """A shallow copy of ``batch`` whose OBS is the inner observation, and the mask."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict) or MASK_KEY not in obs:
            raise ValueError(f"MaskedPPOTorchRLModule: the batch's observations must be a dict with "
                             f"{OBS_KEY!r} and {MASK_KEY!r}; got {type(obs).__name__}")
        inner = dict(batch)
        inner[Columns.OBS] = obs[OBS_KEY]
        return inner, obs[MASK_KEY]

    @staticmethod
    def _mask(out: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask <= 0, torch.finfo(logits.dtype).min)
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None and isinstance(batch[Columns.OBS], dict):
            batch, _ = self._split(batch)
        return super().compute_values(batch, embeddings)
