"""Luck-corrected evaluation (AIVAT, training/luck.py): how much narrower its intervals are, what
it costs, and how many games each estimate needs for +-2 points of win rate.

For each lineup: the first agent's standard error of the win rate and of the mean points per
game, raw over seat-games (today's Wilson-style count, as if every game were independent), raw
over deal sets, and corrected over deal sets, at the same games; the games each needs for a 95%
half-width of 2 points of win rate; the playing time and the correction's time per game (the two
measured in the same run, in the same worker).

    python benchmarks/luck.py --deal-sets 100 --workers 2 --lineups network
    python benchmarks/luck.py --lineups network,search,heuristic,2p --json runs/luck.json
    python benchmarks/luck.py --lineups heuristic --rollouts 16 --deal-sets 50 --workers 2
"""

from __future__ import annotations

import argparse
import json
import math
import time

from cf_env import RulesConfig
from training.evaluate import evaluate

LINEUPS = {
    "network": (["zoo:strong-4p", "heuristic", "heuristic", "heuristic"], 4),
    "search": (["search:ms=0:sims=100", "heuristic", "heuristic", "heuristic"], 4),
    "search-timed": (["search", "heuristic", "heuristic", "heuristic"], 4),
    "heuristic": (["heuristic", "greedy", "greedy", "greedy"], 4),
    "2p": (["zoo:strong-2p", "heuristic"], 2),
}


def games_for(se: float, games: int, half_width: float = 0.02) -> int:
    """Games for a 95% half-width of ``half_width``, from a standard error ``se`` at ``games``."""
    return math.ceil(games * (1.96 * se / half_width) ** 2)


def measure(name: str, deal_sets: int, seed: int, workers: int, value: str | None = None, rollouts: int = 0) -> dict:
    lineup, players = LINEUPS[name]
    config = RulesConfig(num_players=players)
    start = time.perf_counter()
    report = evaluate(lineup, config, deal_sets=deal_sets, seed=seed, progress=False, workers=workers,
                      luck=value or True, luck_rollouts=rollouts)
    seconds = time.perf_counter() - start
    r = report.results[0]
    seat_games = r.seat_games
    out = {
        "lineup": lineup, "games": report.games, "deal_sets": deal_sets, "seed": seed, "workers": workers,
        "rollouts": rollouts,
        "win_rate": r.win_rate, "win_rate_ci95": r.win_rate_ci95, "win_rate_wilson_ci95": r.win_rate_wilson_ci95,
        "win_rate_corrected": r.win_rate_corrected, "win_rate_corrected_ci95": r.win_rate_corrected_ci95,
        "mean_points": r.mean_points, "mean_points_corrected": r.mean_points_corrected,
        "se": {"win_rate_seat_games": r.win_rate_seat_se, "win_rate_deal_sets": r.win_rate_se,
               "win_rate_corrected": r.win_rate_corrected_se, "mean_points_deal_sets": r.mean_points_se,
               "mean_points_corrected": r.mean_points_corrected_se, "mean_points_seat_games": r.mean_points_seat_se},
        "se_reduction_vs_seat_games": {
            "win_rate": 1 - r.win_rate_corrected_se / r.win_rate_seat_se if r.win_rate_seat_se else None,
            "mean_points": 1 - r.mean_points_corrected_se / r.mean_points_seat_se if r.mean_points_seat_se else None},
        "se_reduction_vs_deal_sets": {
            "win_rate": 1 - r.win_rate_corrected_se / r.win_rate_se if r.win_rate_se else None,
            "mean_points": 1 - r.mean_points_corrected_se / r.mean_points_se if r.mean_points_se else None},
        "games_for_2_points": {"raw_seat_games": games_for(r.win_rate_seat_se, seat_games),
                               "raw_deal_sets": games_for(r.win_rate_se, seat_games),
                               "corrected": games_for(r.win_rate_corrected_se, seat_games)},
        "ms_per_game": report.ms_per_game, "luck_ms_per_game": report.luck_ms_per_game,
        "cost_ratio": (report.ms_per_game + report.luck_ms_per_game) / report.ms_per_game,
        "wall_seconds": seconds,
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lineups", default="network", help=f"comma-separated, of {sorted(LINEUPS)}")
    parser.add_argument("--deal-sets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--value", default=None, help="a value function file [default: the rules' own]")
    parser.add_argument("--rollouts", type=int, default=0,
                        help="value the draws by this many compiled rollouts per boneyard tile (0: by the value function)")
    args = parser.parse_args()
    out = {}
    for name in args.lineups.split(","):
        if name not in LINEUPS:
            parser.error(f"unknown lineup {name!r}; choose from {sorted(LINEUPS)}")
        out[name] = measure(name, args.deal_sets, args.seed, args.workers, args.value, args.rollouts)
        print(json.dumps({name: out[name]}), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
