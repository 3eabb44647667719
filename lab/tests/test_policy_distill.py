"""lab/policy_distill.py: the targets are the teacher network's policy, and the student fitted to
them (stored in float16) plays closer to that teacher than it did."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents import load
from agents.checkpoint import load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, PolicyEnsemble, TorchAgent
from cf_env import RulesConfig
from lab import policy_distill
from training import labels
from training.distill import PackedObs, split_labels

TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)


def _agreement(a: torch.nn.Module, b: torch.nn.Module, obs: np.ndarray, mask: np.ndarray) -> float:
    with torch.no_grad():
        x, m = torch.as_tensor(obs), torch.as_tensor(mask)
        return float((a(x, m)[0].argmax(-1) == b(x, m)[0].argmax(-1)).float().mean())


def test_the_student_learns_the_teacher_networks_policy(tmp_path, capsys):
    settings = labels.collection_settings("heuristic", "search:ms=0:sims=16:race=2", ["random"], TINY, seed=3,
                                          shard_games=2, slots=2)
    labels.collect_shards(tmp_path / "a", settings, 3, progress=False)
    members = []
    for i in range(2):
        torch.manual_seed(10 + i)
        net = ActorCritic.for_rules(TINY, (16,))
        with torch.no_grad():
            net.policy.weight.normal_(0, 2)  # a teacher with opinions of its own, not the search's
        members.append(str(save_checkpoint(tmp_path / f"m{i}.pt", model_payload(net, TINY, 0, {}))))
    ensemble, _ = PolicyEnsemble.from_checkpoints(members)
    save_checkpoint(tmp_path / "ens.pt", model_payload(ensemble, TINY, 0, {"ensemble": members}))
    train, _ = split_labels([tmp_path / "a"], 0.34, temperature=0.03)
    probs = policy_distill.policy_targets(ensemble, train["obs"], train["mask"], batch=7)
    with torch.no_grad():
        expected = torch.softmax(ensemble(torch.as_tensor(train["obs"][np.arange(len(probs))]),
                                          torch.as_tensor(train["mask"]))[0], -1).numpy()
    assert np.allclose(probs, expected, atol=1e-6) and np.allclose(probs.sum(1), 1.0, atol=1e-5)
    assert np.all(probs[~train["mask"]] == 0)
    obs, mask = train["obs"][np.arange(len(probs))], train["mask"]
    torch.manual_seed(0)
    start = ActorCritic.for_rules(TINY, (32,))
    save_checkpoint(tmp_path / "start.pt", model_payload(start, TINY, 0, {}))
    before = _agreement(start, ensemble, obs, mask)
    stats = policy_distill.main(["--labels", str(tmp_path / "a"), "--teacher", str(tmp_path / "ens.pt"), "--init",
                                 str(tmp_path / "start.pt"), "--out", str(tmp_path / "student.pt"), "--hidden", "32",
                                 "--trunk", "tanh", "--epochs", "30", "--learning-rate", "3e-3", "--holdout", "0.34",
                                 "--torch-threads", "1", "--precision", "float16"])
    student = TorchAgent.from_checkpoint(tmp_path / "student.pt").model
    after = _agreement(student, ensemble, obs, mask)
    assert after > max(before, 0.8), (before, after)
    assert stats["teacher"] == str(tmp_path / "ens.pt") and stats["mix"] == 1.0
    written = load_checkpoint(tmp_path / "student.pt")
    assert written["train_config"]["teacher_ensemble"] == members  # what the teacher was made of
    assert written["train_config"]["init"] == str(tmp_path / "start.pt")
    assert written["precision"] == "float16"
    assert '"test_regret"' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        policy_distill.main(["--labels", str(tmp_path / "a"), "--teacher", str(tmp_path / "ens.pt"), "--out",
                             str(tmp_path / "x.pt"), "--mix", "1.5"])


def test_played_states_distil_the_ensemble_into_a_member(tmp_path, capsys):
    members = []
    for i in range(2):
        torch.manual_seed(20 + i)
        net = ActorCritic.for_rules(TINY, (16,))
        with torch.no_grad():
            net.policy.weight.normal_(0, 2)
        members.append(str(save_checkpoint(tmp_path / f"m{i}.pt", model_payload(net, TINY, 0, {}))))
    ensemble, _ = PolicyEnsemble.from_checkpoints(members)
    ens = str(save_checkpoint(tmp_path / "ens.pt", model_payload(ensemble, TINY, 0, {"ensemble": members})))
    out = policy_distill.main(["play", "--player", ens, "--opponents", "random", "heuristic", "--games", "30",
                               "--seed", "4", "--out", str(tmp_path / "s.npz")])
    with np.load(tmp_path / "s.npz") as f:
        codes, mask = f["obs"], f["mask"]
        assert RulesConfig.from_dict(json.loads(str(f["rules"]))) == TINY
    assert out["states"] == len(mask) == len(codes) > 30 and codes.dtype == np.int16
    assert np.all(mask.sum(1) > 1)  # only decisions with a choice
    again = policy_distill.play_states(TorchAgent.from_checkpoint(ens),
                                       [load("random", TINY), load("heuristic", TINY)], TINY, 30, 4)
    assert np.array_equal(again["obs"], codes)  # one seed, the same games
    obs = PackedObs(codes)[:]
    before = _agreement(ensemble.members[0], ensemble, obs, mask)
    stats = policy_distill.main(["--states", str(tmp_path / "s.npz"), "--teacher", ens, "--init", "teacher:0",
                                 "--out", str(tmp_path / "kd.pt"), "--hidden", "16", "--trunk", "tanh",
                                 "--epochs", "40", "--learning-rate", "3e-3", "--torch-threads", "1"])
    student = TorchAgent.from_checkpoint(tmp_path / "kd.pt").model
    after = _agreement(student, ensemble, obs, mask)
    assert after > max(before, 0.85), (before, after)
    assert stats["init"] == "teacher:0" and stats["source"] == {"states": [str(tmp_path / "s.npz")]}
    assert "test_agreement" in stats["history"][-1] and "test_regret" not in stats["history"][-1]
    with pytest.raises(SystemExit):
        policy_distill.main(["play", "--player", ens, "--games", "2", "--self-play", "2", "--out", str(tmp_path / "x.npz")])
    for bad in (["--init", "teacher:2"], ["--mix", "0.5"]):
        with pytest.raises(SystemExit):
            policy_distill.main(["--states", str(tmp_path / "s.npz"), "--teacher", ens, "--out",
                                 str(tmp_path / "x.pt"), *bad])
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "x.npz").exists()
