"""Play and print one full seeded game between uniformly random legal players.

    python -m cf_env.demo --seed 0 --players 4 --max-pip 9
"""

from __future__ import annotations

import argparse

import numpy as np

from cf_env.engine import EventKind, Game, RoundEnd, RulesConfig, action_to_string


def describe(game: Game) -> list[str]:
    """Human-readable lines for every event of ``game`` (drawn tiles shown: this is a replay)."""
    lines = []
    scores = iter(game.round_scores)
    n, top = game.config.num_players, game.config.max_pip
    current = -1
    for e in game.events():
        if e.round != current:
            current = e.round
            lines.append(f"Round {current + 1}: starting double {top - current}-{top - current}, "
                         f"dealer player_{current % n}")
        who = f"player_{e.player}"
        if e.kind == EventKind.SEARCH_DRAW:
            lines.append(f"  {who} draws {e.tile} looking for the starting double (R6)")
        elif e.kind == EventKind.START:
            lines.append(f"  {who} places {e.tile} in the centre")
        elif e.kind == EventKind.DRAW:
            lines.append(f"  {who} draws {e.tile}")
        elif e.kind == EventKind.PASS:
            lines.append(f"  {who} passes")
        elif e.kind == EventKind.PLAY:
            move = action_to_string(e.action, game.config.max_pip)
            lines.append(f"  {who} plays {e.tile} ({move})")
        else:
            how = "blocked layout" if e.detail == RoundEnd.BLOCKED else f"player_{e.player} went out"
            lines.append(f"  round over ({how}); points {next(scores)}")
    lines.append(f"Totals {game.totals}; winner(s): {', '.join(f'player_{p}' for p in game.winners)}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print one seeded Chicken Foot game between random players.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--max-pip", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    config = RulesConfig(num_players=args.players, max_pip=args.max_pip, rounds=args.rounds)
    game = Game(config, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    print("\n".join(describe(game)))


if __name__ == "__main__":
    main()
