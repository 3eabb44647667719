"""The lab's training configs (lab/configs/) load as the trainers read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.config import DistillConfig, PPOConfig, load_config

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_a_lab_config_loads(path):
    if path.stem.startswith("distill"):
        assert isinstance(load_config(path, DistillConfig), DistillConfig)
        return
    cfg = load_config(path)
    assert isinstance(cfg, PPOConfig) and cfg.init_checkpoint.startswith("zoo:strong-4p")
    assert (cfg.critic == "lab.critic:PrivilegedCritic") == ("privileged" in path.stem)
    assert (cfg.critic_options.get("init") == "policy") == path.stem.endswith("-init")
