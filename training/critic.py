"""PPO's critic as a strategy: the value that the advantages (GAE) and the value loss use.

The default, :class:`Critic` (``critic: shared``), is the policy network's own value head, as in
CleanRL. Any other critic is named in a PPO config as an entry point, ``critic:
"package.module:Class"`` (as Gymnasium names an environment's), with ``critic_options`` its
keyword arguments; the class is a :class:`Critic`, usually a :class:`NetworkCritic` (a torch
module beside the policy network, with its own optimizer, annealed and checkpointed with the run).
A critic that sets :attr:`Critic.reads_hidden` is given what the seat cannot see (the opponents'
hands and the boneyard, :meth:`cf_env.vector.VectorGame.hidden_tiles`), which the policy never
reads. The repository's lab holds one, a perfect-information critic (``lab.critic``).

Only the policy network is saved as the agent; a separate critic's weights are kept in the
checkpoint's trainer state for ``--resume``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from agents.spec import AgentSpecError, import_target
from agents.torch_policy import ActorCritic
from cf_env import RulesConfig
from training.config import TrainConfigError

__all__ = ["Critic", "NetworkCritic", "make_critic"]


class Critic:
    """The shared critic: the policy network's own value head (the base of every critic). A
    subclass overrides :meth:`value` and, when it has weights of its own, the optimizer steps and
    state (:class:`NetworkCritic` does)."""

    #: whether it has weights of its own (then the warm-up updates, ``critic_warmup_updates``, train it alone)
    own_weights = False
    #: whether :meth:`value` reads ``hidden`` (the seat's unseen tiles, which the collector then gathers)
    reads_hidden = False

    def value(self, obs: torch.Tensor, hidden: torch.Tensor | None, head: torch.Tensor) -> torch.Tensor:
        """The value of each observation, given the policy network's own value ``head`` for it."""
        return head

    def start(self, model: ActorCritic) -> None:
        """Called once on a fresh run, after the policy network's warm start."""

    def zero_grad(self) -> None:
        """Before the loss's backward pass."""

    def step(self, max_grad_norm: float) -> None:
        """After it: clip and step the critic's own weights (the shared critic's are the model's)."""

    def set_learning_rate_fraction(self, fraction: float) -> None:
        """The learning-rate schedule: ``fraction`` of the critic's own rate."""

    def state_dict(self) -> dict[str, Any]:
        """What ``--resume`` needs (the shared critic's weights are the model's: nothing)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The state of :meth:`state_dict`."""


class NetworkCritic(Critic):
    """A critic that is a torch ``module`` of its own, ``module(obs, hidden) -> values``, trained by
    its own Adam at ``learning_rate`` (annealed with the policy's) and checkpointed for
    ``--resume``. The warm-up updates (``critic_warmup_updates``) train it alone."""

    own_weights = True

    def __init__(self, module: nn.Module, learning_rate: float) -> None:
        self.module = module
        self.learning_rate = learning_rate
        self.optimizer = torch.optim.Adam(module.parameters(), lr=learning_rate, eps=1e-5)

    def value(self, obs: torch.Tensor, hidden: torch.Tensor | None, head: torch.Tensor) -> torch.Tensor:
        return self.module(obs, hidden)

    def zero_grad(self) -> None:
        self.optimizer.zero_grad()

    def step(self, max_grad_norm: float) -> None:
        nn.utils.clip_grad_norm_(self.module.parameters(), max_grad_norm)
        self.optimizer.step()

    def set_learning_rate_fraction(self, fraction: float) -> None:
        self.optimizer.param_groups[0]["lr"] = fraction * self.learning_rate

    def state_dict(self) -> dict[str, Any]:
        return {"critic": self.module.state_dict(), "critic_optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.module.load_state_dict(state["critic"])
        self.optimizer.load_state_dict(state["critic_optimizer"])


def make_critic(name: str, options: dict[str, Any], rules: RulesConfig, obs_dim: int, hidden: tuple[int, ...],
                learning_rate: float, device: str | torch.device) -> Critic:
    """The critic a PPO config names: ``"shared"``, or ``"package.module:Class"`` built as
    ``Class(rules=..., obs_dim=..., hidden=..., learning_rate=..., device=..., **options)``."""
    if name == "shared":
        if options:
            raise TrainConfigError(f"critic_options {options} given to the shared critic, which takes none")
        return Critic()
    module_name, _, attribute = name.rpartition(":")
    if not module_name or not attribute:
        raise TrainConfigError(f"critic must be 'shared' or an entry point 'package.module:Class', got {name!r}")
    try:  # the agent specs' import: a module under the current folder works from the console script too
        cls = import_target(name)
    except (AgentSpecError, ImportError) as exc:
        raise TrainConfigError(f"critic {name!r} could not be imported: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Critic)):
        raise TrainConfigError(f"critic {name!r} is not a training.critic.Critic subclass")
    build: Callable[..., Critic] = cls  # a subclass's constructor takes these keywords
    try:
        return build(rules=rules, obs_dim=obs_dim, hidden=hidden, learning_rate=learning_rate, device=device, **options)
    except TypeError as exc:
        raise TrainConfigError(f"critic {name!r} does not take these critic_options {options}: {exc}") from None
