"""The Gymnasium single-agent env: registration, check_env, masked rollouts, opponents."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cf_env  # noqa: F401  (registers ChickenFoot-v1)
from cf_env import ChickenFootSingleEnv
from cf_env.engine import ConfigError, IllegalActionError


@pytest.mark.parametrize("history", [False, True])
def test_registered_and_check_env(history):
    env = gymnasium.make("ChickenFoot-v1", num_players=3, max_pip=6, history=history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=False)
    assert isinstance(env.unwrapped, ChickenFootSingleEnv)


@pytest.mark.parametrize("kwargs", [{}, {"reward": "relative", "learner_seat": "random"},
                                    {"num_players": 2, "max_pip": 6, "reward": "points", "learner_seat": 1}])
def test_masked_random_rollout(kwargs):
    env = ChickenFootSingleEnv(**kwargs)
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        total = 0.0
        steps = 0
        while True:
            mask = env.action_masks()
            assert mask.dtype == np.int8 and mask.any()  # every mask of the package is int8 (#25)
            np.testing.assert_array_equal(mask, info["action_mask"])
            np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
            assert env.observation_space.contains(obs)
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            steps += 1
            assert not truncated
            if terminated:
                break
        game = env.aec.game
        assert game.is_over and "winners" in info
        if kwargs.get("reward", "win") == "points":
            assert total == pytest.approx(-game.totals[env.seat] / 100)
        elif kwargs.get("reward", "win") == "win":
            n = game.num_players
            expected = (1 / len(game.winners) if env.seat in game.winners else 0) - 1 / n
            assert total == pytest.approx(expected)


def test_seeded_resets_are_deterministic():
    a, b = ChickenFootSingleEnv(), ChickenFootSingleEnv()
    for seed in (0, 5):
        oa, _ = a.reset(seed=seed)
        ob, _ = b.reset(seed=seed)
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        for _ in range(20):
            act = int(np.flatnonzero(a.action_masks())[0])
            ra = a.step(act)
            rb = b.step(act)
            np.testing.assert_array_equal(ra[0]["observation"], rb[0]["observation"])
            assert ra[1:4] == rb[1:4]
            if ra[2]:
                break


def test_opponents_are_called_with_their_observation():
    calls = []

    def first_legal(obs):
        calls.append(obs["observation"].shape)
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = ChickenFootSingleEnv(opponents=[first_legal, first_legal, first_legal])
    env.reset(seed=3)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert calls and all(shape == (513,) for shape in calls)


def test_illegal_action_terminates_or_raises():
    env = ChickenFootSingleEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert reward == -1.0 and terminated and info["illegal_action"]
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)
    env = ChickenFootSingleEnv(illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_bad_arguments():
    with pytest.raises(ConfigError, match="learner_seat"):
        ChickenFootSingleEnv(learner_seat=4)
    with pytest.raises(ConfigError, match="opponents"):
        ChickenFootSingleEnv(opponents=[lambda o: 0]).reset(seed=0)


def test_render_modes():
    env = ChickenFootSingleEnv(render_mode="ansi")
    env.reset(seed=0)
    assert "hand of player_0" in env.render()
    env = ChickenFootSingleEnv(render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8


def test_agent_opponents_draw_from_the_env_generator():
    """Opponents given as agents (``act(obs, rng)``) get the env's generator: a seed repeats the game."""
    from agents import RandomAgent
    from cf_env import RulesConfig

    def play(seed):
        env = ChickenFootSingleEnv(opponents=RandomAgent(RulesConfig(num_players=3)), num_players=3, rounds=2)
        obs, info = env.reset(seed=seed)
        trace = []
        done = False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            obs, reward, done, _, info = env.step(action)
            trace.append((action, reward))
        return trace, env.aec.game.totals

    assert play(3) == play(3)


@pytest.mark.parametrize("opponents, message", [
    ([1, 2, 3], r"opponents\[0\] is 1 \(int\).*agents.load"),
    (["heuristic"] * 3, r"opponents\[0\] is 'heuristic' \(str\)"),
    ([lambda obs: 0] * 2, "must list 3 opponents"),
    ("heuristic", "must be None, an opponent"),
    ({1: lambda obs: 0, 2: lambda obs: 0}, r"no entry for seats \[3\]"),
    ({1: lambda obs: 0, 2: lambda obs: 0, 7: lambda obs: 0}, r"keys must be seats in \[0, 4\)"),
])
def test_bad_opponents_are_refused_at_construction(opponents, message):
    with pytest.raises(ConfigError, match=message):
        gymnasium.make("ChickenFoot-v1", opponents=opponents)


def test_reset_options_are_checked_before_anything_changes():
    env = ChickenFootSingleEnv(num_players=2, max_pip=6)
    obs, _ = env.reset(seed=1)
    state = env.np_random.bit_generator.state
    with pytest.raises(ConfigError, match="did you mean 'deals'"):
        env.reset(seed=2, options={"deal": []})
    assert env.np_random.bit_generator.state == state
