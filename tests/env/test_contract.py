"""The env's contract with other people's code (STYLE.md habit 17): seeding as Gymnasium and
PettingZoo do it, infos whose keys, shapes and dtypes never change, masks the caller owns, and
registration where users look. The frameworks' own paths over this contract are driven in
tests/integrations/test_own_paths.py."""

from __future__ import annotations

import gymnasium
import numpy as np
import pettingzoo
import pytest

import cf_env
from cf_env import ChickenFootSingleEnv, ConfigError, env, raw_env

SMALL = {"num_players": 3, "max_pip": 6, "rounds": 2}
INFO_KEYS = {"round_scores", "totals", "winners", "rounds_finished"}


def _play(e, rng: np.random.Generator) -> list[int]:
    """One whole game of uniformly random legal actions; its actions, in order."""
    actions = []
    for _agent in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        actions.append(action)
        e.step(action)
    return actions


def _three_games(e) -> list[list[int]]:
    """``reset(seed=7); reset(); reset()``, each game played with the same random player."""
    games = []
    for seed in (7, None, None):
        e.reset(seed=seed)
        games.append(_play(e, np.random.default_rng(0)))
    return games


@pytest.mark.parametrize("factory", [raw_env, env], ids=["raw_env", "env"])
def test_unseeded_reset_continues_the_seeded_generator(factory):
    first, second = _three_games(factory(**SMALL)), _three_games(factory(**SMALL))
    assert first == second  # two fresh envs play the same three games
    assert first[0] != first[1] != first[2]  # and reset() deals new ones, not the seeded game again
    e = factory(**SMALL)
    e.reset(seed=7)
    assert _play(e, np.random.default_rng(0)) == first[0]  # reset(seed) starts over


def test_gym_view_and_its_opponents_continue_the_seeded_generator():
    import agents

    def episodes(seed_first: int) -> list[list[int]]:
        gym_env = ChickenFootSingleEnv(opponents=agents.load("random", cf_env.RulesConfig(**SMALL)),
                                       learner_seat="random", **SMALL)
        out = []
        for seed in (seed_first, None, None):
            obs, info = gym_env.reset(seed=seed)
            seen, done = [info["seat"]], False
            while not done:
                action = int(np.flatnonzero(info["action_mask"])[-1])
                obs, _, done, _, info = gym_env.step(action)
                seen.append(int(obs["observation"].sum() * 1000))  # what the opponents did shows here
            out.append(seen)
        return out

    assert episodes(7) == episodes(7)
    assert episodes(7) != episodes(8)


def test_infos_keep_their_keys_shapes_and_dtypes_from_reset_to_the_end():
    e = env(**SMALL)
    n, rounds = SMALL["num_players"], SMALL["rounds"]
    want = {"round_scores": ((rounds, n), np.int64), "totals": ((n,), np.int64), "winners": ((n,), np.int8)}
    rng = np.random.default_rng(1)
    for seed in range(3):
        e.reset(seed=seed)
        final: dict = {}
        for _agent in e.agent_iter():
            for a in e.agents:  # an agent stepped with None after the end leaves, with its info
                info = e.infos[a]
                assert set(info) == INFO_KEYS, info
                for key, (shape, dtype) in want.items():
                    assert info[key].shape == shape and info[key].dtype == dtype, key
                assert isinstance(info["rounds_finished"], int)
            obs, _, terminated, truncated, info = e.last()
            if (terminated or truncated) and "player_0" in e.infos:
                final = e.infos["player_0"]
            e.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        info = final
        assert info["rounds_finished"] == rounds and (info["round_scores"] >= 0).all()
        assert info["round_scores"].sum(0).tolist() == info["totals"].tolist() == e.totals
        assert np.flatnonzero(info["winners"]).tolist() == e.winners != []
        assert e.round_scores == info["round_scores"].tolist()


def test_an_info_array_keeps_its_values_after_the_next_round():
    e = env(**SMALL)
    e.reset(seed=3)
    kept = e.infos["player_0"]["round_scores"]
    assert (kept == -1).all()  # no round finished: every row is padding
    rng = np.random.default_rng(0)
    while not e.game_over:
        e.step(int(rng.choice(e.legal_actions())))
    assert (kept == -1).all() and (e.infos["player_0"]["round_scores"] >= 0).all()


def test_an_illegal_action_ends_with_no_winners_and_the_same_keys():
    e = env(**SMALL)
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(set(i) == INFO_KEYS for i in e.infos.values())
    assert e.winners == [] and not e.infos["player_0"]["winners"].any()


@pytest.mark.parametrize("kwargs", [{}, {"history": True}], ids=["plain", "history"])
def test_masks_are_new_writeable_arrays_the_env_never_reads_again(kwargs):
    e = raw_env(**SMALL, **kwargs)
    e.reset(seed=2)
    agent = e.agent_selection
    legal = e.legal_actions()
    obs = e.observe(agent)
    mask = obs["action_mask"]
    assert mask.flags.writeable and mask.dtype == np.int8
    assert obs["action_mask"] is not e.observe(agent)["action_mask"]
    mask[:] = 1 - mask  # the caller edits its mask: the env's legal actions do not change
    assert e.legal_actions() == legal
    assert np.flatnonzero(e.observe(agent)["action_mask"]).tolist() == legal
    other = e.observe(e.possible_agents[(e.agent_name_mapping[agent] + 1) % 3])["action_mask"]
    assert other.flags.writeable and not other.any()
    other[:] = 1
    assert not e.observe(e.possible_agents[(e.agent_name_mapping[agent] + 1) % 3])["action_mask"].any()
    e.step(legal[0])  # and plays on as if nothing happened


def test_gym_view_masks_are_three_separate_arrays():
    gym_env = ChickenFootSingleEnv(**SMALL)
    obs, info = gym_env.reset(seed=0)
    masks = [obs["action_mask"], info["action_mask"], gym_env.action_masks()]
    assert len({id(m) for m in masks}) == 3 and all(m.flags.writeable for m in masks)
    legal = np.flatnonzero(masks[0]).tolist()
    obs["action_mask"][:] = 0
    info["action_mask"][:] = 0
    assert np.flatnonzero(gym_env.action_masks()).tolist() == legal
    _, _, _, _, info = gym_env.step(legal[0])
    assert set(info) == INFO_KEYS | {"action_mask", "seat", "illegal_action"} and info["illegal_action"] is False


def test_registered_in_pettingzoo_and_gymnasium_under_the_new_version():
    e = pettingzoo.make("aec", "chickenfoot/chicken_foot_v1", num_players=2)
    assert isinstance(e, raw_env) and e.metadata["name"] == "chicken_foot_v1" and e.illegal_action == "terminate"
    assert pettingzoo.make("aec", "chickenfoot/chicken_foot", num_players=2).metadata["name"] == "chicken_foot_v1"
    par = pettingzoo.make("parallel", "chickenfoot/chicken_foot_v1", num_players=2)
    observations, infos = par.reset(seed=0)
    assert list(observations) == list(infos) == ["player_0", "player_1"]
    assert cf_env.PETTINGZOO_ID == "chickenfoot/chicken_foot_v1" and cf_env.GYMNASIUM_ID == "ChickenFoot-v1"
    g = gymnasium.make("ChickenFoot-v1", num_players=2)
    assert isinstance(g.unwrapped, ChickenFootSingleEnv)
    with pytest.raises(gymnasium.error.DeprecatedEnv, match="ChickenFoot-v1"), \
            pytest.warns(DeprecationWarning, match="out of date"):
        gymnasium.make("ChickenFoot-v0")


@pytest.mark.parametrize("history", [False, True])
def test_box_view_is_the_flat_observation_and_reads_the_mask_apart(history):
    from gymnasium.utils.env_checker import check_env

    kwargs = {**SMALL, "history": history}
    box = ChickenFootSingleEnv(obs_type="box", **kwargs)
    as_dict = ChickenFootSingleEnv(**kwargs)
    assert isinstance(box.observation_space, gymnasium.spaces.Box)
    obs, info = box.reset(seed=4)
    ref, ref_info = as_dict.reset(seed=4)
    want = [ref["observation"]] + ([ref["history"].ravel().astype(np.float32)] if history else [])
    np.testing.assert_array_equal(obs, np.concatenate(want))
    assert box.observation_space.contains(obs)
    np.testing.assert_array_equal(box.action_masks(), ref_info["action_mask"])
    np.testing.assert_array_equal(info["action_mask"], ref_info["action_mask"])
    check_env(box, skip_render_check=True)
    with pytest.raises(ConfigError, match="obs_type"):
        ChickenFootSingleEnv(obs_type="flat")
