"""Expert iteration (training/expert.py) and the device option: a tiny run, resume, the
teacher's targets, and the errors a user can hit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from agents.checkpoint import load_checkpoint
from agents.torch_policy import DeviceError, TorchAgent, resolve_device
from chickenfoot.cli import main
from training import expert as expert_module
from training.config import PPOConfig, TrainConfigError, load_config
from training.expert import ExpertConfig, expert_iteration
from training.workers import WorkerPool, worker_state

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "expert-smoke.yaml"


@pytest.mark.slow
def test_expert_iteration_runs_resumes_and_writes_a_playable_network(tmp_path):
    cfg = load_config(SMOKE, ExpertConfig, runs_dir=str(tmp_path))
    summary = expert_iteration(cfg, progress=False)
    assert summary["iterations"] == 2 and summary["games"] == 8 and summary["samples"] > 0
    history = summary["history"]
    assert [h["iteration"] for h in history] == [1, 2]
    assert history[1]["samples"] > history[0]["samples"]  # the samples accumulate (DAgger)
    assert all(0 <= h["agreement"] <= 1 and h["teacher_decisions_per_second"] > 0 for h in history)
    assert "win_rate_vs_greedy" in history[-1]
    run = tmp_path / "expert-smoke"
    agent = TorchAgent.from_checkpoint(run / "final.pt")
    assert agent.config.max_pip == 4
    with np.load(run / "samples.npz") as data:
        assert len(data["ret"]) == summary["samples"]
    # resume: two more iterations on top, the samples carried over
    more = load_config(SMOKE, ExpertConfig, runs_dir=str(tmp_path), iterations=3)
    resumed = expert_iteration(more, resume=True, progress=False)
    assert resumed["iterations"] == 3 and resumed["games"] == 12 and resumed["samples"] > summary["samples"]
    assert load_checkpoint(run / "checkpoint.pt")["trainer_state"]["iteration"] == 3
    # a new run in the same folder is refused, as for train
    with pytest.raises(TrainConfigError, match="already holds a run"):
        expert_iteration(cfg, progress=False)


def test_teacher_targets_are_its_choices_or_a_softmax_over_legal_actions():
    cfg = load_config(SMOKE, ExpertConfig)
    pool = WorkerPool(1, expert_module.collector_state, (cfg.rules_config.to_dict(), cfg.teacher, cfg.opponents,
                                                         cfg.hidden))
    weights = pool.submit(lambda: worker_state()["model"].state_dict()).result()

    def collect(seeds, settings):
        return pool.submit(expert_module.collect_games, weights, seeds, settings).result()

    hard = collect([1, 2], {"self_play_prob": 1.0, "beta": 0.0, "target_temperature": 0.0, "gamma": 0.99})
    assert len(hard["obs"]) == hard["teacher_decisions"] > 0
    assert np.all(hard["mask"].sum(1) > 1)  # only decisions with a choice
    assert np.allclose(hard["target"].sum(1), 1) and np.all(hard["target"].max(1) == 1)
    assert np.all(hard["mask"][np.arange(len(hard["target"])), hard["target"].argmax(1)])
    soft = collect([1, 2], {"self_play_prob": 1.0, "beta": 1.0, "target_temperature": 0.05, "gamma": 0.99})
    assert np.allclose(soft["target"].sum(1), 1, atol=1e-5)
    assert np.all(soft["target"][~soft["mask"]] == 0)
    assert np.any(soft["target"].max(1) < 1)
    # returns: the seat's discounted relative points, finite and not all zero
    assert np.all(np.isfinite(hard["ret"])) and np.any(hard["ret"] != 0)
    pool.close()


@pytest.mark.parametrize("key, value, message", [
    ("teacher", "heuristic", "must be a search spec"),
    ("teacher", "search:algo=ismcts:ms=0:sims=8", "algo=pimc"),
    ("teacher", "search:sims=-1", "sims"),
    ("opponents", ["nobody"], "unknown agents"),
    ("device", "tpu", "use auto, cpu, cuda or cuda:N"),
    ("workers", 0, "greater than or equal to 1"),
])
def test_bad_expert_configs_name_the_key(tmp_path, key, value, message):
    data = {"rules": {"max_pip": 4, "num_players": 2, "hand_size": 4}, key: value}
    path = tmp_path / "bad.yaml"
    import yaml

    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TrainConfigError, match=message):
        load_config(path, ExpertConfig)


def test_device_option():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(DeviceError, match="unknown device"):
        resolve_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="sees no CUDA GPU"):
            resolve_device("cuda")
        result = CliRunner().invoke(main, ["eval", "greedy", "random", "--players", "2", "--max-pip", "4",
                                           "--deal-sets", "1", "--device", "cuda", "--no-progress"])
        assert result.exit_code != 0 and "sees no CUDA GPU" in result.output
    assert PPOConfig(device="auto").device == "auto"
    with pytest.raises(TrainConfigError, match="device"):
        PPOConfig(device="cuda:x")


@pytest.mark.slow
def test_train_and_eval_on_auto_device(tmp_path):
    smoke = ROOT / "configs" / "smoke.yaml"
    result = CliRunner().invoke(main, ["train", "--config", str(smoke), "--runs-dir", str(tmp_path), "--device", "auto",
                                       "--total-steps", "256", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    assert load_checkpoint(summary["final"])["train_config"]["device"] == "auto"
    result = CliRunner().invoke(main, ["eval", summary["final"], "greedy", "--deal-sets", "1", "--device", "auto",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
