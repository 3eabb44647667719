"""How well the search's win-chance estimates (``value=win``, ``value=joint``) match play.

Plays ``--games`` games of ``--player`` in every seat, keeps every round's points (a vector over
the seats, so the seats' correlation within a round stays), then for each number of rounds left
and each position (the seats' totals, seat 0 first) draws ``--samples`` futures: that many rounds
of the bank, each with its seats shuffled, summed. The empirical chance is seat 0's share of the
lowest total over those futures (ties shared); beside it, :func:`agents.search.values.win_chance`
with the spread of a points difference measured on the same bank, as the search's ``joint`` and
``win`` valuations compute it.

    python -m lab.win_chance --games 3000 --rounds-left 1 2 5

prints, as JSON, the bank's per-seat mean, spread and share of rounds at 0, the spread of a
difference, the correlation of two seats' points in a round, and the three chances a position.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from agents import load
from agents.search.values import win_chance
from cf_env import RulesConfig, raw_env
from training.evaluate import play_game

POSITIONS = ((0, 0, 0, 0), (0, 10, 10, 10), (0, -10, 10, 20), (20, 0, 0, 0), (40, 0, 10, 20),
             (0, 30, 40, 50), (-30, 0, 0, 0))  #: seat 0's total first; the rest in any order


def round_bank(player: str, games: int, config: RulesConfig, seed: int, progress: bool = True) -> np.ndarray:
    """Every round's points of ``games`` games of ``player`` in every seat: (rounds, seats)."""
    env = raw_env(config=config)
    seats = [load(player, config) for _ in range(config.num_players)]
    rng = np.random.default_rng(seed)
    rounds: list[Sequence[int]] = []
    for g in tqdm(range(games), desc="games", unit="game", disable=not progress):
        rounds.extend(play_game(env, seats, None, rng, seed=seed + g).round_scores)
    return np.asarray(rounds, np.float64)


def empirical_chance(bank: np.ndarray, totals: np.ndarray, left: int, samples: int,
                     rng: np.random.Generator) -> float:
    """Seat 0's share of the lowest total after ``left`` rounds drawn from ``bank``."""
    n = bank.shape[1]
    future = np.zeros((samples, n))
    for _ in range(left):
        rows = bank[rng.integers(len(bank), size=samples)]
        future += np.take_along_axis(rows, np.argsort(rng.random((samples, n)), axis=1), axis=1)
    final = future + totals
    lowest = final == final.min(axis=1, keepdims=True)
    return float((lowest[:, 0] / lowest.sum(axis=1)).mean())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.win_chance", description=__doc__.splitlines()[0])
    parser.add_argument("--player", default="heuristic", help="the agent in every seat (default: heuristic)")
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--rounds-left", type=int, nargs="+", default=[1, 2, 5])
    parser.add_argument("--samples", type=int, default=200_000, help="futures drawn a position")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.games < 1 or args.samples < 1 or min(args.rounds_left) < 1:
        parser.error("--games, --samples and every --rounds-left must be at least 1")
    config = RulesConfig(num_players=4)
    bank = round_bank(args.player, args.games, config, args.seed, not args.no_progress)
    spread = float((bank[:, 0] - bank[:, 1]).std())
    rng = np.random.default_rng(args.seed)
    zero = np.zeros(config.num_players, np.int64)
    rows = []
    for left in args.rounds_left:
        for position in POSITIONS:
            totals = np.asarray(position, np.int64)
            s = spread * np.sqrt(left)
            rows.append({"rounds_left": left, "totals": list(position),
                         "empirical": round(empirical_chance(bank, totals.astype(np.float64), left, args.samples, rng), 4),
                         "joint": round(float(win_chance(totals, zero, config.num_players, 0, s, True)), 4),
                         "win": round(float(win_chance(totals, zero, config.num_players, 0, s, False)), 4)})
    print(json.dumps({"player": args.player, "games": args.games, "rounds": len(bank),
                      "seat_mean": round(float(bank.mean()), 2), "seat_sd": round(float(bank.std()), 2),
                      "share_at_zero": round(float((bank == 0).mean()), 4), "difference_sd": round(spread, 2),
                      "seat_correlation": round(float(np.corrcoef(bank[:, 0], bank[:, 1])[0, 1]), 3),
                      "positions": rows}, indent=1))


if __name__ == "__main__":
    main()
