"""The batched engine is the same game as the AEC env (one game of the same kernels, itself checked
against the reference engine in test_core.py), bit for bit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from cf_env import IllegalActionError, ResetNeededError, RulesConfig, raw_env
from cf_env.vector import VectorGame, random_legal_actions
from tests.scripted import full_deals

CONFIGS = [
    RulesConfig(),
    RulesConfig(center_arms=3),
    RulesConfig(center_arms=6, draw_rule="until_playable"),
    RulesConfig(max_pip=3, num_players=2, hand_size=3, center_arms=3),
    RulesConfig(max_pip=3, num_players=3, hand_size=1, center_arms=2, draw_rule="until_playable"),
    RulesConfig(max_pip=6, num_players=3, hand_size=5, rounds=4, double_blank_points=25),
    RulesConfig(max_pip=12, num_players=8, hand_size=9, rounds=3),
    RulesConfig(max_pip=15, num_players=5, hand_size=12, rounds=2, center_arms=4),
    RulesConfig(max_pip=18, num_players=2, hand_size=15, rounds=2, draw_rule="until_playable"),
    RulesConfig(max_pip=18, num_players=8, hand_size=20, rounds=1, center_arms=6),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"p{c.num_players}d{c.max_pip}a{c.center_arms}{c.draw_rule[0]}")
@pytest.mark.parametrize("reward", ["win", "points", "relative"])
def test_vector_matches_aec_env_step_by_step(config, reward):
    games = 48 if config.max_pip < 12 else 16  # 1056 scripted games over the 30 cases
    deals = [full_deals(config, 1000 * g + 7) for g in range(games)]
    vg = VectorGame(config, num_games=games, reward=reward, points_scale=50)
    obs, mask, seat = vg.reset(seed=0, deals=deals)
    envs = [raw_env(config=config, reward=reward, points_scale=50) for _ in range(games)]
    for env, d in zip(envs, deals):
        env.reset(options={"deals": d})
    live = np.ones(games, dtype=bool)
    rng = np.random.default_rng(1)
    steps = 0
    while live.any():
        for g in np.flatnonzero(live):
            env = envs[g]
            agent = env.agent_selection
            assert seat[g] == env.possible_agents.index(agent)
            ref = env.observe(agent)
            np.testing.assert_array_equal(mask[g], ref["action_mask"])
            np.testing.assert_array_equal(obs[g], ref["observation"])
        actions = random_legal_actions(mask, rng)
        obs, mask, seat, rewards, done = vg.step(actions)
        steps += 1
        for g in np.flatnonzero(live):
            env = envs[g]
            env.step(int(actions[g]))
            expected = [env.rewards[a] for a in env.possible_agents]
            assert rewards[g].tolist() == expected, (g, steps)
            if env.game_over:
                assert done[g]
                assert vg.final_totals[g].tolist() == env.totals
                assert np.flatnonzero(vg.final_winners[g]).tolist() == env.winners
                live[g] = False
            else:
                assert not done[g]


def test_auto_reset_and_seeding_are_deterministic():
    config = RulesConfig(max_pip=6, num_players=3, hand_size=5, rounds=2)

    def run(seed):
        vg = VectorGame(config, num_games=32, reward="relative", seed=seed)
        obs, mask, seat = vg.reset()
        rng = np.random.default_rng(seed)
        trace = []
        finished = 0
        for _ in range(600):
            obs, mask, seat, rewards, done = vg.step(random_legal_actions(mask, rng))
            finished += int(done.sum())
            trace.append((obs.sum(), rewards.sum(), int(done.sum()), vg.final_totals[done].sum()))
        return trace, finished, obs.copy()

    a, fa, oa = run(3)
    b, fb, ob = run(3)
    c, _, oc = run(4)
    assert a == b and fa == fb and fa > 32  # every game finished at least once and restarted
    np.testing.assert_array_equal(oa, ob)
    assert not np.array_equal(oa, oc)


@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[2], CONFIGS[4], CONFIGS[7],
                                    RulesConfig(max_pip=1, num_players=2, hand_size=1, rounds=1, center_arms=1)],
                         ids=lambda c: f"p{c.num_players}d{c.max_pip}h{c.hand_size}")
def test_threaded_and_one_thread_kernels_play_the_same_games(config):
    # the last rules void some deals (1-tile hands), so the redeal kernels are compared too
    def run(parallel):
        vg = VectorGame(config, num_games=24, reward="relative", seed=5, parallel=parallel)
        assert vg.parallel is parallel
        obs, mask, seat = vg.reset()
        rng = np.random.default_rng(5)
        trace = [(obs.copy(), mask.copy(), seat.copy())]
        for _ in range(250):
            obs, mask, seat, rewards, done = vg.step(random_legal_actions(mask, rng))
            trace.append((obs.copy(), mask.copy(), seat.copy(), rewards.copy(), done.copy(),
                          vg.final_totals.copy(), vg.reset_rewards.copy()))
        return trace, vg.void_games.copy()

    (threaded, void_t), (serial, void_s) = run(True), run(False)
    np.testing.assert_array_equal(void_t, void_s)
    for a, b in zip(threaded, serial):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[2], CONFIGS[4], CONFIGS[8]],
                         ids=lambda c: f"p{c.num_players}d{c.max_pip}{c.draw_rule[0]}")
def test_the_inlined_decision_is_the_compiled_calls(config):
    """apply_action_inline (inlined into the rollouts) changes a game's state exactly as
    apply_action (a compiled call, the VectorGame kernels'): two copies of 8 games take the same
    400 random moves each (round and game ends included), and every State array ends equal."""
    from numba import njit

    from cf_env.vector import apply_action, apply_action_inline, make_consts

    @njit
    def play_both(a_state, b_state, c, actions, legal_seen):
        for g in range(a_state.current_player.shape[0]):
            for step in range(actions.shape[1]):
                if a_state.current_player[g] < 0:
                    break
                count = 0
                for x in range(a_state.legal.shape[1]):
                    count += a_state.legal[g, x]
                pick = actions[g, step] % count
                for x in range(a_state.legal.shape[1]):
                    if a_state.legal[g, x]:
                        if pick == 0:
                            apply_action(g, x, a_state, c)
                            apply_action_inline(g, x, b_state, c)
                            legal_seen[g] += 1
                            break
                        pick -= 1

    vg = VectorGame(config, num_games=8, reward="relative", seed=11, parallel=False)
    vg.reset()
    rng = np.random.default_rng(11)
    actions = rng.integers(0, 1 << 30, size=(8, 400))
    twin = type(vg.state)(*(x.copy() for x in vg.state))
    seen = np.zeros(8, np.int64)
    play_both(vg.state, twin, make_consts(config, "relative"), actions, seen)
    assert seen.min() > 30
    for name, a, b in zip(vg.state._fields, vg.state, twin):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_threads_are_chosen_by_the_number_of_games_unless_asked():
    from cf_env.engine.errors import ConfigError
    from cf_env.vector import PARALLEL_MIN_GAMES

    assert not VectorGame(num_games=PARALLEL_MIN_GAMES - 1).parallel
    assert VectorGame(num_games=PARALLEL_MIN_GAMES).parallel
    assert VectorGame(num_games=4, parallel=True).parallel
    assert not VectorGame(num_games=4096, parallel=False).parallel
    with pytest.raises(ConfigError, match="parallel"):
        VectorGame(num_games=4, parallel="yes")


def test_illegal_actions_are_rejected_and_change_nothing():
    vg = VectorGame(RulesConfig(), num_games=4, seed=0)
    with pytest.raises(ResetNeededError, match="reset"):
        vg.step(np.zeros(4, dtype=np.int64))
    obs, mask, seat = vg.reset()
    before = (vg.hand.copy(), obs.copy())
    bad = random_legal_actions(mask, np.random.default_rng(0))
    bad[2] = int(np.flatnonzero(mask[2] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"games \[2\]"):
        vg.step(bad)
    with pytest.raises(IllegalActionError):
        vg.step(np.zeros(3, dtype=np.int64))
    np.testing.assert_array_equal(vg.hand, before[0])
    np.testing.assert_array_equal(vg.observations, before[1])


def test_a_game_that_ends_during_set_up_does_not_hang():
    # 1-tile hands: the holder of the starting double goes out placing it, so a new game can end
    # before anyone decides; the kernel used to copy the same next deal forever. A hang inside numba
    # cannot be interrupted, so the reproducer runs in a child process with a deadline.
    script = (
        "import numpy as np\n"
        "from cf_env import RulesConfig\n"
        "from cf_env.vector import VectorGame, random_legal_actions\n"
        "cfg = RulesConfig(max_pip=1, num_players=2, hand_size=1, rounds=1, center_arms=1)\n"
        "VectorGame(cfg, num_games=1, seed=0).reset()\n"
        "vg = VectorGame(cfg, num_games=1, seed=1)\n"
        "obs, mask, seat = vg.reset()\n"
        "vg.step(random_legal_actions(mask, np.random.default_rng(0)))\n"
        "print('ok', int(vg.void_games.sum()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok")


@pytest.mark.parametrize("max_pip", [1, 2, 3, 6])
def test_one_tile_hands_sweep(max_pip):
    """hand_size 1 over player counts and arm counts: every step hands a decision to a real seat,
    void games are dealt again, and finished games report winners."""
    for players in range(2, min(8, max_pip * (max_pip + 1) // 2) + 1):
        for arms in sorted({1, min(4, max_pip), max_pip}):
            cfg = RulesConfig(max_pip=max_pip, num_players=players, hand_size=1, center_arms=arms,
                              rounds=min(max_pip + 1, 3))
            vg = VectorGame(cfg, num_games=16, seed=players * 10 + arms)
            obs, mask, seat = vg.reset()
            rng = np.random.default_rng(0)
            finished = 0
            for _ in range(60):
                assert ((seat >= 0) & (seat < players)).all()
                assert (mask.sum(axis=1) > 0).all()
                obs, mask, seat, rewards, done = vg.step(random_legal_actions(mask, rng))
                finished += int(done.sum())
                assert (vg.final_winners[done].sum(axis=1) >= 1).all()
            assert finished > 0
