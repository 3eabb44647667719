"""Golden transcript: one seeded full game, every event and score, compared on every run.

Regenerate (only after a deliberate rules change, and say so in the commit) with
``CF_REGEN_GOLDEN=1 python -m pytest tests/engine/test_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from cf_env import Game
from cf_env.demo import describe, play_demo
from cf_env.engine import RulesConfig

GOLDEN = Path(__file__).parent / "golden" / "game_default_seed2026.txt"
SEED = 2026


def transcript(game: Game) -> str:
    """Every event, each round's points, the totals and the winners (``chickenfoot demo``'s lines)."""
    header = f"# config {game.config.to_dict()}; Game seed {SEED}; random legal moves from default_rng({SEED})"
    return "\n".join([header, *describe(game)]) + "\n"


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


def test_the_demo_plays_the_golden_game():
    assert play_demo(RulesConfig(), SEED) == describe(play_golden_game())


def test_golden_record_replays():
    game = play_golden_game()
    assert transcript(Game.from_record(game.to_record())) == GOLDEN.read_text()
