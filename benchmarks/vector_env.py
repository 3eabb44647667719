"""The Gymnasium vector env against Gymnasium's ``SyncVectorEnv`` of single-agent views, in one run.

Learner steps per second (one learner decision in every game, the opponents' decisions until the
learner's next one included; the learner plays uniformly random legal actions, drawn the same way
in both), 4-player double-nine, with three opponents of each kind in ``--opponents``:

- ``vector``: ``cf_env.vector_env(--num-envs, opponents=...)`` (the batched engine; the opponents
  act in one batch per seat);
- ``sync``: ``gymnasium.vector.SyncVectorEnv`` of ``--sync-envs`` ``gymnasium.make("ChickenFoot-v1")``
  views with the same opponents (one Python call per opponent decision).

With ``--sb3``: sb3-contrib MaskablePPO's env steps per second over ``model.learn`` (rollouts and
updates), on ``cf_env.integrations.sb3.ChickenFootVecEnv`` against SB3's ``DummyVecEnv`` of the
single-agent views, both with the same rollout size (``n_steps * num_envs`` = 16384), minibatch
2048 and 2 epochs, three heuristic opponents.

Runs are interleaved (vector, sync, vector, ...) so that a noisy machine slows both; prints JSON
with each figure's median over ``--runs`` and the median of the per-run ratios.

    python benchmarks/vector_env.py --runs 3 --opponents heuristic zoo:strong-4p --sb3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import gymnasium
import numpy as np

import agents
import cf_env
from cf_env import RulesConfig
from cf_env.vector import random_legal_actions

CONFIG = RulesConfig()


def vector_rate(opponent: str, num_envs: int, seconds: float, seed: int) -> float:
    envs = cf_env.vector_env(num_envs, opponents=opponent, learner_seat="random", reward="relative", config=CONFIG)
    return _rate(envs, seconds, seed)


def sync_rate(opponent: str, num_envs: int, seconds: float, seed: int) -> float:
    def make() -> gymnasium.Env:
        agent = agents.load(opponent, CONFIG)
        return gymnasium.make("ChickenFoot-v1", opponents=[agent] * 3, learner_seat="random", reward="relative",
                              config=CONFIG)

    envs = gymnasium.vector.SyncVectorEnv([make for _ in range(num_envs)],
                                          autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    return _rate(envs, seconds, seed)


def _rate(envs: gymnasium.vector.VectorEnv, seconds: float, seed: int) -> float:
    """Learner steps a second of ``envs`` for about ``seconds``, the learner random legal, after a warm-up."""
    _, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        _, _, _, _, info = envs.step(random_legal_actions(info["action_mask"], rng))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, _, _, info = envs.step(random_legal_actions(info["action_mask"], rng))
        steps += envs.num_envs
    return steps / (time.perf_counter() - start)


def sb3_rate(vector: bool, seed: int, rollouts: int = 2) -> float:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cf_env.integrations.sb3 import ChickenFootVecEnv
    from training.sb3_maskable_ppo import make_env

    if vector:
        env: Any = ChickenFootVecEnv(1024, opponents="heuristic", learner_seat="random", reward="relative",
                                     obs_type="box", config=CONFIG)
        n_steps = 16
    else:
        env = DummyVecEnv([lambda: make_env(CONFIG, ["heuristic"]) for _ in range(8)])
        n_steps = 2048
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=2048, n_epochs=2, seed=seed, device="cpu",
                        policy_kwargs={"net_arch": [256, 256]})
    model.learn(total_timesteps=16384)  # warm-up: the first rollout and update
    start = time.perf_counter()
    model.learn(total_timesteps=16384 * rollouts, reset_num_timesteps=False)
    return 16384 * rollouts / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponents", nargs="+", default=["heuristic"])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--sync-envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8.0, help="time per measurement")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sb3", action="store_true", help="also MaskablePPO's env steps/s on both")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # the networks' batches are small; as the trainers set it
    out: dict[str, Any] = {"cpus": os.cpu_count(), "num_envs": args.num_envs, "sync_envs": args.sync_envs,
                           "seconds_per_run": args.seconds, "runs": args.runs, "learner_steps_per_s": {}}
    for opponent in args.opponents:
        vector_rate(opponent, 64, 1.0, 0)  # compile / load the caches
        vec, sync = [], []
        for r in range(args.runs):
            vec.append(vector_rate(opponent, args.num_envs, args.seconds, r))
            sync.append(sync_rate(opponent, args.sync_envs, args.seconds, r))
        out["learner_steps_per_s"][opponent] = {
            "vector_env": round(statistics.median(vec)), "sync_vector_env": round(statistics.median(sync)),
            "ratio_median": round(statistics.median(v / s for v, s in zip(vec, sync)), 1),
            "vector_runs": [round(v) for v in vec], "sync_runs": [round(s) for s in sync]}
        print(json.dumps({opponent: out["learner_steps_per_s"][opponent]}), flush=True)
    if args.sb3:
        vec, dummy = [], []
        for r in range(args.runs):
            vec.append(sb3_rate(True, r))
            dummy.append(sb3_rate(False, r))
        out["sb3_maskable_ppo_env_steps_per_s"] = {
            "vec_env_1024": round(statistics.median(vec)), "dummy_vec_env_8": round(statistics.median(dummy)),
            "ratio_median": round(statistics.median(v / d for v, d in zip(vec, dummy)), 1),
            "vec_runs": [round(v) for v in vec], "dummy_runs": [round(d) for d in dummy]}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
