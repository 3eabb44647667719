"""TorchRL: self-play PPO through TorchRL's own ``PettingZooWrapper`` (AEC, one group of all seats).

    chickenfoot torchrl --frames 200000 --out runs/torchrl
    chickenfoot eval runs/torchrl/model.pt greedy --deal-sets 50

How the turn-based masks are handled (the usual stumbling blocks):

- ``PettingZooWrapper(..., use_mask=True, group_map={"players": [...]})`` gives every step a
  ``("players", "mask")`` row marking the one seat that acts, and ``("players", "action_mask")``
  where only that seat's row is the real mask — TorchRL fills the other seats' rows with all-True
  (never all-False, which would make ``MaskedCategorical`` produce NaNs).
- The policy samples an action for every seat (TorchRL steps only the acting seat's); the PPO
  loss must see only the acting rows, so after GAE the batch is cut to ``mask == True``.
- GAE runs per seat over every env step: rewards that land on a seat while others play (round
  ends, the game's end) are in its reward column at those steps, so they reach its last decision.

The policy network is this project's :class:`agents.torch_policy.ActorCritic` (policy head), so the
result is saved as a regular checkpoint that ``chickenfoot eval`` reads without TorchRL; a second
ActorCritic serves as the critic.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from agents.checkpoint import model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, observation_scale
from cf_env import ObservationEncoder, RulesConfig, raw_env

__all__ = ["GROUP", "make_env", "train"]

GROUP = "players"
OBS = (GROUP, "observation", "observation")


class _Head(nn.Module):
    """One head of an ActorCritic as a plain ``obs -> tensor`` module."""

    def __init__(self, net: ActorCritic, head: str) -> None:
        super().__init__()
        self.net = net
        self.head = head

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.net.features(obs)
        return self.net.policy(h) if self.head == "policy" else self.net.value(h)


def make_env(rules: RulesConfig, reward: str = "relative", seed: int | None = None):
    """TorchRL's PettingZooWrapper over our AEC env; illegal actions raise."""
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    aec = raw_env(config=rules, reward=reward, illegal_action="raise")
    env = PettingZooWrapper(aec, use_mask=True, group_map={GROUP: list(aec.possible_agents)},
                            categorical_actions=True, seed=seed)
    return env


def train(rules: RulesConfig, frames: int, out: Path, seed: int = 0, frames_per_batch: int = 1024,
          epochs: int = 4, minibatch: int = 256, lr: float = 3e-4, hidden: tuple[int, ...] = (256, 256),
          progress: bool = True, time_limit_minutes: float | None = None) -> dict[str, Any]:
    """Self-play PPO for ``frames`` env steps (or until ``time_limit_minutes`` of wall-clock time,
    checked after each update); writes ``out/model.pt`` (our format); returns a summary."""
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torchrl.collectors import Collector
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    enc = ObservationEncoder(rules)
    scale = observation_scale(rules)
    actor_net = ActorCritic(enc.size, rules.num_actions, tuple(hidden), obs_scale=scale)
    critic_net = ActorCritic(enc.size, rules.num_actions, tuple(hidden), obs_scale=scale)
    policy = ProbabilisticActor(
        TensorDictModule(_Head(actor_net, "policy"), in_keys=[OBS], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")}, out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical, return_log_prob=True, log_prob_key=(GROUP, "action_log_prob"))
    critic = TensorDictModule(_Head(critic_net, "value"), in_keys=[OBS], out_keys=[(GROUP, "state_value")])
    loss = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01,
                       normalize_advantage=True)
    loss.set_keys(reward=(GROUP, "reward"), action=(GROUP, "action"), sample_log_prob=(GROUP, "action_log_prob"),
                  value=(GROUP, "state_value"), done=(GROUP, "done"), terminated=(GROUP, "terminated"),
                  advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=lr)
    env = make_env(rules, seed=seed)
    collector = Collector(env, policy, frames_per_batch=frames_per_batch, total_frames=frames,
                          auto_register_policy_transforms=False)
    bar = tqdm(total=frames, desc="torchrl", unit="step", disable=not progress, dynamic_ncols=True)
    start = time.time()
    done_frames, decisions, updates = 0, 0, 0
    for data in collector:
        with torch.no_grad():
            loss.value_estimator(data, params=loss.critic_network_params, target_params=loss.target_critic_network_params)
        acting = data[GROUP]["mask"]
        assert bool((acting.sum(-1) == 1).all()), "exactly one seat acts per AEC step"
        rows = data[GROUP][acting]  # the acting seat of every step: what PPO learns from
        batch = TensorDict({GROUP: rows}, batch_size=rows.batch_size)
        for _ in range(epochs):
            for idx in torch.randperm(batch.shape[0]).split(minibatch):
                terms = loss(batch[idx])
                total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
                optim.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
                updates += 1
        done_frames += data.numel()
        decisions += int(acting.sum())
        bar.update(data.numel())
        if time_limit_minutes and time.time() - start >= time_limit_minutes * 60:
            break
    bar.close()
    collector.shutdown()
    seconds = time.time() - start
    out.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(out / "model.pt", model_payload(
        actor_net, rules, decisions, {"trainer": "torchrl-ppo", "frames": frames, "seed": seed}))
    return {"model": str(path), "frames": done_frames, "decisions": decisions, "updates": updates,
            "seconds": round(seconds, 1), "frames_per_second": round(done_frames / max(seconds, 1e-9), 1),
            "time_limit_minutes": time_limit_minutes, "rules": rules.to_dict()}
