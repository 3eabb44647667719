"""Ensembles of networks (``PolicyEnsemble``, ``chickenfoot ensemble``): the policy is the mean of
the members' log-probabilities, the checkpoint loads and plays wherever a network does, and what
cannot take an ensemble (a trainer's start, a nested ensemble, networks of different games)
refuses it with a message that says what to do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import agents
from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, PolicyEnsemble, TorchAgent
from cf_env import GameEncoder, RulesConfig
from chickenfoot.cli import main
from tests.scripted import random_positions
from training.evaluate import evaluate
from training.run import load_weights

CONFIG = RulesConfig(num_players=2, rounds=2)
ENC = GameEncoder(CONFIG)
V1_NETWORK = Path(__file__).resolve().parents[1] / "fixtures" / "strong-2p-v1.pt"


def _batch(count: int = 60, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    rows = random_positions(CONFIG, seed=seed, count=count)
    obs = torch.as_tensor(np.stack([ENC.encode(g, s) for g, s in rows]))
    mask = torch.as_tensor(np.stack([ENC.mask(g.legal_bits).astype(bool) for g, _ in rows]))
    return obs, mask


def _networks(tmp_path: Path, count: int = 3) -> list[str]:
    paths = []
    for i in range(count):
        torch.manual_seed(i)
        model = ActorCritic.for_rules(CONFIG, (16, 16), trunk="layernorm" if i % 2 else "tanh")
        with torch.no_grad():  # a fresh policy head is nearly uniform; give the members opinions
            model.policy.weight.normal_(0, 1)
        paths.append(str(save_checkpoint(tmp_path / f"net{i}.pt", model_payload(model, CONFIG, 0, {}))))
    return paths


def test_the_policy_is_the_mean_of_the_members_log_probabilities(tmp_path):
    paths = _networks(tmp_path)
    members = [TorchAgent.from_checkpoint(p).model for p in paths]
    ensemble, config = PolicyEnsemble.from_checkpoints(paths)
    assert config == CONFIG
    obs, mask = _batch()
    with torch.no_grad():
        scores, values = ensemble(obs, mask)
        outputs = [m(obs, mask) for m in members]
    logp = torch.stack([torch.log_softmax(logits, -1) for logits, _ in outputs])
    legal = mask.bool()
    expected = logp.mean(0)
    assert torch.allclose(scores[legal], expected[legal], atol=1e-5)
    assert torch.all(scores[~legal] == torch.finfo(scores.dtype).min)  # illegal moves get no probability
    assert torch.allclose(values, torch.stack([v for _, v in outputs]).mean(0), atol=1e-6)
    # an ensemble's choice can differ from every member's: it is not a vote between them
    choices = torch.stack([logits.argmax(-1) for logits, _ in outputs])
    assert torch.equal(scores.argmax(-1), expected.masked_fill(~legal, -torch.inf).argmax(-1))
    assert (choices != scores.argmax(-1)).any()


def test_an_ensemble_of_one_network_twice_plays_as_that_network(tmp_path):
    path = _networks(tmp_path, 1)[0]
    twice, _ = PolicyEnsemble.from_checkpoints([path, path])
    single = TorchAgent.from_checkpoint(path).model
    obs, mask = _batch(80, seed=5)
    with torch.no_grad():
        assert torch.equal(twice(obs, mask)[0].argmax(-1), single(obs, mask)[0].argmax(-1))
        probs = torch.softmax(twice(obs, mask)[0], -1)
        assert torch.allclose(probs, torch.softmax(single(obs, mask)[0], -1), atol=1e-5)


def test_the_command_writes_a_checkpoint_that_plays_where_a_network_plays(tmp_path):
    paths = _networks(tmp_path)
    out = tmp_path / "ens.pt"
    result = CliRunner().invoke(main, ["ensemble", *paths, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "ensemble of 3 networks" in result.output and str(out) in result.output
    data = load_checkpoint(out)
    assert data["train_config"] == {"ensemble": paths} and len(data["model_kwargs"]["ensemble"]) == 3
    agent = agents.load(str(out), CONFIG)
    assert isinstance(agent, TorchAgent) and isinstance(agent.model, PolicyEnsemble)
    direct, _ = PolicyEnsemble.from_checkpoints(paths)
    obs, mask = _batch()
    with torch.no_grad():
        assert torch.equal(agent.model(obs, mask)[0], direct(obs, mask)[0])
    report = evaluate([str(out), "heuristic"], CONFIG, deal_sets=2, seed=0, progress=False)
    assert report.games == 4 and report.results[0].seat_games == 4
    sampled = agents.load(f"{out}:temperature=0.5", CONFIG)  # a checkpoint's parameter works on it too
    rng = np.random.default_rng(0)
    assert all(mask[i, sampled.act_batch(obs[i:i + 1].numpy(), mask[i:i + 1].numpy(), rng)[0]] for i in range(10))
    inside = evaluate([f"search:ms=0:sims=2:rollout={out}", "heuristic"], CONFIG, deal_sets=1, seed=1,
                      progress=False)  # and inside a search, which plays its rollouts
    assert inside.games == 2


def test_a_network_of_an_older_observation_joins_an_ensemble():
    two_player = RulesConfig(num_players=2)
    v1 = TorchAgent.from_checkpoint(V1_NETWORK, two_player).model
    assert v1.observation_version == 1
    ensemble, _ = PolicyEnsemble.from_checkpoints([str(V1_NETWORK), "zoo:strong-2p-545k"], two_player)
    enc = GameEncoder(two_player)
    rows = random_positions(two_player, seed=2, count=20)
    obs = torch.as_tensor(np.stack([enc.encode(g, s) for g, s in rows]))
    mask = torch.as_tensor(np.stack([enc.mask(g.legal_bits).astype(bool) for g, _ in rows]))
    with torch.no_grad():
        scores, _ = ensemble(obs, mask)
    assert torch.isfinite(scores[mask]).all() and ensemble.obs_dim == enc.size


def test_what_cannot_take_an_ensemble_refuses_it(tmp_path):
    paths = _networks(tmp_path, 2)
    out = tmp_path / "ens.pt"
    assert CliRunner().invoke(main, ["ensemble", *paths, "--out", str(out)]).exit_code == 0
    with pytest.raises(CheckpointError, match="ensemble of 2 networks, which plays but is not trained"):
        load_weights(ActorCritic.for_rules(CONFIG, (16, 16)), CONFIG, str(out))
    with pytest.raises(CheckpointError, match="is itself an ensemble of 2 networks; list its members"):
        PolicyEnsemble.from_checkpoints([str(out), paths[0]])
    four = save_checkpoint(tmp_path / "four.pt", model_payload(ActorCritic.for_rules(RulesConfig(), (8,)),
                                                               RulesConfig(), 0, {}))
    with pytest.raises(CheckpointError, match="num_players=4 but the env has num_players=2"):
        PolicyEnsemble.from_checkpoints([paths[0], str(four)])
    result = CliRunner().invoke(main, ["ensemble", paths[0], "--out", str(tmp_path / "one.pt")])
    assert result.exit_code == 2 and "at least two checkpoints" in result.output
    result = CliRunner().invoke(main, ["ensemble", paths[0], str(tmp_path / "missing.pt"), "--out",
                                       str(tmp_path / "bad.pt")])
    assert result.exit_code == 1 and "no checkpoint file at" in result.output
    assert not (tmp_path / "bad.pt").exists() and not (tmp_path / "one.pt").exists()
    with pytest.raises(ValueError, match="at least two networks"):
        PolicyEnsemble([ActorCritic.for_rules(CONFIG, (8,))], ENC.size)


@pytest.mark.parametrize("precision, dtype, share", [("float16", torch.float16, 0.6), ("int8", torch.int8, 0.4)])
def test_narrower_weights_load_as_float32_and_play_alike(tmp_path, precision, dtype, share):
    paths = _networks(tmp_path)
    full, narrow = tmp_path / "full.pt", tmp_path / f"{precision}.pt"
    for out, flags in ((full, []), (narrow, ["--precision", precision])):
        result = CliRunner().invoke(main, ["ensemble", *paths, "--out", str(out), *flags])
        assert result.exit_code == 0, result.output
    assert f"weights, {precision})" in result.output
    raw = torch.load(narrow, weights_only=True)  # as stored: the weight matrices narrow
    matrices = [v for v in raw["model"].values() if v.dim() == 2]
    assert matrices and all(v.dtype == dtype for v in matrices)
    assert narrow.stat().st_size < share * full.stat().st_size
    data = load_checkpoint(narrow)  # as loaded: float32 again, ready for any network
    assert data["precision"] == precision and "weight_scales" not in data
    assert all(v.dtype == torch.float32 for v in data["model"].values() if v.is_floating_point())
    wide, small = (agents.load(str(p), CONFIG).model for p in (full, narrow))
    obs, mask = _batch(200, seed=9)
    with torch.no_grad():
        a, b = wide(obs, mask)[0], small(obs, mask)[0]
    legal = mask.bool()
    assert torch.allclose(a[legal], b[legal], atol=0.05)
    assert (a.argmax(-1) == b.argmax(-1)).float().mean() >= 0.95
