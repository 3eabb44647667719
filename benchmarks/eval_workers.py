"""Evaluation throughput against worker processes: games per second for a network, the heuristic
and the search agent, each against three heuristic players, with 1 and 2 workers (``--workers``).

Prints JSON: per agent and worker count, the median over ``--runs`` runs of games/s and of the
agent's ms per decision. Spawned workers run one torch and one numba thread each
(:class:`training.workers.WorkerPool`), so two workers on two cores should not be slower than one.

    python benchmarks/eval_workers.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from cf_env import RulesConfig
from training.evaluate import evaluate

AGENTS = {"network": "zoo:strong-4p", "heuristic": "heuristic", "search": "search:ms=0:sims=8"}


def measure(spec: str, workers: int, deal_sets: int, seed: int) -> tuple[float, float]:
    config = RulesConfig(rounds=2)
    start = time.perf_counter()
    report = evaluate([spec, "heuristic", "heuristic", "heuristic"], config, deal_sets=deal_sets, seed=seed,
                      progress=False, workers=workers)
    seconds = time.perf_counter() - start
    return report.games / seconds, report.results[0].ms_per_decision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deal-sets", type=int, default=20, help="per run (x4 seat rotations = games)")
    args = parser.parse_args()
    out: dict[str, dict] = {}
    for name, spec in AGENTS.items():
        for workers in (1, 2):
            runs = [measure(spec, workers, args.deal_sets, seed=r) for r in range(args.runs)]
            out[f"{name}/workers={workers}"] = {
                "spec": spec, "games_per_s_median": round(statistics.median(r[0] for r in runs), 1),
                "ms_per_decision_median": round(statistics.median(r[1] for r in runs), 3),
                "games_per_s_runs": [round(r[0], 1) for r in runs]}
    print(json.dumps({"benchmark": "eval_games_per_second_vs_workers",
                      "config": "4 players, double-nine, 2 rounds; the agent in one seat vs 3 heuristic",
                      "deal_sets_per_run": args.deal_sets, "results": out}, indent=1))


if __name__ == "__main__":
    main()
