"""Luck-corrected evaluation (AIVAT, lab/luck/): how much narrower its intervals are, what
it costs, and how many games each estimate needs for +-2 points of win rate.

For each lineup: the first agent's standard error of the win rate and of the mean points per
game, raw over seat-games (today's Wilson-style count, as if every game were independent), raw
over deal sets, and corrected over deal sets, at the same games; the games each needs for a 95%
half-width of 2 points of win rate; the playing time and the correction's time per game (the two
measured in the same run, in the same worker).

``--floor`` measures instead how much of the spread is the luck of the draws, the most any
draw-term correction could take out whatever its value function: every deal set's hands (and each
round's R6 search for the starting double, which every seat rotation sees alike) are kept and the
rest of each round's boneyard is shuffled afresh ``--reshuffles`` times, the games played on the
batched engine. The first agent's result per deal set (its mean over the seat rotations) splits
into the part the boneyard's order decides (its variance within a deal set) and the part the deals
decide (the variance of its mean over reshuffles between deal sets, less the within part's
share). An exact draw correction (``v`` the true expected result under the lineup's own policies)
leaves only the second: ``floor_se_ratio`` is its standard error over the raw one's at the same
games. Its agents must act in batches (random, greedy, heuristic, checkpoints: not the search
lineups).

    python -m lab.benchmarks.luck --deal-sets 100 --workers 2 --lineups network
    python -m lab.benchmarks.luck --lineups network,search,heuristic,2p --json runs/luck.json
    python -m lab.benchmarks.luck --lineups heuristic --rollouts 16 --deal-sets 50 --workers 2
    python -m lab.benchmarks.luck --floor --lineups network,heuristic,2p --deal-sets 400 --reshuffles 16
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

import agents
from agents.base import act_batch
from cf_env import RulesConfig
from cf_env.vector import VectorGame
from lab.luck import luck_evaluate
from training.evaluate import generate_deals

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
    luck = luck_evaluate(lineup, config, deal_sets=deal_sets, seed=seed, progress=False, workers=workers,
                         value=value, rollouts=rollouts)
    seconds = time.perf_counter() - start
    report = luck.report
    r = report.results[0]
    c = luck.corrected[r.spec]
    seat_games = r.seat_games
    out = {
        "lineup": lineup, "games": report.games, "deal_sets": deal_sets, "seed": seed, "workers": workers,
        "rollouts": rollouts,
        "win_rate": r.win_rate, "win_rate_ci95": r.win_rate_ci95, "win_rate_wilson_ci95": r.win_rate_wilson_ci95,
        "win_rate_corrected": c["win_rate"], "win_rate_corrected_ci95": c["win_rate_ci95"],
        "mean_points": r.mean_points, "mean_points_corrected": c["mean_points"],
        "se": {"win_rate_seat_games": r.win_rate_seat_se, "win_rate_deal_sets": r.win_rate_se,
               "win_rate_corrected": c["win_rate_se"], "mean_points_deal_sets": r.mean_points_se,
               "mean_points_corrected": c["mean_points_se"], "mean_points_seat_games": r.mean_points_seat_se},
        "se_reduction_vs_seat_games": {
            "win_rate": 1 - c["win_rate_se"] / r.win_rate_seat_se if r.win_rate_seat_se else None,
            "mean_points": 1 - c["mean_points_se"] / r.mean_points_seat_se if r.mean_points_seat_se else None},
        "se_reduction_vs_deal_sets": {
            "win_rate": 1 - c["win_rate_se"] / r.win_rate_se if r.win_rate_se else None,
            "mean_points": 1 - c["mean_points_se"] / r.mean_points_se if r.mean_points_se else None},
        "games_for_2_points": {"raw_seat_games": games_for(r.win_rate_seat_se, seat_games),
                               "raw_deal_sets": games_for(r.win_rate_se, seat_games),
                               "corrected": games_for(c["win_rate_se"], seat_games)},
        "ms_per_game": report.ms_per_game, "luck_ms_per_game": luck.ms_per_game,
        "cost_ratio": (report.ms_per_game + luck.ms_per_game) / report.ms_per_game,
        "wall_seconds": seconds,
    }
    return out


def reshuffled(deals: list[dict], config: RulesConfig, rng: np.random.Generator) -> list[dict]:
    """``deals`` with each round's boneyard shuffled below the tiles R6's search draws."""
    out = []
    for r, deal in enumerate(deals):
        bone = [list(t) for t in deal["boneyard"]]
        start = [config.max_pip - r] * 2
        keep = next((i + 1 for i, tile in enumerate(bone) if tile == start), 0)  # 0: the double was dealt
        tail = [bone[keep + i] for i in rng.permutation(len(bone) - keep)]
        out.append({"hands": deal["hands"], "boneyard": bone[:keep] + tail})
    return out


def measure_floor(lineup: list[str], deal_sets: int, reshuffles: int, seed: int) -> dict:
    """``--floor``: the first agent's variance per deal set split into the boneyard's part and
    the deals' part (see the module docstring); the agents act in batches on the batched engine."""
    n = len(lineup)
    config = RulesConfig(num_players=n)
    built = {spec: agents.load(spec, config) for spec in dict.fromkeys(lineup)}
    rng = np.random.default_rng(seed)
    rotation, deals = [], []
    for _ in range(deal_sets):
        base = generate_deals(config, rng)
        for m in range(reshuffles):
            game = base if m == 0 else reshuffled(base, config, rng)
            for rot in range(n):
                rotation.append(rot)
                deals.append(game)
    start = time.perf_counter()
    vg = VectorGame(config, num_games=len(deals), reward="win")
    obs, mask, seat = vg.reset(seed=seed, deals=deals)
    rot = np.array(rotation)
    result = np.zeros((len(deals), 2))
    finished = np.zeros(len(deals), bool)
    act_rng = np.random.default_rng(seed + 1)
    while not finished.all():
        who = (seat - rot) % n  # the lineup index of the agent to move
        actions = np.zeros(len(deals), np.int64)
        for i, spec in enumerate(lineup):
            rows = np.flatnonzero(who == i)
            if rows.size:
                actions[rows] = act_batch(built[spec], obs[rows], mask[rows], act_rng)
        obs, mask, seat, _, done = vg.step(actions)
        for b in np.flatnonzero(done & ~finished).tolist():
            winners = vg.final_winners[b]
            result[b] = [winners[rot[b]] / winners.sum(), vg.final_totals[b, rot[b]]]
            finished[b] = True
    seconds = time.perf_counter() - start
    y = result.reshape(deal_sets, reshuffles, n, 2).mean(axis=2)  # the first agent's mean over rotations
    raw = y[:, 0].var(axis=0, ddof=1)  # the deals as an evaluation plays them
    within = y.var(axis=1, ddof=1).mean(axis=0)  # the boneyard's order
    between = np.maximum(y.mean(axis=1).var(axis=0, ddof=1) - within / reshuffles, 0.0)  # the deals
    share = between / (between + within)
    return {
        "lineup": lineup, "deal_sets": deal_sets, "reshuffles": reshuffles, "games": len(deals), "seed": seed,
        "seconds": seconds, "win_rate": float(y[..., 0].mean()), "mean_points": float(y[..., 1].mean()),
        "variance_per_deal_set": {"raw": raw.tolist(), "draws": within.tolist(), "deals": between.tolist()},
        "floor_se_ratio": {"win_rate": math.sqrt(share[0]), "mean_points": math.sqrt(share[1])},
        "games_for_2_points": {"raw": math.ceil(n * (1.96 / 0.02) ** 2 * (between[0] + within[0])),
                               "exact_draw_correction": math.ceil(n * (1.96 / 0.02) ** 2 * between[0])},
    }


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
    parser.add_argument("--floor", action="store_true",
                        help="measure how much of the spread is the draws' luck instead (see above)")
    parser.add_argument("--reshuffles", type=int, default=16, help="with --floor: boneyards per deal set")
    args = parser.parse_args()
    if args.floor and (args.deal_sets < 2 or args.reshuffles < 2):
        parser.error("--floor needs --deal-sets and --reshuffles of at least 2 (variances within and between)")
    out = {}
    for name in args.lineups.split(","):
        if name not in LINEUPS:
            parser.error(f"unknown lineup {name!r}; choose from {sorted(LINEUPS)}")
        if args.floor and name.startswith("search"):
            parser.error("--floor plays on the batched engine: the search lineups do not act in batches")
        out[name] = (measure_floor(LINEUPS[name][0], args.deal_sets, args.reshuffles, args.seed) if args.floor else
                     measure(name, args.deal_sets, args.seed, args.workers, args.value, args.rollouts))
        print(json.dumps({name: out[name]}), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
