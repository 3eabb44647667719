"""Engine throughput and memory: random legal play over full games.

Prints one JSON object: decisions/s and games/s (median of ``--runs`` runs), and memory per live
game (tracemalloc over ``--live`` games each stopped at a random decision).

    python benchmarks/engine.py --players 4 --max-pip 9 --games 200 --runs 5
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import tracemalloc

import numpy as np

from cf_env import Game
from cf_env.engine import RulesConfig, action_table


def play_random(game: Game, uniform: list[float], start: int) -> int:
    """Random legal play to the end; ``uniform`` supplies the random numbers. Returns decisions."""
    i = start
    size = len(uniform)
    bits_to_actions = action_table(game.config.max_pip).bits_to_actions
    apply = game.apply
    while not game.is_over:
        legal = bits_to_actions(game.legal_bits)
        apply(legal[int(uniform[i % size] * len(legal))])
        i += 1
    return i - start


def run(config: RulesConfig, games: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    uniform = rng.random(1 << 16).tolist()
    decisions = 0
    t0 = time.perf_counter()
    for _ in range(games):
        decisions += play_random(Game(config, seed=rng), uniform, decisions)
    dt = time.perf_counter() - t0
    return {"decisions_per_s": decisions / dt, "games_per_s": games / dt, "decisions_per_game": decisions / games}


def memory_per_game(config: RulesConfig, live: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    uniform = rng.random(1 << 16)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = []
    for g in range(live):
        game = Game(config, seed=int(rng.integers(1 << 31)))
        stop = int(rng.integers(0, 600))
        for i in range(stop):
            if game.is_over:
                break
            legal = game.legal_actions()
            game.apply(legal[int(uniform[(g * 600 + i) % len(uniform)] * len(legal))])
        kept.append(game)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / live


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--max-pip", type=int, default=9)
    parser.add_argument("--games", type=int, default=200, help="games per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--live", type=int, default=500, help="games held for the memory figure")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = RulesConfig(num_players=args.players, max_pip=args.max_pip)
    run(config, max(1, args.games // 10), args.seed)  # warm-up
    results = [run(config, args.games, args.seed + r) for r in range(args.runs)]
    out = {
        "benchmark": "engine_random_play",
        "config": config.to_dict(),
        "runs": args.runs,
        "games_per_run": args.games,
        "decisions_per_s_median": statistics.median(r["decisions_per_s"] for r in results),
        "decisions_per_s_runs": [round(r["decisions_per_s"]) for r in results],
        "games_per_s_median": statistics.median(r["games_per_s"] for r in results),
        "decisions_per_game_mean": statistics.mean(r["decisions_per_game"] for r in results),
        "bytes_per_live_game": round(memory_per_game(config, args.live, args.seed)),
        "python": platform.python_version(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
