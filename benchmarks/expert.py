"""Expert iteration's teacher: search decisions per second while collecting targets, and what a
decision costs, in one process (the trainer runs ``workers`` such processes side by side).

Plays ``--games`` games the way :mod:`training.expert` collects them (a student network in seat 0
and, with ``self_play_prob``, in the other seats; ``zoo:strong-4p`` as the student) and prints JSON:
teacher decisions/s, ms per teacher decision, samples per game, medians over ``--runs``.

    python benchmarks/expert.py --games 4 --runs 3 --teacher search:ms=0:sims=256
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def run(games: int, teacher: str, players: int, seed: int) -> dict[str, float]:
    import torch

    from agents import zoo_path
    from agents.checkpoint import load_checkpoint
    from cf_env import RulesConfig
    from training.expert import collect_games, collector_state
    from training.workers import WorkerPool

    torch.set_num_threads(1)  # one worker's share of the machine, as in a collection with workers
    config = RulesConfig(num_players=players)
    weights = load_checkpoint(zoo_path(f"strong-{players}p"))["model"]
    with WorkerPool(1, collector_state, (config.to_dict(), teacher, ["heuristic"], [256, 256])):
        start = time.perf_counter()
        out = collect_games(weights, list(range(seed, seed + games)),
                            {"self_play_prob": 0.5, "beta": 0.0, "target_temperature": 0.0, "gamma": 0.99})
        seconds = time.perf_counter() - start
    return {"teacher_decisions_per_second": out["teacher_decisions"] / seconds,
            "ms_per_teacher_decision": 1000 * out["teacher_seconds"] / max(out["teacher_decisions"], 1),
            "samples_per_game": out["teacher_decisions"] / games, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--teacher", default="search:ms=0:sims=256")
    args = parser.parse_args()
    runs = [run(args.games, args.teacher, args.players, seed=100 * k) for k in range(args.runs)]
    print(json.dumps({"teacher": args.teacher, "players": args.players, "games_per_run": args.games,
                      **{k: statistics.median(r[k] for r in runs) for k in runs[0]}}, indent=2))


if __name__ == "__main__":
    main()
