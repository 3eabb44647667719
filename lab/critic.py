"""A perfect-information critic for PPO (lab/results/critic.md): the value network also reads what
the seat cannot see, the opponents' hands and the boneyard, as PerfectDou's critic does; the
policy still reads the observation alone. A plug-in of :mod:`training.critic`, named in a PPO
config (from a checkout, where ``lab`` imports)::

    critic: lab.critic:PrivilegedCritic
    critic_options: {init: policy}   # or fresh (the default)

The critic only shapes the advantages during training: what is saved as the agent (``final.pt``,
every checkpoint's model) is the policy network, whose own value head is then left as it was
(the critic is kept in the checkpoint's trainer state for ``--resume``). The hidden tiles come
from the engine: :meth:`cf_env.vector.VectorGame.hidden_tiles` for the batched collector,
``raw_env.hidden_tiles`` for the AEC one.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from agents.torch_policy import ActorCritic, observation_scale
from cf_env import RulesConfig
from training.config import TrainConfigError
from training.critic import NetworkCritic

__all__ = ["PrivilegedCritic", "PrivilegedValue"]


class PrivilegedValue(nn.Module):
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
        """Become ``model``'s own value function (``init: policy``): its trunk and value head
        copied, the hidden tiles' input weights zero, so the critic starts where the policy
        network's value head is and learns what the hidden tiles add. ``model`` must read the
        newest observation with this critic's scale and have its layer widths."""
        if model.trunk_kind != "tanh":
            raise ValueError(f"init: policy copies a tanh trunk into the critic; this network's trunk is "
                             f"{model.trunk_kind}")
        linears = [m for m in self.body if isinstance(m, nn.Linear)]
        theirs = [m for m in model.trunk if isinstance(m, nn.Linear)] + [model.value]
        if model.obs_index is not None or [m.out_features for m in theirs] != [m.out_features for m in linears]:
            raise ValueError(f"init: policy needs a network of the newest observation with hidden "
                             f"{[m.out_features for m in linears[:-1]]}; the policy network has "
                             f"{[m.out_features for m in theirs[:-1]]}"
                             f"{' and reads an older observation' if model.obs_index is not None else ''}")
        if not torch.equal(model.obs_scale.cpu(), self.scale.cpu()):
            raise ValueError("init: policy needs the policy network to scale observations as the critic does")
        first, obs_dim = linears[0], model.obs_dim
        first.weight.zero_()
        first.weight[:, :obs_dim] = theirs[0].weight
        first.bias.copy_(theirs[0].bias)
        for mine, other in zip(linears[1:], theirs[1:]):
            mine.weight.copy_(other.weight)
            mine.bias.copy_(other.bias)

    def forward(self, obs: torch.Tensor, hidden_tiles: torch.Tensor) -> torch.Tensor:
        return self.body(torch.cat([obs / self.scale, hidden_tiles], -1)).squeeze(-1)


class PrivilegedCritic(NetworkCritic):
    """The perfect-information critic as PPO's critic strategy: :class:`PrivilegedValue` with its own
    Adam; ``init`` ``"fresh"`` (random weights) or ``"policy"`` (the warm-started policy network's
    own value function, :meth:`PrivilegedValue.start_from`)."""

    reads_hidden = True

    def __init__(self, rules: RulesConfig, obs_dim: int, hidden: tuple[int, ...], learning_rate: float,
                 device: str | torch.device, init: Literal["fresh", "policy"] = "fresh") -> None:
        if init not in ("fresh", "policy"):
            raise TrainConfigError(f"critic_options init must be 'fresh' or 'policy', got {init!r}")
        self.network = PrivilegedValue(rules, obs_dim, hidden).to(device)
        super().__init__(self.network, learning_rate)
        self.init = init

    def start(self, model: ActorCritic) -> None:
        if self.init == "policy":
            self.network.start_from(model)
