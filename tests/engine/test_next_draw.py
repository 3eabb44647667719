"""Game.set_next_draw: a framework that models each draw as a chance outcome picks the tile."""

from __future__ import annotations

import numpy as np
import pytest

from cf_env import Game
from cf_env.engine import DealError, EventKind, RulesConfig, unpack_event


@pytest.mark.parametrize("config", [RulesConfig(rounds=3), RulesConfig(num_players=2, max_pip=6, draw_rule="until_playable")])
def test_the_chosen_tile_is_drawn_and_the_record_still_replays(config):
    rng = np.random.default_rng(0)
    for seed in range(5):
        game = Game(config, seed=seed)
        draws = 0
        while not game.is_over:
            legal = game.legal_actions()
            action = legal[rng.integers(len(legal))]
            if action == config.num_actions - 2:  # DRAW
                tiles = game.boneyard_tiles()
                assert len(tiles) == game.boneyard_size and tiles == sorted(tiles)
                tile = tiles[rng.integers(len(tiles))]
                game.set_next_draw(tile)
                round_before = game.round_index
                game.apply(action)
                drawn = [e for e in game.events() if e.kind == EventKind.DRAW][-1]
                assert drawn.tile.index == tile
                if game.round_index == round_before and not game.is_over:  # (a draw may end a blocked round)
                    assert tile not in game.boneyard_tiles()
                draws += 1
            else:
                game.apply(action)
        assert draws > 0
        replay = Game.from_record(game.to_record())
        assert replay.round_scores == game.round_scores and replay.events() == game.events()


def test_a_tile_outside_the_boneyard_is_refused_and_nothing_changes():
    game = Game(RulesConfig(), seed=1)
    before = (game.boneyard_tiles(), game.to_record())
    held = game.hand(game.current_player)[0].index
    for bad in (held, -1, "x"):
        with pytest.raises(DealError, match="not in the boneyard"):
            game.set_next_draw(bad)
    assert (game.boneyard_tiles(), game.to_record()) == before


@pytest.mark.parametrize("config", [RulesConfig(rounds=3), RulesConfig(num_players=2, max_pip=6, draw_rule="until_playable")])
def test_chosen_draws_are_drawn_and_the_record_replays(config):
    rng = np.random.default_rng(2)
    game = Game(config, seed=3)
    chosen = 0
    while not game.is_over:
        legal = game.legal_actions()
        action = legal[rng.integers(len(legal))]
        if action == config.num_actions - 2 and chosen < 6:
            tile = int(rng.choice(game.boneyard_tiles()))
            game.set_next_draw(tile)
            drawer, round_before = game.current_player, game.round_index
            before = game.event_count
            game.apply(action)
            draws = [(who, t, rnd) for kind, who, t, rnd in map(unpack_event, game.event_codes(before).tolist())
                     if kind == EventKind.DRAW]
            assert {(who, rnd) for who, _, rnd in draws} == {(drawer, round_before)}
            assert draws[0][1] == tile
            chosen += 1
        else:
            game.apply(action)
    assert chosen
    assert Game.from_record(game.to_record()).events() == game.events()
    again = game.rewound()  # the game's own deals, no JSON: the same game again
    again.apply_all(game.actions())
    assert again.events() == game.events() and again.round_scores == game.round_scores
