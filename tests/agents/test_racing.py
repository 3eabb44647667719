"""The racing search (``search:race=Z``) and the heuristic scored from the batched engine's state:
the teacher's speed-ups must not change what it computes."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.baselines import HeuristicAgent, score_plays, score_plays_state
from agents.search.racing import drop_settled
from cf_env import Game, GameEncoder, RulesConfig
from cf_env.vector import VectorGame

CONFIGS = [RulesConfig(), RulesConfig(num_players=2), RulesConfig(num_players=3, max_pip=6, center_arms=3),
           RulesConfig(num_players=6, max_pip=12, draw_rule="until_playable")]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_heuristic_scores_alike_from_the_state_and_from_the_observation(config):
    """score_plays_state (the rollouts') equals score_plays (the agent's) to the bit, over every
    decision with plays of 32 games played by random moves."""
    tables = HeuristicAgent(config).kernel_tables
    k, t = config.max_pip + 1, config.num_tiles
    vg = VectorGame(config, num_games=32, reward="relative", seed=3)
    obs, mask, _ = vg.reset()
    rng = np.random.default_rng(0)
    work, open_after, mine = np.zeros((3, k)), np.zeros(k, np.bool_), np.zeros(t, np.int64)
    state = vg.state
    compared = 0
    for _ in range(100):
        for b in range(vg.num_games):
            plays = np.flatnonzero(mask[b, :k * k]).astype(np.int64)
            if plays.size:
                from_obs, from_state = np.zeros(plays.size), np.zeros(plays.size)
                score_plays(obs[b], plays, from_obs, tables)
                score_plays_state(state, b, plays, from_state, tables, work[0], work[1], work[2], open_after, mine)
                assert np.array_equal(from_obs, from_state)
                compared += 1
        obs, mask, *_ = vg.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
    assert compared > 1000


def test_drop_settled_drops_the_clearly_worse_and_the_tied_and_keeps_the_close():
    rng = np.random.default_rng(0)
    worlds = 64
    base = rng.normal(0, 1, worlds)
    values = np.stack([base + 0.5,  # the leader
                       base + 0.5 + rng.normal(0, 0.05, worlds) - 0.3,  # clearly worse (paired noise is small)
                       base + 0.5,  # the same in every world: tied
                       base + 0.5 + rng.normal(0, 1.0, worlds) - 0.05,  # close and noisy: kept
                       ], axis=1)
    active = np.ones(4, np.bool_)
    leader = drop_settled(values, worlds, active, 2.0, 0.01)
    assert leader == 0 and active.tolist() == [True, False, False, True]
    # dropped actions stay dropped; a leader is chosen among the running ones only
    active[:] = [False, True, True, True]
    assert drop_settled(values, worlds, active, 2.0, 0.01) in (1, 2, 3)


def decision_views(config, count, seed):
    enc, heuristic = GameEncoder(config), HeuristicAgent(config)
    rng = np.random.default_rng(seed)
    views, game_seed = [], seed
    while len(views) < count:
        game = Game(config, seed=game_seed)
        game_seed += 1
        while not game.is_over and len(views) < count:
            view = enc.observe(game)
            if len(game.legal_actions()) > 2 and rng.random() < 0.3:
                views.append(view)
            game.apply(heuristic.act(view, rng))
    return views


@pytest.mark.parametrize("config", CONFIGS[:2])
def test_racing_values_are_the_plain_searchs_on_the_worlds_each_action_saw(config):
    """With the heuristic rollouts (which draw no random numbers) a racing search deals the same
    worlds as the plain one: each action's value is the plain search's mean over its first
    ``worlds`` worlds, the action that ran to the end has all of them, and fewer rollouts are played."""
    sims = 64
    plain = agents.load(f"search:ms=0:sims={sims}", config)
    racing = agents.load(f"search:ms=0:sims={sims}:race=2", config)
    saved = 0
    for i, view in enumerate(decision_views(config, 12, seed=5)):
        racing.act(view, np.random.default_rng(i))
        info = racing.last_search
        legal = np.flatnonzero(view["action_mask"]).astype(np.int64)
        assert np.array_equal(info["actions"], legal)
        # the plain search's value of every action in every world, from the same generator state
        actions, values = plain.world_values(view, np.random.default_rng(i), sims)
        assert np.array_equal(actions, legal)
        for a, seen in enumerate(info["worlds"]):
            assert 16 <= seen <= sims
            assert info["scores"][a] == pytest.approx(values[:seen, a].mean(), abs=1e-12)
        chosen = int(np.flatnonzero(legal == racing.act(view, np.random.default_rng(i)))[0])
        assert info["worlds"][chosen] == info["worlds"].max() == info["simulations"]
        plain.act(view, np.random.default_rng(i))
        assert np.allclose(plain.last_search["scores"], values.mean(axis=0), atol=1e-12)  # the plain search's own
        saved += plain.last_search["rollout_decisions"] - info["rollout_decisions"]
    assert saved > 0


def test_racing_keeps_the_clock():
    config = RulesConfig()
    agent = agents.load("search:ms=5:sims=100000:race=2", config)
    spent = []
    for i, view in enumerate(decision_views(config, 6, seed=2)):
        agent.act(view, np.random.default_rng(i))
        spent.append(agent.last_search["seconds"])
    assert max(spent) < 1.0  # a loose bound: the clock is read between compiled calls
