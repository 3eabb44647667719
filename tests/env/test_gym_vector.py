"""The Gymnasium vector env over the batched engine: the same games as the AEC env, Gymnasium's
vector conventions (spaces, same-step autoreset, episode statistics, seeding), and its opponents."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import cf_env
from agents import GreedyAgent, HeuristicAgent, RandomAgent
from cf_env import ConfigError, IllegalActionError, RulesConfig, raw_env
from cf_env.gym_vector import ChickenFootVectorEnv
from cf_env.vector import random_legal_actions
from tests.scripted import full_deals

SMALL = RulesConfig(max_pip=6, num_players=3, hand_size=5, rounds=3)


def _first_legal(mask: np.ndarray) -> np.ndarray:
    return np.argmax(mask != 0, axis=1)


@pytest.mark.parametrize("config,seat,reward,opponent", [
    (SMALL, 1, "relative", "heuristic"), (RulesConfig(rounds=2), 0, "win", "greedy"),
    (RulesConfig(num_players=2, rounds=3), 1, "points", "heuristic"), (SMALL, 2, "win", "two heuristics")],
    ids=["3p-seat1-relative", "4p-seat0-win-greedy", "2p-seat1-points", "3p-seat2-per-decision"])
def test_games_match_the_aec_env_on_the_same_deals(config, seat, reward, opponent):
    """Learner: first legal action; opponents: a baseline, played in compiled stretches (one agent
    at every other seat) or decision by decision (two agents). Every learner decision's
    observation, mask and reward, the end of each game, its final observation and results are
    the AEC env's."""
    games = 12
    deals = [full_deals(config, 100 + g) for g in range(games)]
    heuristic = GreedyAgent(config) if opponent == "greedy" else HeuristicAgent(config)
    opponents = [HeuristicAgent(config), HeuristicAgent(config)] if opponent == "two heuristics" else opponent
    envs = ChickenFootVectorEnv(games, opponents=opponents, learner_seat=seat, reward=reward, config=config)
    assert (envs._stretch is None) == (opponent == "two heuristics")
    obs, info = envs.reset(seed=0, options={"deals": deals})
    rng = np.random.default_rng(0)
    refs = [raw_env(config=config, reward=reward) for _ in range(games)]
    learner = refs[0].possible_agents[seat]

    def to_learner(env):  # the opponents' moves; what the learner earned on the way
        earned = 0.0
        while not env.game_over and env.agent_selection != learner:
            env.step(heuristic.act(env.observe(env.agent_selection), rng))
            earned += env.rewards[learner]
        return earned

    pending = np.zeros(games)
    for env, d in zip(refs, deals):
        env.reset(options={"deals": d})
    for g, env in enumerate(refs):
        pending[g] = to_learner(env)
    live = np.ones(games, bool)
    steps = 0
    while live.any():
        for g in np.flatnonzero(live):
            ref = refs[g].observe(learner)
            np.testing.assert_array_equal(obs["observation"][g], ref["observation"])
            np.testing.assert_array_equal(obs["action_mask"][g], ref["action_mask"])
            np.testing.assert_array_equal(info["action_mask"][g], ref["action_mask"])
            assert info["seat"][g] == seat
        actions = _first_legal(info["action_mask"])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        steps += 1
        assert not truncated.any()
        for g in np.flatnonzero(live):
            env = refs[g]
            env.step(int(actions[g]))
            earned = pending[g] + env.rewards[learner] + to_learner(env)
            pending[g] = 0.0
            assert rewards[g] == pytest.approx(earned), (g, steps)
            assert terminated[g] == env.game_over
            if env.game_over:
                live[g] = False
                final = info["final_obs"][g]
                ref = env.observe(learner)
                np.testing.assert_array_equal(final["observation"], ref["observation"])
                assert not final["action_mask"].any() and not ref["action_mask"].any()
                assert info["final_info"]["totals"][g].tolist() == list(env.totals)
                assert np.flatnonzero(info["final_info"]["winners"][g]).tolist() == list(env.winners)
                assert info["episode"]["l"][g] == steps
        assert not info.get("_final_obs", np.zeros(games, bool))[live].any()


def test_spaces_autoreset_mode_statistics_and_gymnasium_registration():
    envs = gymnasium.make_vec("ChickenFoot-v1", num_envs=8, vectorization_mode="vector_entry_point",
                              opponents=["greedy", "random"], num_players=3, max_pip=6, hand_size=5, rounds=2,
                              reward="relative")
    assert isinstance(envs.unwrapped, ChickenFootVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.observation_space == batch_space(envs.single_observation_space, 8)
    assert envs.action_space == batch_space(envs.single_action_space, 8)
    obs, info = envs.reset(seed=3)
    assert envs.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    returns, lengths, ended = np.zeros(8), np.zeros(8, int), 0
    for _ in range(400):
        obs, rewards, terminated, truncated, info = envs.step(random_legal_actions(info["action_mask"], rng))
        assert envs.observation_space.contains(obs)
        assert rewards.dtype == np.float64 and terminated.dtype == truncated.dtype == np.bool_
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
        np.testing.assert_array_equal(envs.unwrapped.action_masks(), info["action_mask"])
        assert (info["action_mask"].sum(axis=1) > 0).all()  # the returned obs is always a decision to make
        returns += rewards
        lengths += 1
        if terminated.any():
            assert info["_episode"].tolist() == terminated.tolist() == info["_final_obs"].tolist()
            np.testing.assert_allclose(info["episode"]["r"][terminated], returns[terminated])
            assert info["episode"]["l"][terminated].tolist() == lengths[terminated].tolist()
            assert (info["episode"]["t"][terminated] > 0).all()
            assert all(o is None for o in info["final_obs"][~terminated])
            assert envs.single_observation_space.contains(info["final_obs"][np.flatnonzero(terminated)[0]])
            returns[terminated], lengths[terminated] = 0.0, 0
            ended += int(terminated.sum())
        else:
            assert not info["_episode"].any() and not info["episode"]["l"].any() and "final_obs" not in info
    assert ended >= 8
    envs.close()


def test_box_view_and_seeding_continue_as_gymnasium_does():
    def play(seeds):
        envs = cf_env.vector_env(16, opponents="heuristic", learner_seat="random", obs_type="box", config=SMALL)
        trace = []
        for seed in seeds:
            obs, info = envs.reset(seed=seed)
            rng = np.random.default_rng(1)
            trace.append((obs.copy(), info["seat"].copy()))
            for _ in range(60):
                obs, rewards, terminated, _, info = envs.step(random_legal_actions(info["action_mask"], rng))
                trace.append((obs.copy(), rewards.copy()))
        return trace, envs

    a, envs = play([7, None, None])
    b, _ = play([7, None, None])
    assert isinstance(envs.single_observation_space, gymnasium.spaces.Box)
    assert a[0][0].shape == (16, envs.single_observation_space.shape[0])
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert not np.array_equal(a[0][0], a[61][0])  # reset() continues the generator: new games
    assert len(set(a[0][1].tolist())) > 1  # "random" draws a seat per game


def test_opponents_as_agents_callables_and_self_play():
    seen = []

    def policy(obs, mask):  # the learner's own policy, given the batch waiting on a seat
        seen.append(len(obs))
        assert obs.ndim == 2 and mask.shape == (len(obs), SMALL.num_actions)
        return _first_legal(mask)

    class ActOnly:  # an agent without act_batch: called per game
        def act(self, observation, rng):
            return int(np.flatnonzero(observation["action_mask"])[0])

    envs = ChickenFootVectorEnv(8, opponents=[policy, ActOnly()], config=SMALL)
    obs, info = envs.reset(seed=0)
    for _ in range(30):
        obs, *_, info = envs.step(_first_legal(info["action_mask"]))
    assert seen and max(seen) <= 8
    envs = ChickenFootVectorEnv(8, opponents=[RandomAgent(SMALL)], config=SMALL)  # one agent, every seat
    envs.reset(seed=0)
    assert envs.opponents[0] is envs.opponents[1]


def test_spec_opponents_are_made_by_the_installed_agent_loader(monkeypatch):
    """A spec string is loaded through the distribution's entry point (group
    ``chickenfoot_rl.agents``, ``agents.load``): the env layer never imports the agents package.
    Without one installed, a spec is refused with what to pass instead."""
    import importlib.metadata

    import agents

    (entry,) = importlib.metadata.entry_points(group="chickenfoot_rl.agents", name="load")
    assert entry.load() is agents.load
    envs = ChickenFootVectorEnv(4, opponents=["heuristic"], config=SMALL)
    assert isinstance(envs.opponents[0], HeuristicAgent)
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: importlib.metadata.EntryPoints(()))
    with pytest.raises(ConfigError, match="no agent loader is installed"):
        ChickenFootVectorEnv(4, opponents=["heuristic"], config=SMALL)


def test_bad_input_is_refused_and_changes_nothing():
    with pytest.raises(ConfigError, match="one opponent or 2"):
        ChickenFootVectorEnv(4, opponents=["random"] * 3, config=SMALL)
    with pytest.raises(ConfigError, match=r"opponents\[0\]"):
        ChickenFootVectorEnv(4, opponents=[3, "random"], config=SMALL)
    with pytest.raises(ConfigError, match="history"):
        ChickenFootVectorEnv(4, history=True)
    with pytest.raises(ConfigError, match="vectorization_mode='sync'"):
        gymnasium.make_vec("ChickenFoot-v1", num_envs=2, render_mode="ansi")
    with pytest.raises(ConfigError, match=r"unknown arguments \['num_player'\]"):
        ChickenFootVectorEnv(4, num_player=3)
    with pytest.raises(ConfigError, match="not both"):
        ChickenFootVectorEnv(4, config=SMALL, num_players=3)
    with pytest.raises(ConfigError, match="learner_seat"):
        ChickenFootVectorEnv(4, learner_seat=3, config=SMALL)
    with pytest.raises(ConfigError, match="illegal_action"):
        ChickenFootVectorEnv(4, illegal_action="ignore", config=SMALL)
    envs = ChickenFootVectorEnv(4, illegal_action="raise", config=SMALL)
    with pytest.raises(cf_env.ResetNeededError):
        envs.step(np.zeros(4, np.int64))
    obs, info = envs.reset(seed=0)
    before = envs.vg.state.hand.copy()
    bad = _first_legal(info["action_mask"])
    bad[2] = int(np.flatnonzero(info["action_mask"][2] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"games \[2\]"):
        envs.step(bad)
    with pytest.raises(IllegalActionError, match="4 integer action ids"):
        envs.step(np.zeros(3, np.int64))
    np.testing.assert_array_equal(envs.vg.state.hand, before)
    obs2, *_ = envs.step(_first_legal(info["action_mask"]))  # still usable


def test_gymnasium_vector_wrappers_and_checks_read_it():
    from gymnasium.utils.passive_env_checker import check_obs
    from gymnasium.wrappers.vector import DictInfoToList

    envs = DictInfoToList(ChickenFootVectorEnv(6, opponents="greedy", config=SMALL))
    obs, infos = envs.reset(seed=0)
    check_obs(obs, envs.observation_space, "reset")
    assert len(infos) == 6 and infos[0]["action_mask"].shape == (SMALL.num_actions,)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        masks = np.stack([i["action_mask"] for i in infos])
        obs, _, terminated, _, infos = envs.step(random_legal_actions(masks, rng))
        check_obs(obs, envs.observation_space, "step")
        for g in np.flatnonzero(terminated):
            assert set(infos[g]) >= {"final_obs", "final_info", "episode", "action_mask", "seat"}
            assert infos[g]["final_info"]["totals"].shape == (3,)
            finished += 1
        assert all("final_obs" not in infos[g] for g in np.flatnonzero(~terminated))
    assert finished


def test_step_games_steps_only_the_games_named():
    """Stepping the games in two halves is the same as stepping them all at once."""
    whole = cf_env.VectorGame(SMALL, num_games=10, seed=4)
    halves = cf_env.VectorGame(SMALL, num_games=10, seed=4)
    _, mask, _ = whole.reset()
    halves.reset()
    rng = np.random.default_rng(0)
    for _ in range(120):
        actions = random_legal_actions(mask, rng)
        _, mask, *_ = whole.step(actions)
        first, second = np.arange(0, 10, 2), np.arange(1, 10, 2)
        halves.step_games(second, actions[second])
        halves.step_games(first, actions[first])
        for name in ("hand", "bone", "played", "totals", "current_player", "legal", "deals", "next_deals"):
            np.testing.assert_array_equal(getattr(whole, name), getattr(halves, name), err_msg=name)
        np.testing.assert_array_equal(whole.observations, halves.observations)
    with pytest.raises(IllegalActionError, match="distinct"):
        halves.step_games(np.array([1, 1]), np.array([0, 0]))
    with pytest.raises(IllegalActionError, match="one length"):
        halves.step_games(np.array([1, 2]), np.array([0]))


def test_an_illegal_action_ends_that_game_only_by_default():
    envs = ChickenFootVectorEnv(4, opponents="heuristic", config=SMALL)
    obs, info = envs.reset(seed=0)
    actions = _first_legal(info["action_mask"])
    actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    obs, rewards, terminated, _, info = envs.step(actions)
    assert terminated.tolist() == [False, True, False, False]
    assert rewards[1] == -1.0 and info["illegal_action"].tolist() == [False, True, False, False]
    assert not info["final_info"]["winners"][1].any() and info["final_obs"][1]["action_mask"].sum() == 0
    assert info["episode"]["l"][1] == 1 and info["episode"]["r"][1] == -1.0
    assert info["action_mask"][1].any()  # its next game is already dealt


@pytest.mark.parametrize("opponent", ["heuristic", "random"])
def test_threaded_and_one_thread_stretches_play_the_same_games(opponent):
    """The opponents' compiled stretches in numba's threads and in one thread: the same games,
    rewards and observations, step for step."""
    def run(parallel):
        envs = ChickenFootVectorEnv(96, opponents=opponent, learner_seat="random", reward="relative",
                                    config=SMALL, parallel=parallel)
        obs, info = envs.reset(seed=3)
        out = [obs["observation"].copy()]
        for _ in range(60):
            obs, rewards, terminated, _, info = envs.step(_first_legal(info["action_mask"]))
            out += [obs["observation"].copy(), rewards.copy(), terminated.copy()]
        return out

    assert all(np.array_equal(a, b) for a, b in zip(run(True), run(False), strict=True))
