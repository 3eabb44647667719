"""Play and print one full seeded game between uniformly random legal players.

    chickenfoot demo --seed 0 --players 4 --max-pip 9    (python -m cf_env.demo: seed 0, the standard game)
"""

from __future__ import annotations

import numpy as np

from cf_env.engine import EventKind, RoundEnd, RulesConfig, action_to_string
from cf_env.game import Game


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
            assert e.action is not None  # a play's event holds its action
            move = action_to_string(e.action, game.config.max_pip)
            lines.append(f"  {who} plays {e.tile} ({move})")
        else:
            how = "blocked layout" if e.detail == RoundEnd.BLOCKED else f"player_{e.player} went out"
            lines.append(f"  round over ({how}); points {next(scores)}")
    lines.append(f"Totals {game.totals}; winner(s): {', '.join(f'player_{p}' for p in game.winners)}")
    return lines


def play_demo(config: RulesConfig, seed: int = 0) -> list[str]:
    """One game of ``config`` between random players (seeded), as :func:`describe`'s lines."""
    game = Game(config, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    return describe(game)


if __name__ == "__main__":
    print("\n".join(play_demo(RulesConfig())))
