"""Weights stored narrower than float32 (``model_payload(precision=...)``): int8 codes with one
float16 scale per 64 columns, or float16; :func:`load_checkpoint` hands back float32 weights
within half a code of the originals, and a file whose stored weights do not add up is refused."""

from __future__ import annotations

import pytest
import torch

from agents.checkpoint import (
    INT8_GROUP,
    CheckpointError,
    load_checkpoint,
    model_payload,
    save_checkpoint,
    store_weights,
)
from agents.torch_policy import ActorCritic
from cf_env import RulesConfig
from training.run import load_weights

CONFIG = RulesConfig(num_players=2, rounds=2)


def _network(seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    model = ActorCritic.for_rules(CONFIG, (96, 40), trunk="layernorm")  # 337 and 96 columns: a ragged last group
    with torch.no_grad():
        model.trunk[0].weight[:5, :INT8_GROUP] = 0.0  # whole groups of zeros stay zeros
        model.trunk[0].weight[7, 3] = 40.0  # one large weight coarsens its own group only
    return model


def test_int8_weights_come_back_within_half_a_code(tmp_path):
    model = _network()
    path = save_checkpoint(tmp_path / "q.pt", model_payload(model, CONFIG, 0, {}, precision="int8"))
    stored, scales = store_weights(model.state_dict(), "int8")
    loaded = load_checkpoint(path)["model"]
    for key, original in model.state_dict().items():
        back = loaded[key]
        assert back.dtype == original.dtype and back.shape == original.shape
        if key in scales:
            assert stored[key].dtype == torch.int8 and scales[key].dtype == torch.float16
            step = scales[key].float().repeat_interleave(INT8_GROUP, dim=1)[:, :original.shape[1]]
            assert torch.all((back - original).abs() <= step / 2 + 1e-6), key
        elif original.is_floating_point():  # biases, norms: float16
            assert torch.allclose(back, original, rtol=1e-3, atol=1e-4), key
    first = loaded["trunk.0.weight"]
    assert torch.all(first[:5, :INT8_GROUP] == 0)
    assert first[7, 3] == pytest.approx(40.0, rel=1e-3)
    assert (first[8] - model.trunk[0].weight[8]).abs().max() < 0.01  # other rows keep their own scale


def test_a_narrow_network_loads_as_a_training_start(tmp_path):
    model = _network(1)
    path = save_checkpoint(tmp_path / "h.pt", model_payload(model, CONFIG, 0, {}, precision="float16"))
    start = ActorCritic.for_rules(CONFIG, (96, 40), trunk="layernorm")
    load_weights(start, CONFIG, str(path))
    assert all(p.dtype == torch.float32 for p in start.parameters())
    assert torch.allclose(start.trunk[0].weight, model.trunk[0].weight, atol=0.02)


def test_unknown_or_inconsistent_precisions_are_refused(tmp_path):
    model = _network(2)
    with pytest.raises(ValueError, match="precision must be one of float32, float16, int8, got 'int4'"):
        model_payload(model, CONFIG, 0, {}, precision="int4")
    payload = model_payload(model, CONFIG, 0, {}, precision="int8")
    save_checkpoint(tmp_path / "odd.pt", {**payload, "precision": "bfloat8"})
    with pytest.raises(CheckpointError, match="stores its weights as 'bfloat8'; this package reads float32"):
        load_checkpoint(tmp_path / "odd.pt")
    scales = dict(payload["weight_scales"])
    scales["no.such.weight"] = scales.pop("trunk.0.weight")
    save_checkpoint(tmp_path / "lost.pt", {**payload, "weight_scales": scales})
    with pytest.raises(CheckpointError, match="int8 scales name weights the checkpoint does not hold"):
        load_checkpoint(tmp_path / "lost.pt")
    scales = dict(payload["weight_scales"])
    scales["trunk.0.weight"] = scales["trunk.0.weight"][:, :2]
    save_checkpoint(tmp_path / "short.pt", {**payload, "weight_scales": scales})
    with pytest.raises(CheckpointError, match="int8 scales of trunk.0.weight do not fit its 96x337 weights"):
        load_checkpoint(tmp_path / "short.pt")
