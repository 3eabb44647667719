"""Tianshou 2.x: masked DQN for one seat against chosen opponents; exports to our checkpoint format.

    chickenfoot tianshou --steps 50000 --opponents greedy --out runs/tianshou
    chickenfoot eval runs/tianshou/model.pt greedy --deal-sets 50

The Q-network is this project's :class:`agents.torch_policy.ActorCritic` (its policy head gives the
Q-values), so the trained weights are saved as a regular checkpoint that ``chickenfoot eval`` and
``agents.load`` read without Tianshou: ``TorchAgent`` plays the legal action with the highest Q.
Tianshou's DQN masks Q-values with ``obs.mask`` when acting and when computing targets; its own
PettingZoo wrapper is not used, see :mod:`cf_env.integrations.tianshou` for why.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.checkpoint import model_payload, save_checkpoint
from agents.opponents import single_env_vs
from agents.torch_policy import ActorCritic, observation_scale
from cf_env import ObservationEncoder, RulesConfig
from cf_env.integrations.tianshou import TianshouObservation

__all__ = ["QNetwork", "make_env", "train"]


class QNetwork(nn.Module):
    """Tianshou's model protocol ``(obs, state, info) -> (q_values, state)`` over an ActorCritic."""

    def __init__(self, net: ActorCritic) -> None:
        super().__init__()
        self.net = net

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        x = torch.as_tensor(np.asarray(obs), dtype=torch.float32)
        return self.net.heads(x)[0], state


def make_env(rules: RulesConfig, opponents: list[str], illegal_action: str = "raise") -> TianshouObservation:
    return TianshouObservation(single_env_vs(rules, opponents, reward="relative", illegal_action=illegal_action))


def train(rules: RulesConfig, opponents: list[str], steps: int, out: Path, seed: int = 0, num_envs: int = 4,
          hidden: tuple[int, ...] = (256, 256), progress: bool = True,
          time_limit_minutes: float | None = None) -> dict[str, Any]:
    """Train for ``steps`` learner decisions; write ``out/model.pt`` (our format); return a summary.
    ``time_limit_minutes`` stops the run at that wall-clock time: the steps are then run as epochs
    of 1,000, and the trainer's ``stop_fn`` ends it after the epoch in which the time ran out."""
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    torch.manual_seed(seed)
    np.random.seed(seed)  # Tianshou's epsilon-greedy draws from numpy's global generator
    enc = ObservationEncoder(rules)
    net = ActorCritic(enc.size, rules.num_actions, tuple(hidden), obs_scale=observation_scale(rules))
    train_envs = DummyVectorEnv([lambda: make_env(rules, opponents) for _ in range(num_envs)])
    test_envs = DummyVectorEnv([lambda: make_env(rules, opponents) for _ in range(2)])
    train_envs.seed(seed)
    test_envs.seed(seed + 10_000)
    probe = make_env(rules, opponents)
    policy = DiscreteQLearningPolicy(model=QNetwork(net), action_space=probe.action_space,
                                     observation_space=probe.observation_space, eps_training=0.1, eps_inference=0.0)
    algo = DQN(policy=policy, optim=AdamOptimizerFactory(lr=5e-4), gamma=0.99, n_step_return_horizon=3,
               target_update_freq=200)
    train_collector: Collector[Any] = Collector(algo, train_envs, VectorReplayBuffer(50_000, num_envs),
                                                exploration_noise=True)
    test_collector: Collector[Any] = Collector(algo, test_envs, exploration_noise=False)
    train_collector.reset()
    train_collector.collect(n_step=min(1000, steps))  # warm-up transitions before the first update
    start = time.time()
    chunk = min(steps, 1000) if time_limit_minutes else steps
    deadline = time.monotonic() + (time_limit_minutes or 0) * 60
    result = algo.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=test_collector, max_epochs=-(-steps // chunk),
        epoch_num_steps=chunk, collection_step_num_env_steps=4 * num_envs,
        stop_fn=(lambda _reward: time.monotonic() >= deadline) if time_limit_minutes else None,
        update_step_num_gradient_steps_per_sample=0.25, test_step_num_episodes=2, batch_size=64,
        show_progress=progress, verbose=False))
    seconds = time.time() - start
    out.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(out / "model.pt", model_payload(
        net, rules, train_collector.collect_step,
        {"trainer": "tianshou-dqn", "opponents": list(opponents), "steps": steps, "seed": seed}))
    return {"model": str(path), "steps": int(train_collector.collect_step), "seconds": round(seconds, 1),
            "steps_per_second": round(train_collector.collect_step / max(seconds, 1e-9), 1),
            "gradient_steps": int(result.update_step), "time_limit_minutes": time_limit_minutes,
            "rules": rules.to_dict(), "opponents": list(opponents)}
