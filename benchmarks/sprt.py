"""Calibration of the sequential comparison (``chickenfoot compare --until-verdict``,
:class:`training.stats.Sprt`): its error rates and games to a verdict, measured, not claimed.

Cheap agents on the batched engine play many comparisons at once, each exactly as
:func:`training.compare.compare` plays one: every deal set is dealt once and played by A's lineup
and by B's lineup in every seat rotation (A or B in the rotated seat, greedy opponents in the
others), and the test reads the per-deal-set win-rate differences. The agents mix the greedy
baseline (heaviest tile first) with its opposite (lightest first): ``eps`` is each one's share of
lightest-first moves, drawn move by move, so the gap between two of them is known and adjustable.

1. ``--null`` comparisons of two agents with the same ``--null-eps`` (elo 0, H0 true; their
   moves differ by their own draws): the share of H1 verdicts is the false-verdict rate, to hold
   at most ``alpha``.
2. The gap's Elo is measured on ``--gap-deal-sets`` fixed deal sets, and ``--gap`` comparisons of
   the two agents run with ``elo1`` set to it (the design margin): the share of H1 verdicts is the
   power, to hold at least ``1 - beta``; with the mean deal sets to a verdict against the deal
   sets a fixed-size test with the same error rates needs, paired and as two independent
   evaluations.

    python benchmarks/sprt.py                        # 500 null and 200 gap comparisons (minutes)
    python benchmarks/sprt.py --null 60 --gap 30     # the size the tests run

Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from cf_env import RulesConfig, action_table
from cf_env.vector import VectorGame
from training.stats import Sprt, elo_of_win_rates, wilson_interval

RULES = RulesConfig(num_players=3, max_pip=6, hand_size=7, rounds=1)
OPPONENT_EPS = 0.0  # the opponents play greedy


def _deal_dicts(perm: np.ndarray, config: RulesConfig, low: np.ndarray, high: np.ndarray) -> list[dict]:
    h, n = config.hand_size, config.num_players
    tiles = [[int(low[t]), int(high[t])] for t in perm]
    return [{"hands": [tiles[i * h:(i + 1) * h] for i in range(n)], "boneyard": tiles[n * h:]}]


def play_deal_sets(eps: np.ndarray, config: RulesConfig, rng: np.random.Generator) -> np.ndarray:
    """One deal set for each of ``len(eps)`` comparisons: ``eps[k] = (A's, B's)`` lightest-first
    shares. Returns ``(K, 2)``: each comparison's A and B win rates on its deal set (their mean
    win share over the rotations)."""
    n = config.num_players
    k = len(eps)
    table = action_table(config.max_pip)
    low, high = np.array(table.tile_low), np.array(table.tile_high)
    pips = np.full(table.num_actions, -1.0)
    pips[: table.draw] = (low + high)[np.array(table.action_tile[: table.draw])]
    g = np.arange(k * 2 * n)
    comparison, lineup, rotation = g // (2 * n), (g // n) % 2, g % n
    focal_eps = eps[comparison, lineup]
    deals = [_deal_dicts(rng.permutation(config.num_tiles), config, low, high) for _ in range(k)]
    vg = VectorGame(config, num_games=len(g), seed=rng)
    obs, mask, seat = vg.reset(deals=[deals[c] for c in comparison])
    share = np.full(len(g), np.nan)
    while np.isnan(share).any():
        lightest = rng.random(len(g)) < np.where(seat == rotation, focal_eps, OPPONENT_EPS)
        noise = rng.random(mask.shape)
        score = np.where(mask == 1, np.where(lightest[:, None], -pips, pips) + 1e-3 * noise, -np.inf)
        obs, mask, seat, _, done = vg.step(np.argmax(score, axis=1))
        ended = done & np.isnan(share)
        if ended.any():
            winners = vg.final_winners[ended].astype(float)
            share[ended] = winners[np.arange(winners.shape[0]), rotation[ended]] / winners.sum(axis=1)
    return share.reshape(k, 2, n).mean(axis=2)


def run(eps: tuple[float, float], count: int, sprt: Sprt, max_deal_sets: int, rng: np.random.Generator,
        config: RulesConfig = RULES) -> dict:
    """``count`` sequential comparisons of agents with lightest-first shares ``eps``: the verdicts
    and the deal sets each used (a comparison that reaches ``max_deal_sets`` has no verdict)."""
    rows = np.zeros((count, max_deal_sets, 2))
    used = np.zeros(count, int)
    verdicts: list[str | None] = [None] * count
    active = np.arange(count)
    for t in range(max_deal_sets):
        if not active.size:
            break
        rows[active, t] = play_deal_sets(np.tile(eps, (active.size, 1)), config, rng)
        used[active] += 1
        still = []
        for c in active:
            a, b = rows[c, : t + 1, 0], rows[c, : t + 1, 1]
            mu = sprt.mean_differences(float(b.mean()))
            verdicts[c] = sprt.verdict(sprt.llr(a - b, *mu), t + 1)
            if verdicts[c] is None:
                still.append(c)
        active = np.array(still, int)
    h1 = sum(v == "H1" for v in verdicts)
    return {"eps": list(eps), "comparisons": count, "h1": h1, "h0": sum(v == "H0" for v in verdicts),
            "no_verdict": sum(v is None for v in verdicts), "h1_rate": h1 / count,
            "h1_rate_ci95": wilson_interval(h1 / count, count), "mean_deal_sets": float(used.mean()),
            "median_deal_sets": float(np.median(used)), "max_deal_sets": max_deal_sets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--null", type=int, default=500, help="comparisons of equal agents (elo 0)")
    parser.add_argument("--gap", type=int, default=200, help="comparisons of agents with the measured gap")
    parser.add_argument("--eps", type=float, nargs=2, default=[0.0, 1.0],
                        help="lightest-first shares of A and B in the gap comparisons")
    parser.add_argument("--null-eps", type=float, default=0.5, help="the lightest-first share of both null agents")
    parser.add_argument("--gap-deal-sets", type=int, default=4000, help="fixed deal sets that measure the gap")
    parser.add_argument("--max-deal-sets", type=int, default=3000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--min-deal-sets", type=int, default=Sprt.min_deal_sets)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    measured = play_deal_sets(np.tile(args.eps, (args.gap_deal_sets, 1)), RULES, rng)
    pa, pb = measured.mean(axis=0)
    elo = elo_of_win_rates(float(pa), float(pb))
    d = measured[:, 0] - measured[:, 1]
    sprt = Sprt(elo0=0.0, elo1=round(elo, 1), alpha=args.alpha, beta=args.beta, min_deal_sets=args.min_deal_sets)
    mu = sprt.mean_differences(float(pb))
    fixed = {"paired": sprt.fixed_deal_sets(*mu, float(d.var(ddof=1))),
             "independent": sprt.fixed_deal_sets(*mu, float(measured[:, 0].var(ddof=1) + measured[:, 1].var(ddof=1)))}
    null = run((args.null_eps, args.null_eps), args.null, sprt, args.max_deal_sets, rng)
    gap = run(tuple(args.eps), args.gap, sprt, args.max_deal_sets, rng)
    out = {
        "rules": RULES.to_dict(), "seed": args.seed,
        "gap": {"eps": args.eps, "deal_sets": args.gap_deal_sets, "win_rates": [float(pa), float(pb)], "elo": elo,
                "elo_se": 400 / math.log(10) * float(d.std(ddof=1) / math.sqrt(len(d))) / (pb * (1 - pb)),
                "correlation": float(np.corrcoef(measured.T)[0, 1])},
        "sprt": {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
                 "min_deal_sets": sprt.min_deal_sets},
        "null": {**null, "false_verdict_rate": null["h1_rate"]},
        "power": {**gap, "power": gap["h1_rate"]},
        "fixed_size_deal_sets": fixed,
        "sequential_vs_independent_fixed": gap["mean_deal_sets"] / fixed["independent"],
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
