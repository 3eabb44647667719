"""Batched engine throughput: decisions/s with observation and mask, by batch size.

Random legal actions (drawn from the mask with numpy) in 4-player double-nine; the time includes
the action choice, the step, the observation and the mask of every game. Prints JSON: per batch
size, the median of ``--runs`` runs, plus memory per game (state arrays and outputs). By default
each batch runs as ``VectorGame`` chooses (numba's threads from ``PARALLEL_MIN_GAMES`` games);
``--compare-threads`` measures both kernels at every size, runs interleaved, with their ratio.

    python benchmarks/vector.py --batches 1 16 256 4096 --runs 5
    python benchmarks/vector.py --batches 8 16 32 64 128 256 --compare-threads
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from cf_env import RulesConfig
from cf_env.vector import VectorGame, random_legal_actions


def measure(config: RulesConfig, batch: int, decisions: int, seed: int, parallel: bool | None = None) -> float:
    vg = VectorGame(config, num_games=batch, reward="relative", seed=seed, parallel=parallel)
    obs, mask, seat = vg.reset()
    rng = np.random.default_rng(seed)
    steps = max(50, decisions // batch)
    for _ in range(20):  # warm-up
        obs, mask, seat, rew, done = vg.step(random_legal_actions(mask, rng))
    t0 = time.perf_counter()
    for _ in range(steps):
        obs, mask, seat, rew, done = vg.step(random_legal_actions(mask, rng))
    return steps * batch / (time.perf_counter() - t0)


def memory_per_game(config: RulesConfig, batch: int) -> float:
    vg = VectorGame(config, num_games=batch)
    return vg.nbytes / batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256, 4096])
    parser.add_argument("--decisions", type=int, default=400_000, help="decisions per run (at least 50 steps)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compare-threads", action="store_true",
                        help="measure the threaded and the one-thread kernels at every batch size")
    args = parser.parse_args()
    config = RulesConfig()
    for parallel in (True, False):
        measure(config, 16, 1000, 0, parallel)  # compile / load the numba cache
    table: dict[str, dict] = {}
    for batch in args.batches:
        if not args.compare_threads:
            runs = [measure(config, batch, args.decisions, r) for r in range(args.runs)]
            table[str(batch)] = {"decisions_per_s_median": round(statistics.median(runs)),
                                 "threads": VectorGame(config, num_games=batch).parallel,
                                 "runs": [round(x) for x in runs]}
            continue
        pairs = [(measure(config, batch, args.decisions, r, True), measure(config, batch, args.decisions, r, False))
                 for r in range(args.runs)]
        threaded, serial = [p[0] for p in pairs], [p[1] for p in pairs]
        table[str(batch)] = {"threaded_median": round(statistics.median(threaded)),
                             "one_thread_median": round(statistics.median(serial)),
                             "threaded_over_one_thread": round(statistics.median(t / s for t, s in pairs), 3),
                             "default_threads": VectorGame(config, num_games=batch).parallel}
    import numba

    out = {
        "benchmark": "vector_random_play_with_obs_and_mask",
        "config": "4 players, double-nine, 10 rounds, reward=relative",
        "runs": args.runs,
        "numba_threads": numba.get_num_threads(),
        "by_batch": table,
        "bytes_per_game": round(memory_per_game(config, 4096)),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
