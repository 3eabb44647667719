"""The action-scoring policy head (agents.torch_policy.ActionScorer): what it reads of each pip
value, that a network given one plays as before until trained, and that it saves, loads and fits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from agents.checkpoint import CheckpointError, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, grow_hidden, observation_scale
from cf_env import GameEncoder, RulesConfig
from tests.scripted import random_positions
from training import distill
from training.run import load_weights

CONFIG = RulesConfig(num_players=3, rounds=2)
ENC = GameEncoder(CONFIG)


def _network(action_head: int, hidden=(16, 16), seed=0) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(ENC.size, CONFIG.num_actions, hidden, obs_scale=observation_scale(CONFIG),
                       action_head=action_head, max_pip=CONFIG.max_pip, num_players=CONFIG.num_players)


def _batch(rows):
    obs = torch.as_tensor(np.stack([ENC.encode(g, s) for g, s in rows]))
    mask = torch.as_tensor(np.stack([ENC.mask(g.legal_bits).astype(bool) for g, _ in rows]))
    return obs, mask


def test_the_value_table_is_what_the_position_says_of_each_pip_value():
    rows = random_positions(CONFIG, count=60)
    obs, _ = _batch(rows)
    table = _network(8).scorer.value_table(obs).numpy()
    k = CONFIG.max_pip + 1
    assert table.shape == (len(rows), k + 1, 7 + 3 * (CONFIG.num_players - 1))
    for (game, seat), values in zip(rows, table):
        hand = game.hand(seat)
        ends = game.open_ends
        for v in range(k):
            assert values[v, 0] * 3 == pytest.approx(sum(v in (t.low, t.high) for t in hand))
            assert values[v, 2] * 4 == pytest.approx(ends[v])
            assert values[v, 4] == any(t.low == t.high == v for t in hand)
        assert not values[k, :6].any() and values[k, 6] == 1  # DRAW and PASS: no pip value
    void = obs[:, ENC.slices["void"]].reshape(len(rows), CONFIG.num_players - 1, k).numpy()
    np.testing.assert_array_equal(table[:, :k, 7:7 + CONFIG.num_players - 1], void.transpose(0, 2, 1))


def test_a_network_given_an_action_head_plays_as_before_and_trains_it(tmp_path):
    plain = _network(0)
    path = save_checkpoint(tmp_path / "plain.pt", model_payload(plain, CONFIG, 0, {}))
    headed = _network(8, seed=1)
    load_weights(headed, CONFIG, str(path))
    obs, mask = _batch(random_positions(CONFIG, seed=2, count=60))
    with torch.no_grad():
        a, va = plain(obs, mask)
        b, vb = headed(obs, mask)
    assert torch.equal(a, b) and torch.equal(va, vb)
    logits, value = headed(obs, mask)
    (torch.log_softmax(logits, -1).masked_fill(~mask, 0).sum() + value.sum()).backward()
    assert headed.scorer.value_out.weight.grad.abs().sum() > 0 and headed.scorer.tile.weight.grad.abs().sum() > 0
    # once trained, plays that share a value share what the head says of it
    with torch.no_grad():
        headed.scorer.value_out.weight.normal_()
        assert not torch.equal(headed(obs, mask)[0], a)
    headed_path = save_checkpoint(tmp_path / "headed.pt", model_payload(headed, CONFIG, 0, {}))
    with pytest.raises(CheckpointError, match="set action_head to match"):
        load_weights(_network(4), CONFIG, str(headed_path))
    with pytest.raises(CheckpointError, match="same action head"):
        grow_hidden(headed, _network(0))
    with pytest.raises(CheckpointError, match="set action_head to match"):
        load_weights(_network(0), CONFIG, str(headed_path))


def test_a_network_with_an_action_head_saves_and_loads(tmp_path):
    model = _network(8)
    with torch.no_grad():
        model.scorer.value_out.weight.normal_()
        model.scorer.tile.weight.normal_()
    path = save_checkpoint(tmp_path / "net.pt", model_payload(model, CONFIG, 0, {}))
    agent = agents.load(str(path), CONFIG)
    assert isinstance(agent, TorchAgent) and agent.model.kwargs() == model.kwargs()
    obs, mask = _batch(random_positions(CONFIG, seed=3, count=60))
    with torch.no_grad():
        assert torch.equal(agent.model(obs, mask)[0], model(obs, mask)[0])
    with pytest.raises(ValueError, match="max_pip and num_players"):
        ActorCritic(ENC.size, CONFIG.num_actions, (8,), action_head=8)


def test_fit_builds_and_trains_an_action_head():
    rows = random_positions(CONFIG, seed=4, count=80)
    obs, mask = _batch(rows)
    rng = np.random.default_rng(0)
    q = (rng.random(mask.shape) * mask.numpy()).astype(np.float32)
    labels = {"obs": obs.numpy(), "mask": mask.numpy(), "q": q, "choice": q.argmax(1).astype(np.int16),
              "ret": np.zeros(len(rows), np.float32)}
    settings = distill.FitSettings(temperature=0.05, epochs=20, hidden=(16, 16), action_head=8, learning_rate=3e-3)
    model, stats = distill.fit(labels, CONFIG, settings, progress=False)
    assert model.scorer is not None and model.scorer.value_out.weight.abs().sum() > 0
    assert stats["history"][-1]["cross_entropy"] < stats["history"][0]["cross_entropy"]


def test_the_ppo_trainer_builds_and_saves_an_action_head(tmp_path):
    from pathlib import Path

    from training.config import load_config
    from training.ppo import Trainer

    smoke = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"
    cfg = load_config(smoke, runs_dir=str(tmp_path), total_steps=256, bc_games=0, eval_deal_sets=0, action_head=8)
    out = Trainer(cfg, progress=False).run()
    agent = agents.load(str(out["checkpoint"]), cfg.rules_config)
    assert agent.model.action_head == 8 and agent.model.scorer.value_out.weight.abs().sum() > 0
