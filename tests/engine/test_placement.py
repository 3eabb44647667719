"""Game.placement_of says where a play goes before it is made: the same Placement the layout ends
with after the play (R8-R10), for every legal play of many games; anything else is refused."""

from __future__ import annotations

import numpy as np
import pytest

from cf_env import Game
from cf_env.engine import IllegalActionError, RulesConfig


@pytest.mark.parametrize("config", [RulesConfig(rounds=3), RulesConfig(num_players=3, max_pip=6, center_arms=3),
                                    RulesConfig(num_players=6, max_pip=12, center_arms=6, draw_rule="until_playable",
                                                rounds=2)])
def test_placement_of_is_where_the_play_lands(config):
    checked = 0
    for seed in range(8):
        game = Game(config, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            legal = game.legal_actions()
            for action in legal:
                if action >= config.num_actions - 2:
                    with pytest.raises(IllegalActionError):
                        game.placement_of(action)
                    continue
                after = game.clone()
                rounds = after.rounds_finished
                after.apply(action)
                if after.rounds_finished == rounds:  # the round went on: its layout ends with the play
                    assert game.placement_of(action) == after.layout()[-1]
                    checked += 1
            game.apply(int(rng.choice(legal)))
    assert checked > 1000
    game = Game(config, seed=0)
    illegal = next(a for a in range(config.num_actions - 2) if a not in game.legal_actions())
    for bad in (illegal, -1, config.num_actions, "3>4"):
        with pytest.raises(IllegalActionError):
            game.placement_of(bad)
