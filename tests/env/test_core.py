"""The env's one engine, the compiled core (cf_env.core), against the reference engine
(tests/reference_engine.py, an independent Python implementation of the rules) stepped beside it:
the same games, seen the same way by every seat, with the same scores and winners, decision by
decision; ``env.game`` as a copy that changes nothing; a ``Game`` loaded into the env
(``reset_to_game``) where it stands."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cf_env import Game, env, raw_env
from cf_env.core import CoreGame
from cf_env.engine import DealError, IllegalActionError, RulesConfig
from cf_env.observation import ObservationEncoder
from tests.env.reference_observation import ReferenceEncoder
from tests.reference_engine import ReferenceGame

CONFIGS = [
    {},
    {"num_players": 2, "reward": "points"},
    {"num_players": 3, "max_pip": 6, "hand_size": 5, "draw_rule": "until_playable", "reward": "relative"},
    {"num_players": 6, "max_pip": 12, "hand_size": 8, "center_arms": 6},
    {"num_players": 3, "max_pip": 4, "hand_size": 3, "center_arms": 3, "rounds": 2, "double_blank_points": 0},
    # 1-tile hands: rounds end before anyone decides, and some games end before the first decision
    {"num_players": 3, "max_pip": 3, "hand_size": 1, "center_arms": 2, "draw_rule": "until_playable"},
    {"num_players": 2, "max_pip": 1, "hand_size": 1, "rounds": 1, "center_arms": 1},
]


def same(a, b):
    """Equal observations, masks, infos, rewards: arrays compared by value (and dtype)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert type(a) is type(b) and a == b, (a, b)


def shows_the_game(e, game: ReferenceGame) -> None:
    """Everything ``e`` shows agrees with the reference ``game`` at the same point: whose turn, every
    seat's observation (and history, both from the reference encoder over the game's state view),
    the mask, each seat's hidden tiles, scores and winners."""
    encoder, reference = ObservationEncoder(e.config), ReferenceEncoder(e.config)
    if game.is_over:
        assert e.game_over and e.legal_bits == 0
        assert e.winners == game.winners
    else:
        assert not e.game_over and e.agent_selection == e.possible_agents[game.current_player]
        assert e.legal_bits == game.legal_bits
    for seat, agent in enumerate(e.possible_agents):
        seen = e.observe(agent)
        same(seen["observation"], reference.encode(game, seat))
        if e.history:
            same(seen["history"], reference.history(game, seat))
        expected = encoder.mask(game.legal_bits) if agent == e.agent_selection and not game.is_over else None
        assert np.array_equal(seen["action_mask"], expected if expected is not None else np.zeros(e.num_actions))
        same(e.hidden_tiles(agent), game.hidden_tiles(seat))
    assert e.round_scores == game.round_scores and e.totals == game.totals
    for info in e.infos.values():
        assert info["rounds_finished"] == game.rounds_finished and info["totals"].tolist() == game.totals


def play_beside_game(kwargs, seed, history, options=None, actions_seed=0, make=raw_env):
    """Step the env and a reference game dealt from the same seed in lockstep with random legal
    actions, checking everything the env shows after every step; returns both at the end."""
    e = make(history=history, **kwargs)
    e.reset(seed=seed, options=options)
    game = ReferenceGame(e.config, seed=np.random.default_rng(seed), deals=(options or {}).get("deals"))
    rng = np.random.default_rng(actions_seed)
    for _agent in e.agent_iter():
        shows_the_game(e, game)
        _, _, term, trunc, _ = e.last(observe=False)
        if term or trunc:
            e.step(None)
            continue
        legal = game.legal_actions()
        action = legal[rng.integers(len(legal))]
        e.step(action)
        game.apply(action)
    assert e.agents == [] and game.is_over
    return e, game


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_the_env_plays_the_reference_engines_games(kwargs):
    for seed in range(2):  # seed 1 with the history
        e, game = play_beside_game(kwargs, seed, history=seed == 1, actions_seed=seed)
        assert e.game.to_record() == game.to_record()  # the copy replayed from the core is the same game


def test_scripted_deals_and_numpy_actions():
    config = RulesConfig(num_players=2)
    dealt = [Game(config, seed=s).to_record()["deals"][0] for s in (5, 6)]
    deals = [dealt[0], None, dealt[1]]
    play_beside_game({"num_players": 2, "reward": "relative"}, 3, history=True, options={"deals": deals})
    fast = raw_env(num_players=2)
    fast.reset(seed=1)
    legal = np.flatnonzero(fast.last()[0]["action_mask"])
    fast.step(legal[0])  # a numpy integer is an action too
    assert fast.game.actions() == [int(legal[0])]


def test_reading_the_game_changes_nothing():
    e = raw_env(history=True)
    e.reset(seed=4)
    reference = ReferenceGame(e.config, seed=np.random.default_rng(4))
    rng = np.random.default_rng(0)
    for i, _agent in enumerate(e.agent_iter()):
        if i == 300:
            copy = e.game
            assert copy is not e.game and copy.to_record() == reference.to_record()
            copy.apply(copy.legal_actions()[-1])  # changing the copy changes nothing in the env
            shows_the_game(e, reference)
        obs, _, term, trunc, _ = e.last()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(action)
        if action is not None:
            reference.apply(action)
    assert e.game.to_record() == reference.to_record()


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 3, "max_pip": 4, "hand_size": 3, "center_arms": 3}])
def test_a_game_in_play_loads_into_the_env_and_plays_on_the_same(kwargs):
    """``reset_to_game`` deals the core every round the game dealt and will deal (its generator
    copied, not drawn), then replays its actions: the env plays on as the Game does, later rounds
    included, and the Game given is not changed."""
    config = RulesConfig(**kwargs)
    rng = np.random.default_rng(3)
    for seed in range(3):
        game = Game(config, seed=seed)
        for _ in range(int(rng.integers(0, 60))):
            if game.is_over:
                break
            legal = game.legal_actions()
            game.apply(legal[rng.integers(len(legal))])
        record = game.to_record()
        e = raw_env(config=config, history=True)
        e.reset_to_game(game)
        assert game.to_record() == record and e.game.to_record() == record
        reference = ReferenceGame.of(game)
        while not game.is_over:
            shows_the_game(e, reference)
            legal = game.legal_actions()
            action = legal[rng.integers(len(legal))]
            e.step(action)
            game.apply(action)
            reference.apply(action)
        shows_the_game(e, reference)
        assert e.game.to_record() == game.to_record() == reference.to_record()


def test_reset_to_game_refuses_other_rules():
    e = raw_env()
    with pytest.raises(ValueError, match="reset_to_game needs a Game"):
        e.reset_to_game(Game(RulesConfig(num_players=2)))


def test_illegal_actions_change_nothing_or_end_the_game():
    e = raw_env()
    e.reset(seed=2)
    before = e.last()
    illegal = int(np.flatnonzero(before[0]["action_mask"] == 0)[0])
    for bad in (illegal, None, -1, 10**6, "x"):
        with pytest.raises(IllegalActionError, match="legal actions"):
            e.step(bad)
    same(e.last(), before)
    game = e.game
    ended = env()
    ended.reset(seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ended.step(illegal)
    offender = e.agent_selection
    assert ended.rewards[offender] == -1.0 and all(r == 0.0 for a, r in ended.rewards.items() if a != offender)
    assert ended.game_over and ended.game.to_record() == game.to_record()  # the core took no step
    for _ in ended.agent_iter():
        ended.step(None)
    assert ended.agents == []


def test_a_bad_deal_changes_nothing():
    fast = raw_env()
    fast.reset(seed=0)
    before = fast.last()
    with pytest.raises(DealError):
        fast.reset(options={"deals": [{"hands": [], "boneyard": []}]})
    same(fast.last(), before)


def test_there_is_no_engine_switch():
    with pytest.raises(TypeError, match="engine"):
        raw_env(engine="python")


def test_core_game_replays_to_the_same_game():
    config = RulesConfig(num_players=4)
    core = CoreGame(config, ObservationEncoder(config))
    core.reset(np.random.default_rng(9))
    game = ReferenceGame(config, seed=np.random.default_rng(9))
    rng = np.random.default_rng(1)
    while core.current_player >= 0:
        assert core.legal_bits == game.legal_bits
        legal = game.legal_actions()
        action = legal[rng.integers(len(legal))]
        core.step(action)
        game.apply(action)
    assert game.is_over
    assert core.totals == game.totals and core.winners == game.winners
    assert core.round_scores(game.rounds_finished) == game.round_scores
    assert Game.replay(config, core.all_deals(), core.actions).to_record() == game.to_record()


def test_the_gymnasium_env_shows_the_reference_games():
    from agents import load
    from cf_env.gym_env import ChickenFootSingleEnv

    config = RulesConfig(num_players=3, max_pip=6, hand_size=5)
    heuristic = load("heuristic", config)
    e = ChickenFootSingleEnv(config=config, reward="relative", learner_seat="random",
                             opponents={1: heuristic, 2: heuristic, 0: heuristic})
    encoder, reference = ObservationEncoder(config), ReferenceEncoder(config)
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, info = e.reset(seed=episode)
        done = False
        while not done:
            game = ReferenceGame.of(e.aec.game)
            same(obs["observation"], reference.encode(game, info["seat"]))
            same(obs["action_mask"], encoder.mask(game.legal_bits).copy())
            obs, _, done, _, info = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        assert e.aec.game.is_over and e.aec.totals == e.aec.game.totals
