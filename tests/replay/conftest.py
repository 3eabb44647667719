"""Shared game records for the replay tests: real games of the baseline agents."""

from __future__ import annotations

import numpy as np
import pytest

from agents import load
from cf_env import Game, ObservationEncoder, RulesConfig
from cf_env.replay import game_record


def play(config: RulesConfig, specs: list[str], seed: int) -> Game:
    game = Game(config, seed=seed)
    bots = [load(s, config) for s in specs]
    encoder = ObservationEncoder(config)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        p = game.current_player
        observation = {"observation": encoder.encode(game, p), "action_mask": encoder.mask(game.legal_bits)}
        game.apply(bots[p].act(observation, rng))
    return game


@pytest.fixture(scope="session")
def short_record() -> dict:
    """Two rounds of 4-player double-nine between the heuristic and greedy bots."""
    config = RulesConfig(rounds=2)
    specs = ["heuristic", "greedy", "heuristic", "random"]
    return game_record(play(config, specs, seed=11), specs, source="test")
