"""Fuzzing the env's public entry points: every input either works or raises the project's typed
error (a ``ChickenFootError`` that is a ``ValueError``) and changes nothing; never another
exception type, never a hang."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cf_env import ChickenFootError, Game, RulesConfig, raw_env
from cf_env.vector import VectorGame

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 40), st.floats(allow_nan=True), st.text(max_size=6),
                 st.lists(st.integers(-1, 10), max_size=3))


def _typed(exc: BaseException) -> bool:
    return isinstance(exc, ChickenFootError) and isinstance(exc, ValueError)


@FUZZ
@given(st.dictionaries(st.sampled_from(["num_players", "max_pip", "hand_size", "rounds", "center_arms", "draw_rule",
                                        "double_blank_points", "reward", "points_scale", "render_mode",
                                        "illegal_action"]),
                       st.one_of(junk, st.integers(1, 9), st.sampled_from(["one", "until_playable", "win", "points",
                                                                           "ansi", "raise"])), max_size=5))
def test_env_keywords(kwargs):
    try:
        e = raw_env(**kwargs)
    except Exception as exc:
        assert _typed(exc), repr(exc)
        return
    e.reset(seed=0)
    assert e.agent_selection in e.possible_agents


tile = st.lists(st.integers(-1, 5), min_size=0, max_size=3)
deal = st.one_of(junk, st.fixed_dictionaries({"hands": st.lists(st.lists(tile, max_size=4), max_size=3),
                                              "boneyard": st.lists(tile, max_size=12)}),
                 st.dictionaries(st.text(max_size=8), junk, max_size=2))


@FUZZ
@given(st.one_of(junk, st.lists(deal, max_size=3), st.dictionaries(st.sampled_from(["deals", "deal"]), junk)))
def test_reset_options_and_deals(options):
    e = raw_env(num_players=2, max_pip=4, hand_size=3, center_arms=2)
    e.reset(seed=1)
    before = e.game.to_record()
    try:
        e.reset(seed=2, options=options if isinstance(options, dict) else {"deals": options})
    except Exception as exc:
        assert _typed(exc), repr(exc)
        assert e.game.to_record() == before


@FUZZ
@given(st.lists(st.one_of(junk, st.integers(-3, 40), st.just(np.int64(3)), st.just(26), st.just(27)), max_size=12))
def test_actions(actions):
    e = raw_env(num_players=2, max_pip=4, hand_size=3, center_arms=2)
    e.reset(seed=3)
    for action in actions:
        if e.game_over:
            break
        before = e.game.to_record()
        try:
            e.step(action)
        except Exception as exc:
            assert _typed(exc), repr(exc)
            assert e.game.to_record() == before


@FUZZ
@given(st.one_of(junk, st.lists(st.integers(-2, 40), min_size=4, max_size=4),
                 st.lists(st.floats(0, 30), min_size=4, max_size=4)))
def test_vector_actions(actions):
    vg = VectorGame(RulesConfig(max_pip=4, num_players=2, hand_size=3, center_arms=2), num_games=4, seed=0)
    obs, mask, seat = vg.reset()
    before = (vg.hand.copy(), obs.copy())
    try:
        vg.step(actions)
    except Exception as exc:
        assert _typed(exc), repr(exc)
        np.testing.assert_array_equal(vg.hand, before[0])
        np.testing.assert_array_equal(vg.observations, before[1])


@FUZZ
@given(st.dictionaries(st.sampled_from(["max_pip", "num_players", "hand_size", "rounds", "center_arms",
                                        "draw_rule", "double_blank_points", "extra"]), junk, max_size=4))
def test_rules_config_and_game(fields):
    try:
        config = RulesConfig.from_dict(fields)
    except Exception as exc:
        assert _typed(exc), repr(exc)
        return
    game = Game(config, seed=0)
    assert game.is_over or game.legal_actions()
