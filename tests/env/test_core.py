"""The env's compiled core (cf_env.core) against the pure-Python engine: the same games, seen the
same way by every seat, with the same rewards and infos, decision by decision; and the switch to
the Python engine when a caller reads ``env.game``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cf_env import env, raw_env
from cf_env.core import CoreGame
from cf_env.engine import DealError, Game, IllegalActionError, RulesConfig
from cf_env.observation import ObservationEncoder

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


def play_both(kwargs, seed, history, options=None, actions_seed=0, make=raw_env):
    """Step a compiled and a Python env in lockstep with random legal actions, checking everything
    the env shows after every step; returns the two envs at the end."""
    fast = make(engine="compiled", history=history, **kwargs)
    slow = make(engine="python", history=history, **kwargs)
    fast.reset(seed=seed, options=options)
    slow.reset(seed=seed, options=options)
    rng = np.random.default_rng(actions_seed)
    for agent in fast.agent_iter():
        assert agent == slow.agent_selection
        for a in fast.possible_agents:  # every seat's view, not only the one to move
            same(fast.observe(a), slow.observe(a))
        same(fast.last(), slow.last())
        same(fast.rewards, slow.rewards)
        same(fast.infos, slow.infos)
        assert fast.terminations == slow.terminations and fast.truncations == slow.truncations
        _, _, term, trunc, _ = fast.last(observe=False)
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(fast.last()[0]["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        fast.step(action)
        slow.step(action)
        assert fast._on_core  # nothing above read env.game
    assert slow.agents == [] and fast.agents == []
    return fast, slow


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_the_core_plays_the_python_engines_games(kwargs):
    for seed in range(3):
        fast, slow = play_both(kwargs, seed, history=seed == 1, actions_seed=seed)
        assert fast.game.to_record() == slow.game.to_record()  # the replayed Game is the same game


def test_scripted_deals_and_numpy_actions():
    config = RulesConfig(num_players=2)
    dealt = [Game(config, seed=s).to_record()["deals"][0] for s in (5, 6)]
    deals = [dealt[0], None, dealt[1]]
    play_both({"num_players": 2, "reward": "relative"}, 3, history=True, options={"deals": deals})
    fast = raw_env(num_players=2)
    fast.reset(seed=1)
    legal = np.flatnonzero(fast.last()[0]["action_mask"])
    fast.step(legal[0])  # a numpy integer is an action too
    assert fast.game.actions() == [int(legal[0])]


def test_reading_the_game_moves_on_in_the_python_engine():
    fast = raw_env(history=True)
    slow = raw_env(engine="python", history=True)
    fast.reset(seed=4)
    slow.reset(seed=4)
    rng = np.random.default_rng(0)
    for i, _agent in enumerate(fast.agent_iter()):
        if i == 300:
            assert fast._on_core
            game = fast.game  # replays the core's game, then the env steps it
            assert not fast._on_core and game.to_record() == slow.game.to_record()
        same(fast.last(), slow.last())
        obs, _, term, trunc, _ = fast.last()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        fast.step(action)
        slow.step(action)
    assert fast.game.to_record() == slow.game.to_record()
    fast.reset(seed=5)  # the next game is the core's again
    assert fast._on_core


def test_illegal_actions_are_handled_the_same_and_change_nothing():
    for make in (raw_env, env):
        fast, slow = make(), make(engine="python")
        fast.reset(seed=2)
        slow.reset(seed=2)
        illegal = int(np.flatnonzero(fast.last()[0]["action_mask"] == 0)[0])
        if make is raw_env:
            for bad in (illegal, None, -1, 10**6, "x"):
                with pytest.raises(IllegalActionError, match="legal actions"):
                    fast.step(bad)
            assert fast._on_core
            same(fast.last(), slow.last())
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            fast.step(illegal)
            slow.step(illegal)
        same(fast.rewards, slow.rewards)
        for _ in fast.agent_iter():
            same(fast.last(), slow.last())
            fast.step(None)
            slow.step(None)


def test_a_bad_deal_changes_nothing():
    fast = raw_env()
    fast.reset(seed=0)
    before = fast.last()
    with pytest.raises(DealError):
        fast.reset(options={"deals": [{"hands": [], "boneyard": []}]})
    same(fast.last(), before)
    assert fast._on_core


def test_engine_is_checked():
    with pytest.raises(ValueError, match="engine must be one of"):
        raw_env(engine="numba")


def test_core_game_replays_to_the_same_game():
    config = RulesConfig(num_players=4)
    core = CoreGame(config, ObservationEncoder(config))
    core.reset(np.random.default_rng(9))
    game = Game(config, seed=np.random.default_rng(9))
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
    assert core.to_game().to_record() == game.to_record()


def test_the_gymnasium_env_plays_the_same_episodes_on_either_engine():
    from agents import load
    from cf_env.gym_env import ChickenFootSingleEnv

    config = RulesConfig(num_players=3, max_pip=6, hand_size=5)
    heuristic = load("heuristic", config)
    kwargs = {"num_players": 3, "max_pip": 6, "hand_size": 5, "reward": "relative", "learner_seat": "random",
              "opponents": {1: heuristic, 2: heuristic, 0: heuristic}}
    fast, slow = ChickenFootSingleEnv(**kwargs), ChickenFootSingleEnv(engine="python", **kwargs)
    rng = np.random.default_rng(0)
    for episode in range(3):
        same(fast.reset(seed=episode), slow.reset(seed=episode))
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(fast.action_masks())))
            out = fast.step(action)
            same(out, slow.step(action))
            done = out[2]
        assert fast.aec._on_core and fast.aec.totals == slow.aec.totals
