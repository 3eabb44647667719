"""Golden transcript: one seeded full game, every event and score, compared on every run.

Regenerate (only after a deliberate rules change, and say so in the commit) with
``CF_REGEN_GOLDEN=1 python -m pytest tests/engine/test_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from cf_env import Game
from cf_env.engine import EventKind, RoundEnd, RulesConfig, action_to_string

GOLDEN = Path(__file__).parent / "golden" / "game_default_seed2026.txt"
SEED = 2026


def transcript(game: Game) -> str:
    lines = [f"# config {game.config.to_dict()}; Game seed {SEED}; random legal moves from default_rng({SEED})"]
    scores = iter(game.round_scores)
    for e in game.events():
        if e.kind == EventKind.SEARCH_DRAW:
            lines.append(f"r{e.round} p{e.player} search-draw {e.tile}")
        elif e.kind == EventKind.START:
            lines.append(f"r{e.round} p{e.player} start {e.tile}")
        elif e.kind == EventKind.DRAW:
            lines.append(f"r{e.round} p{e.player} draw {e.tile}")
        elif e.kind in (EventKind.PLAY, EventKind.PASS):
            lines.append(f"r{e.round} p{e.player} {action_to_string(e.action, game.config.max_pip)}")
        else:
            lines.append(f"r{e.round} end {RoundEnd(e.detail).name} p{e.player} scores {next(scores)}")
    lines.append(f"totals {game.totals}")
    lines.append(f"winners {game.winners}")
    return "\n".join(lines) + "\n"


def play_golden_game() -> Game:
    game = Game(RulesConfig(), seed=SEED)
    rng = np.random.default_rng(SEED)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    return game


def test_golden_transcript():
    text = transcript(play_golden_game())
    if os.environ.get("CF_REGEN_GOLDEN"):
        GOLDEN.write_text(text)
    assert GOLDEN.read_text() == text


def test_golden_record_replays():
    game = play_golden_game()
    assert transcript(Game.from_record(game.to_record())) == GOLDEN.read_text()
