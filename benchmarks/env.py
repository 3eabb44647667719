"""AEC env throughput against two anchors measured in the same run: a do-nothing PettingZoo AEC env
of the same shape, and PettingZoo's connect_four_v3.

Random legal play through the standard loop (``agent_iter`` -> ``last()`` -> the mask's legal
actions -> ``step``), 4-player double-nine. The do-nothing env (:class:`DoNothingEnv`) is the
floor that loop allows: it follows PettingZoo's AEC template (an ``AgentSelector``, rewards
cleared and accumulated each step, a fresh observation dict of the same shapes from ``observe``)
and does nothing else. Prints JSON: decisions/s (median of ``--runs``, interleaved so that
machine noise hits every env alike) for our ``raw_env``, ``env()``, ``env(history=True)``, the
do-nothing env and connect_four's raw env and ``env()``, and the ratios.

    python benchmarks/env.py --steps 20000 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


def do_nothing_env(num_agents: int, obs_size: int, num_actions: int, game_length: int) -> Any:
    """An AEC env with our env's agents and spaces whose games last ``game_length`` decisions and
    do nothing: the per-decision floor of PettingZoo's loop (see the module docstring)."""
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector

    class DoNothingEnv(AECEnv):
        metadata = {"name": "do_nothing_v0"}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = [f"player_{i}" for i in range(num_agents)]
            self._obs = np.zeros(obs_size, np.float32)
            self._mask = np.ones(num_actions, np.int8)
            space = spaces.Dict({"observation": spaces.Box(0, 1, (obs_size,), np.float32),
                                 "action_mask": spaces.Box(0, 1, (num_actions,), np.int8)})
            self.observation_spaces = dict.fromkeys(self.possible_agents, space)
            self.action_spaces = dict.fromkeys(self.possible_agents, spaces.Discrete(num_actions))

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos = {a: {} for a in self.agents}
            self._selector = AgentSelector(self.agents)
            self.agent_selection = self._selector.next()
            self._decisions = 0

        def observe(self, agent: str) -> dict[str, np.ndarray]:
            return {"observation": np.array(self._obs), "action_mask": np.array(self._mask)}

        def step(self, action: int | None) -> None:
            if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self._cumulative_rewards[self.agent_selection] = 0.0
            self._decisions += 1
            if self._decisions >= game_length:
                self.terminations = dict.fromkeys(self.agents, True)
            self._clear_rewards()
            self.agent_selection = self._selector.next()
            self._accumulate_rewards()

    return DoNothingEnv()


def measure(make, steps: int, seed: int) -> float:
    env = make()
    rng = np.random.default_rng(seed)
    uniform = rng.random(steps + 1).tolist()
    env.reset(seed=seed)
    done = 0
    t0 = time.perf_counter()
    while done < steps:
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[int(uniform[done % steps] * len(legal))])
                done += 1
            env.step(action)
            if done >= steps:
                break
        env.reset(seed=seed + done)
    return done / (time.perf_counter() - t0)


def game_length(make, games: int = 20) -> int:
    """Mean decisions per game of random play (the do-nothing env's games last as long)."""
    env, decisions = make(), 0
    rng = np.random.default_rng(0)
    for g in range(games):
        env.reset(seed=g)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(obs["action_mask"].nonzero()[0])))
            decisions += 1
    return round(decisions / games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="decisions per run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3

    import cf_env

    ours = cf_env.raw_env()
    size, actions = ours.encoder.size, ours.num_actions
    length = game_length(lambda: cf_env.raw_env())
    makers = {
        "chicken_foot_raw_env": lambda: cf_env.raw_env(),
        "chicken_foot_env": lambda: cf_env.env(),
        "chicken_foot_env_history": lambda: cf_env.env(history=True),
        "do_nothing_aec_env": lambda: do_nothing_env(len(ours.possible_agents), size, actions, length),
        "connect_four_raw_env": lambda: connect_four_v3.raw_env(),
        "connect_four_env": lambda: connect_four_v3.env(),
    }
    for make in makers.values():  # warm-up
        measure(make, 2000, 0)
    runs: dict[str, list[float]] = {name: [] for name in makers}
    for r in range(args.runs):  # interleaved so that machine noise hits them all alike
        for name, make in makers.items():
            runs[name].append(measure(make, args.steps, r))
    med = {name: statistics.median(v) for name, v in runs.items()}

    def ratio(a: str, b: str) -> float:
        """The median over runs of the per-run ratio (each run measures both within seconds)."""
        return round(statistics.median(x / y for x, y in zip(runs[a], runs[b])), 2)

    out = {
        "benchmark": "env_random_play",
        "config": "4 players, double-nine, reward=win",
        "steps_per_run": args.steps,
        "runs": args.runs,
        "do_nothing_game_length": length,
        **{f"{name}_decisions_per_s_median": round(v) for name, v in med.items()},
        "raw_env_vs_do_nothing": ratio("chicken_foot_raw_env", "do_nothing_aec_env"),
        "env_vs_do_nothing": ratio("chicken_foot_env", "do_nothing_aec_env"),
        "raw_env_vs_connect_four_raw": ratio("chicken_foot_raw_env", "connect_four_raw_env"),
        "env_vs_connect_four_env": ratio("chicken_foot_env", "connect_four_env"),
        "env_history_vs_env": ratio("chicken_foot_env_history", "chicken_foot_env"),
        "per_run": {name: [round(x) for x in v] for name, v in runs.items()},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
