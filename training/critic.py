"""A perfect-information critic for PPO (``critic: privileged``): the value network also reads
what the seat cannot see, the opponents' hands and the boneyard, as PerfectDou's critic does;
the policy still reads the observation alone.

The critic only shapes the advantages during training: what is saved as the agent
(``final.pt``, every checkpoint's model) is the policy network, whose own value head is then left
as it was (the checkpoint's critic is kept beside it for ``--resume``). The hidden tiles come
from the engine: :meth:`cf_env.vector.VectorGame.hidden_tiles` for the batched collector,
:meth:`cf_env.engine.Game.hidden_tiles` for the AEC one.
"""

from __future__ import annotations

import torch
from torch import nn

from agents.torch_policy import observation_scale
from cf_env import RulesConfig

__all__ = ["PrivilegedCritic"]


class PrivilegedCritic(nn.Module):
    """``V(observation, hidden tiles)``: an MLP (tanh, as the policy network's trunk) over the
    scaled observation and the hidden tiles' flags."""

    def __init__(self, config: RulesConfig, obs_dim: int, hidden: tuple[int, ...] = (256, 256)) -> None:
        super().__init__()
        self.scale: torch.Tensor
        self.register_buffer("scale", torch.as_tensor(observation_scale(config)))
        width = obs_dim + config.num_players * config.num_tiles
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.body = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor, hidden_tiles: torch.Tensor) -> torch.Tensor:
        return self.body(torch.cat([obs / self.scale, hidden_tiles], -1)).squeeze(-1)
