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

from agents.torch_policy import ActorCritic, observation_scale
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

    @torch.no_grad()
    def start_from(self, model: ActorCritic) -> None:
        """Become ``model``'s own value function (``critic_init: policy``): its trunk and value head
        copied, the hidden tiles' input weights zero, so the critic starts where the policy
        network's value head is and learns what the hidden tiles add. ``model`` must read the
        newest observation with this critic's scale and have its layer widths."""
        if model.trunk_kind != "tanh":
            raise ValueError(f"critic_init: policy copies a tanh trunk into the critic; this network's trunk is "
                             f"{model.trunk_kind}")
        linears = [m for m in self.body if isinstance(m, nn.Linear)]
        theirs = [m for m in model.trunk if isinstance(m, nn.Linear)] + [model.value]
        if model.obs_index is not None or [m.out_features for m in theirs] != [m.out_features for m in linears]:
            raise ValueError(f"critic_init: policy needs a network of the newest observation with hidden "
                             f"{[m.out_features for m in linears[:-1]]}; the policy network has "
                             f"{[m.out_features for m in theirs[:-1]]}"
                             f"{' and reads an older observation' if model.obs_index is not None else ''}")
        if not torch.equal(model.obs_scale.cpu(), self.scale.cpu()):
            raise ValueError("critic_init: policy needs the policy network to scale observations as the critic does")
        first, obs_dim = linears[0], model.obs_dim
        first.weight.zero_()
        first.weight[:, :obs_dim] = theirs[0].weight
        first.bias.copy_(theirs[0].bias)
        for mine, other in zip(linears[1:], theirs[1:]):
            mine.weight.copy_(other.weight)
            mine.bias.copy_(other.bias)

    def forward(self, obs: torch.Tensor, hidden_tiles: torch.Tensor) -> torch.Tensor:
        return self.body(torch.cat([obs / self.scale, hidden_tiles], -1)).squeeze(-1)
