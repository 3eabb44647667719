"""The network's kind of hidden layer (``ActorCritic(trunk=...)``): a layernorm trunk is built,
saved, loaded and fitted as a tanh one is, and every path that copies a tanh trunk's weights
refuses it with a message that says what to change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import agents
from agents.checkpoint import CheckpointError, model_payload, save_checkpoint
from agents.torch_policy import TRUNKS, ActorCritic, TorchAgent, grow_hidden
from cf_env import GameEncoder, RulesConfig
from tests.scripted import random_positions
from training import distill
from training.config import RLlibConfig, TrainConfigError, load_config
from training.run import load_weights

CONFIG = RulesConfig(num_players=2, rounds=2)
ENC = GameEncoder(CONFIG)


def _batch(count: int = 60, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    rows = random_positions(CONFIG, seed=seed, count=count)
    obs = torch.as_tensor(np.stack([ENC.encode(g, s) for g, s in rows]))
    mask = torch.as_tensor(np.stack([ENC.mask(g.legal_bits).astype(bool) for g, _ in rows]))
    return obs, mask


def test_a_layernorm_trunk_normalises_each_layer_and_saves_and_loads(tmp_path):
    torch.manual_seed(0)
    model = ActorCritic.for_rules(CONFIG, (16, 16), trunk="layernorm")
    kinds = [type(m) for m in model.trunk]
    assert kinds == [nn.Linear, nn.LayerNorm, nn.ReLU] * 2
    assert model.kwargs()["trunk"] == "layernorm" and "trunk" not in ActorCritic.for_rules(CONFIG, (16,)).kwargs()
    with torch.no_grad():  # the layer norms' own weights must travel too
        for m in model.trunk:
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_()
    path = save_checkpoint(tmp_path / "net.pt", model_payload(model, CONFIG, 0, {}))
    agent = agents.load(str(path), CONFIG)
    assert isinstance(agent, TorchAgent) and agent.model.trunk_kind == "layernorm"
    obs, mask = _batch()
    with torch.no_grad():
        assert torch.equal(agent.model(obs, mask)[0], model(obs, mask)[0])
    h = model.features(obs)
    assert torch.all(h >= 0)  # ReLU after the last norm
    with pytest.raises(ValueError, match="trunk must be one of"):
        ActorCritic(ENC.size, CONFIG.num_actions, (8,), trunk="gelu")
    assert TRUNKS == ("tanh", "layernorm")


def test_fit_trains_a_layernorm_trunk_from_scratch_and_from_itself(tmp_path):
    obs, mask = _batch(80, seed=4)
    rng = np.random.default_rng(0)
    q = (rng.random(mask.shape) * mask.numpy()).astype(np.float32)
    labels = {"obs": obs.numpy(), "mask": mask.numpy(), "q": q, "choice": q.argmax(1).astype(np.int16),
              "ret": np.zeros(len(q), np.float32)}
    settings = distill.FitSettings(temperature=0.05, epochs=20, hidden=(16, 16), learning_rate=3e-3, trunk="layernorm")
    model, stats = distill.fit(labels, CONFIG, settings, progress=False)
    assert model.trunk_kind == "layernorm"
    assert stats["history"][-1]["cross_entropy"] < stats["history"][0]["cross_entropy"]
    path = distill.save_model(model, CONFIG, tmp_path / "ln.pt", stats)
    again, _ = distill.fit(labels, CONFIG, settings, init=str(path), progress=False)  # a fine-tune starts from it
    with torch.no_grad():
        assert not torch.equal(again(obs, mask)[0], model(obs, mask)[0])
    tanh = ActorCritic.for_rules(CONFIG, (16, 16))
    with pytest.raises(CheckpointError, match="layernorm trunk, the config builds tanh; set trunk to match"):
        load_weights(tanh, CONFIG, str(path))


def test_paths_that_copy_a_tanh_trunk_refuse_a_layernorm_one():
    narrow = ActorCritic.for_rules(CONFIG, (8,), trunk="layernorm")
    wide = ActorCritic.for_rules(CONFIG, (16,), trunk="layernorm")
    with pytest.raises(CheckpointError, match="statistics change with its width"):
        grow_hidden(narrow, wide)
    with pytest.raises(TrainConfigError, match="RLlib's module has tanh layers"):
        RLlibConfig(trunk="layernorm")


def test_the_ppo_trainer_builds_a_layernorm_trunk(tmp_path):
    from training.ppo import Trainer

    smoke = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"
    cfg = load_config(smoke, runs_dir=str(tmp_path), total_steps=256, bc_games=0, eval_deal_sets=0, trunk="layernorm")
    out = Trainer(cfg, progress=False).run()
    assert agents.load(str(out["checkpoint"]), cfg.rules_config).model.trunk_kind == "layernorm"
