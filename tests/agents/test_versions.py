"""Observation versions: a network trained on version 1 loads and plays on version 2's vectors,
and a version-1 network widened to version 2 (or grown into wider layers) plays exactly as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, grow_hidden, observation_scale, widen_weights
from cf_env import OBSERVATION_VERSION, Game, GameEncoder, RulesConfig
from tests.scripted import random_positions
from training.run import load_weights

CONFIG = RulesConfig(num_players=3, rounds=2)


def _v1_checkpoint(tmp_path):
    enc = GameEncoder(CONFIG, version=1)
    torch.manual_seed(0)
    model = ActorCritic(enc.size, CONFIG.num_actions, (16, 16), obs_scale=observation_scale(CONFIG, 1),
                        observation_version=1)
    payload = model_payload(model, CONFIG, 0, {})
    payload["model_kwargs"].pop("observation_version")  # as the v1 package wrote it
    path = save_checkpoint(tmp_path / "v1.pt", {**payload, "observation_version": 1})
    return model, path


def test_a_v1_checkpoint_plays_on_v2_observations_as_it_did_on_v1(tmp_path):
    model, path = _v1_checkpoint(tmp_path)
    assert load_checkpoint(path)["observation_version"] == 1
    agent = TorchAgent.from_checkpoint(path, CONFIG)
    assert agent.model.observation_version == 1 and OBSERVATION_VERSION == 2
    v1, v2 = GameEncoder(CONFIG, version=1), GameEncoder(CONFIG)
    for game, seat in random_positions(CONFIG):
        mask = torch.as_tensor(v2.mask(game.legal_bits).astype(bool))[None]
        with torch.no_grad():
            direct, _ = model(torch.as_tensor(v1.encode(game, seat))[None], mask)
        probs = agent.probabilities({"observation": v2.encode(game, seat), "action_mask": v2.mask(game.legal_bits)})
        np.testing.assert_allclose(probs, torch.softmax(direct, -1)[0].numpy(), atol=1e-6)
    assert isinstance(agents.load(str(path), CONFIG), TorchAgent)  # the spec path eval and play use


def test_a_v1_network_widened_to_v2_plays_the_same(tmp_path):
    model, path = _v1_checkpoint(tmp_path)
    v2 = GameEncoder(CONFIG)
    wide = ActorCritic(v2.size, CONFIG.num_actions, (16, 16), obs_scale=observation_scale(CONFIG))
    load_weights(wide, CONFIG, str(path))
    assert wide.observation_version == 2
    first = wide.trunk[0].weight.detach()
    new_columns = np.setdiff1d(np.arange(v2.size), GameEncoder(CONFIG, 1).index)
    assert (first[:, new_columns] == 0).all()  # the new features start unused
    for game, seat in random_positions(CONFIG, seed=1):
        obs = torch.as_tensor(v2.encode(game, seat))[None]
        mask = torch.as_tensor(v2.mask(game.legal_bits).astype(bool))[None]
        with torch.no_grad():
            a, va = TorchAgent.from_checkpoint(path, CONFIG).model(obs, mask)
            b, vb = wide(obs, mask)
        np.testing.assert_allclose(torch.softmax(a, -1).numpy(), torch.softmax(b, -1).numpy(), atol=1e-5)
        np.testing.assert_allclose(va.numpy(), vb.numpy(), atol=1e-5)
    other = ActorCritic(v2.size, CONFIG.num_actions, (8, 8))
    with pytest.raises(CheckpointError, match="set hidden to match"):
        load_weights(other, CONFIG, str(path))
    with pytest.raises(ValueError):
        widen_weights(model, ActorCritic(v2.size, CONFIG.num_actions, (8, 8)), CONFIG)


def test_a_network_grown_into_wider_layers_plays_the_same_and_trains_its_new_units(tmp_path):
    model, path = _v1_checkpoint(tmp_path)  # (16, 16), v1: widened to v2 and grown in one load
    v2 = GameEncoder(CONFIG)
    torch.manual_seed(1)
    big = ActorCritic(v2.size, CONFIG.num_actions, (24, 40), obs_scale=observation_scale(CONFIG))
    load_weights(big, CONFIG, str(path))
    assert (big.trunk[2].weight[:16, 16:] == 0).all() and (big.policy.weight[:, 16:] == 0).all()
    assert (big.trunk[2].weight[16:, 16:] != 0).any()  # the new units keep their own init
    reference = TorchAgent.from_checkpoint(path, CONFIG).model
    rows = [(torch.as_tensor(v2.encode(g, s))[None], torch.as_tensor(v2.mask(g.legal_bits).astype(bool))[None])
            for g, s in random_positions(CONFIG, seed=2)]
    for obs, mask in rows:
        with torch.no_grad():
            a, va = reference(obs, mask)
            b, vb = big(obs, mask)
        np.testing.assert_allclose(torch.softmax(a, -1).numpy(), torch.softmax(b, -1).numpy(), atol=1e-5)
        np.testing.assert_allclose(va.numpy(), vb.numpy(), atol=1e-5)
    obs, mask = torch.cat([r[0] for r in rows]), torch.cat([r[1] for r in rows])
    logits, value = big(obs, mask)
    (torch.log_softmax(logits, -1).masked_fill(~mask, 0).sum() + value.sum()).backward()
    assert big.policy.weight.grad[:, 16:].abs().sum() > 0  # training reaches the new units
    with pytest.raises(CheckpointError, match="or wider, layer by layer"):
        load_weights(ActorCritic(v2.size, CONFIG.num_actions, (16, 8)), CONFIG, str(path))
    with pytest.raises(CheckpointError, match="or wider, layer by layer"):
        load_weights(ActorCritic(v2.size, CONFIG.num_actions, (16, 16, 16)), CONFIG, str(path))
    with pytest.raises(CheckpointError, match="at least as wide"):
        grow_hidden(big, ActorCritic(v2.size, CONFIG.num_actions, (16, 16)))


def test_an_unknown_observation_version_is_refused(tmp_path):
    model, path = _v1_checkpoint(tmp_path)
    payload = model_payload(model, CONFIG, 0, {})
    bad = save_checkpoint(tmp_path / "v9.pt", {**payload, "observation_version": 9})
    with pytest.raises(CheckpointError, match="observation layout v9, this package reads v1, v2"):
        load_checkpoint(bad)
    with pytest.raises(Exception, match="observation version 9"):
        GameEncoder(CONFIG, version=9)


V1_NETWORK = str(Path(__file__).resolve().parents[1] / "fixtures" / "strong-4p-v1.pt")


def test_a_v1_network_plays_search_rollouts_and_eval():
    """The 4-player network of observation version 1 (``tests/fixtures/strong-4p-v1.pt``, once
    shipped as zoo:strong-4p-v1) as the rollout policy of a search, and seated in an evaluation
    next to the v2 network."""
    from training.evaluate import evaluate

    config = RulesConfig()
    encoder = GameEncoder(config)
    game, rng = Game(config, seed=3), np.random.default_rng(3)
    while len(game.legal_actions()) < 2:
        game.apply(game.legal_actions()[0])
    searcher = agents.load(f"search:rollout={V1_NETWORK}:ms=0:sims=2", config)
    action = searcher.act(encoder.observe(game), rng)
    assert action in game.legal_actions() and searcher.last_search["rollout_decisions"] > 0
    lineup = [V1_NETWORK] + ["zoo:strong-4p"] * 3
    report = evaluate(lineup, config=RulesConfig(rounds=1), deal_sets=1, seed=0, progress=False)
    assert {r.spec for r in report.results} == {V1_NETWORK, "zoo:strong-4p"}
