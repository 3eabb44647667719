"""Evaluation throughput against worker processes: wall seconds of one evaluation (the agent in
one seat against three heuristic players, ``--deal-sets`` duplicate deal sets) with 1 worker and
with 2, for a network and for the heuristic.

Two workers are measured twice: *cold* (the first evaluation: the workers are spawned, import the
package and load the agents) and *warm* (the next evaluation of the same rules: the workers stay,
:func:`training.workers.shared_pool`, and only load the agents). Runs are interleaved
(1, 2 cold, 2 warm, for each agent in turn) so that machine noise hits them alike; the speedups
are per run, then the median over ``--runs``. Prints JSON.

    python benchmarks/eval_workers.py --runs 3              # 500 deal sets of full games
    python benchmarks/eval_workers.py --deal-sets 40 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from cf_env import RulesConfig
from training.evaluate import evaluate
from training.workers import close_shared_pools

AGENTS = {"network": "zoo:strong-4p", "heuristic": "heuristic"}


def seconds(spec: str, config: RulesConfig, workers: int, deal_sets: int, seed: int) -> tuple[float, float]:
    """Wall seconds of one evaluation, and the agent's ms per decision."""
    start = time.perf_counter()
    report = evaluate([spec, "heuristic", "heuristic", "heuristic"], config, deal_sets=deal_sets, seed=seed,
                      progress=False, workers=workers)
    return time.perf_counter() - start, report.results[0].ms_per_decision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--deal-sets", type=int, default=500, help="per evaluation (x4 seat rotations = games)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per game [default: the full game]")
    args = parser.parse_args()
    config = RulesConfig(rounds=args.rounds)
    out: dict[str, dict] = {}
    for name, spec in AGENTS.items():
        rows: dict[str, list[float]] = {"1": [], "2_cold": [], "2_warm": []}
        ms = []
        for r in range(args.runs):
            one, ms_one = seconds(spec, config, 1, args.deal_sets, r)
            close_shared_pools()
            cold, _ = seconds(spec, config, 2, args.deal_sets, r)
            warm, _ = seconds(spec, config, 2, args.deal_sets, r + 1000)
            close_shared_pools()
            rows["1"].append(one)
            rows["2_cold"].append(cold)
            rows["2_warm"].append(warm)
            ms.append(ms_one)
        out[name] = {
            "spec": spec,
            **{f"seconds_workers_{k}": [round(x, 2) for x in v] for k, v in rows.items()},
            "games_per_s_one_worker_median": round(4 * args.deal_sets / statistics.median(rows["1"]), 1),
            "speedup_2_cold_median": round(statistics.median(a / b for a, b in zip(rows["1"], rows["2_cold"])), 3),
            "speedup_2_warm_median": round(statistics.median(a / b for a, b in zip(rows["1"], rows["2_warm"])), 3),
            "ms_per_decision_median": round(statistics.median(ms), 3),
        }
    print(json.dumps({"benchmark": "eval_wall_seconds_vs_workers",
                      "config": f"4 players, double-nine, {config.rounds} rounds; the agent in one seat vs 3 heuristic",
                      "deal_sets": args.deal_sets, "runs": args.runs, "results": out}, indent=1))


if __name__ == "__main__":
    main()
