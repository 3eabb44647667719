"""AEC env throughput next to PettingZoo's connect_four_v3, measured in the same run.

Random legal play through the standard loop (``last()`` -> observation and mask -> ``step``),
4-player double-nine. Prints JSON: decisions/s (median of ``--runs``) for our ``raw_env``,
``env()`` and ``env(history=True)`` (the round's events in every observation) and for
connect_four's raw env and ``env()``, and the ratios.

    python benchmarks/env.py --steps 20000 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="decisions per run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3

    import cf_env

    makers = {
        "chicken_foot_raw_env": lambda: cf_env.raw_env(),
        "chicken_foot_env": lambda: cf_env.env(),
        "chicken_foot_env_history": lambda: cf_env.env(history=True),
        "connect_four_raw_env": lambda: connect_four_v3.raw_env(),
        "connect_four_env": lambda: connect_four_v3.env(),
    }
    for make in makers.values():  # warm-up
        measure(make, 2000, 0)
    runs = {name: [] for name in makers}
    for r in range(args.runs):  # interleaved so that machine noise hits them all alike
        for name, make in makers.items():
            runs[name].append(measure(make, args.steps, r))
    med = {name: statistics.median(v) for name, v in runs.items()}
    out = {
        "benchmark": "env_random_play",
        "config": "4 players, double-nine, reward=win",
        "steps_per_run": args.steps,
        "runs": args.runs,
        **{f"{name}_decisions_per_s_median": round(v) for name, v in med.items()},
        "raw_env_vs_connect_four_raw": round(med["chicken_foot_raw_env"] / med["connect_four_raw_env"], 2),
        "env_vs_connect_four_env": round(med["chicken_foot_env"] / med["connect_four_env"], 2),
        "env_history_vs_env": round(med["chicken_foot_env_history"] / med["chicken_foot_env"], 2),
        "per_run": {name: [round(x) for x in v] for name, v in runs.items()},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
