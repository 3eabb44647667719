"""The learned belief in the search (infer=belief): its spec, its file, and what it does to the worlds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from agents.baselines import HeuristicAgent
from agents.search.belief import BeliefNet, load_belief
from agents.search.spec import SearchSpecError, parse_search_spec
from agents.search.worlds import sample_worlds
from cf_env import ConfigError, ObservationEncoder, RulesConfig, raw_env
from cf_env.engine import Game

CONFIG = RulesConfig(rounds=2)


@pytest.fixture(scope="module")
def belief_file(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("belief") / "belief.pt"
    torch.save(BeliefNet(CONFIG, (8,)).payload(), path)
    return path


def test_infer_belief_and_its_file_go_together(belief_file):
    with pytest.raises(SearchSpecError, match="go together"):
        parse_search_spec("search:infer=belief")
    with pytest.raises(SearchSpecError, match="go together"):
        parse_search_spec(f"search:belief={belief_file}")
    assert parse_search_spec(f"search:infer=belief:belief={belief_file}").belief == str(belief_file)
    with pytest.raises(ConfigError, match="no belief network at"):
        agents.load("search:ms=0:sims=2:infer=belief:belief=missing.pt", CONFIG)
    with pytest.raises(ConfigError, match="was trained for"):
        load_belief(belief_file, RulesConfig(num_players=3))


def test_the_belief_reads_the_observation_as_the_sampler_wants_it(belief_file):
    net = load_belief(belief_file, CONFIG)
    env = raw_env(**CONFIG.to_dict())
    env.reset(seed=0)
    rows = net.seat_rows(env.observe(env.agent_selection)["observation"])
    n, t = CONFIG.num_players, CONFIG.num_tiles
    assert rows.shape == (n + 1, t) and rows.dtype == np.float64
    assert not rows[0].any()
    np.testing.assert_allclose(np.exp(rows[1:]).sum(0), 1.0, rtol=1e-5)  # each tile lies somewhere
    assert np.exp(rows[n]).max() > 0  # the boneyard holds tiles at the start
    closed = 0
    for _ in range(120):  # the numpy forward pass is the network's
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
        if env.game_over:
            break
        obs = env.observe(env.agent_selection)["observation"]
        with torch.no_grad():
            direct = net(torch.as_tensor(obs)[None])[0].numpy().T
        rows, shut = net.seat_rows(obs)[1:], direct < -1e8  # an empty hand or boneyard holds nothing
        np.testing.assert_allclose(rows[~shut], direct[~shut], rtol=1e-4, atol=1e-4)
        assert (rows[shut] < -1e8).all()
        closed += shut.any()
    assert closed  # the empty boneyard was met


def test_a_sharper_belief_deals_worlds_nearer_the_truth():
    """With a belief that favours each tile's true location, the resampled worlds hold more of the
    opponents' true tiles than the constraint sampler's, and keep every hand size."""
    encoder = ObservationEncoder(CONFIG)
    n = CONFIG.num_players
    heuristic = HeuristicAgent(CONFIG)
    share = {"constraints": [], "belief": []}
    for seed in range(4):
        game, rng = Game(CONFIG, seed=seed), np.random.default_rng(seed)
        for _ in range(12):
            game.apply(heuristic.act({"observation": encoder.encode(game, game.current_player),
                                      "action_mask": encoder.mask(game.legal_bits)}, rng))
        seat = game.current_player
        observation = {"observation": encoder.encode(game, seat), "action_mask": encoder.mask(game.legal_bits)}
        truth = np.full((n + 1, CONFIG.num_tiles), np.log(0.1))
        for i in range(1, n):
            truth[i, [t.index for t in game.hand((seat + i) % n)]] = 0.0
        truth[n, game.boneyard_tiles()] = 0.0
        for mode in share:
            worlds = sample_worlds(observation, 16, np.random.default_rng(seed), encoder, infer=mode, proposals=16,
                                   belief=truth if mode == "belief" else None)
            for i in range(1, n):
                assert (worlds.hands[:, i].sum(1) == game.hand_sizes[(seat + i) % n]).all()
            share[mode].append(np.mean([worlds.hands[:, i][:, truth[i] == 0].sum() / worlds.hands[:, i].sum()
                                        for i in range(1, n)]))
    assert np.mean(share["belief"]) > np.mean(share["constraints"]) + 0.1, share


@pytest.mark.parametrize("mode", ["belief", "both"])
def test_a_search_with_a_belief_plays_whole_games(belief_file, mode):
    agent = agents.load(f"search:ms=0:sims=4:infer={mode}:belief={belief_file}", CONFIG)
    env = raw_env(**CONFIG.to_dict(), history=agent.needs_history)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agent.act(obs, rng)
        assert obs["action_mask"][action]
        env.step(action)
    assert env.game_over


def test_infer_both_is_the_product_of_the_belief_and_the_opponent_model(belief_file):
    """``infer=both`` weighs each candidate world by the belief network and by the opponents' plays:
    with a belief that says nothing (all tiles equally likely everywhere) it deals ``policy``'s
    worlds, and with no opponent play to explain it deals ``belief``'s, from the same generator."""
    with pytest.raises(SearchSpecError, match="go together"):
        parse_search_spec("search:infer=both")
    assert agents.load(f"search:ms=0:sims=2:infer=both:belief={belief_file}", CONFIG).needs_history
    encoder = ObservationEncoder(CONFIG)
    n, t = CONFIG.num_players, CONFIG.num_tiles
    heuristic = HeuristicAgent(CONFIG)
    env = raw_env(**CONFIG.to_dict(), history=True)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    first = env.observe(env.agent_selection)  # nobody has played: nothing for the opponent model
    for _ in range(14):
        env.step(heuristic.act(env.observe(env.agent_selection), rng))
    later = env.observe(env.agent_selection)
    assert later["history"].size
    sharp = np.random.default_rng(0).normal(0.0, 2.0, (n + 1, t))
    sharp[0] = 0.0

    def deal(observation, mode, belief):
        return sample_worlds(observation, 24, np.random.default_rng(7), encoder, infer=mode, proposals=8, belief=belief)

    flat = deal(later, "both", np.zeros((n + 1, t)))
    policy = deal(later, "policy", None)
    np.testing.assert_array_equal(flat.hands, policy.hands)
    np.testing.assert_array_equal(flat.boneyards, policy.boneyards)
    mixed, belief_only = deal(first, "both", sharp), deal(first, "belief", sharp)
    np.testing.assert_array_equal(mixed.hands, belief_only.hands)
    # and with both at work the worlds differ from either alone
    assert not np.array_equal(deal(later, "both", sharp).hands, policy.hands)
    assert not np.array_equal(deal(later, "both", sharp).hands, deal(later, "belief", sharp).hands)
