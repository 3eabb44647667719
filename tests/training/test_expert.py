"""Expert iteration (training/expert.py) and the device option: a tiny run, resume, the
teacher's targets, and the errors a user can hit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from agents.checkpoint import CheckpointError, load_checkpoint
from agents.torch_policy import DeviceError, TorchAgent, resolve_device
from chickenfoot.cli import main
from training import expert as expert_module
from training.config import PPOConfig, TrainConfigError, load_config
from training.expert import ExpertConfig, expert_iteration
from training.labels import soft_targets
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


@pytest.mark.parametrize("teacher", ["search:ms=0:sims=16", "search:ms=0:sims=16:infer=policy"])
def test_samples_keep_the_teachers_values_in_lockstep_or_one_game_at_a_time(teacher):
    """The lockstep collection and the env's (a teacher that reads the history) keep the same
    samples: the teacher's values of the legal actions, its choice, the seat's return."""
    cfg = load_config(SMOKE, ExpertConfig, teacher=teacher)
    pool = WorkerPool(1, expert_module.collector_state, (cfg.rules_config, cfg.teacher, cfg.opponents,
                                                         cfg.hidden))
    weights = pool.submit(lambda: worker_state()["model"].state_dict()).result()
    out = pool.submit(expert_module.collect_games, weights, [1, 2, 3],
                      {"self_play_prob": 1.0, "beta": 0.0, "gamma": 0.99}).result()
    pool.close()
    assert set(expert_module.SAMPLE_KEYS) <= set(out)
    n = len(out["ret"])
    assert n == out["teacher_decisions"] > 0 and out["games"] == [1, 2, 3]
    assert np.all(out["mask"].sum(1) > 1)  # only decisions with a choice
    assert np.all(out["q"][~out["mask"]] == 0)
    rows = np.arange(n)
    assert np.all(out["mask"][rows, out["choice"]])
    legal_q = np.where(out["mask"], out["q"], -np.inf)
    assert np.all(out["q"][rows, out["choice"]] == legal_q.max(1))  # plain PIMC plays its best mean
    assert np.all(np.isfinite(out["ret"])) and np.any(out["ret"] != 0)
    hard = soft_targets(out["q"], out["mask"], out["choice"], 0.0)
    assert np.all(hard.sum(1) == 1) and np.all(hard[rows, out["choice"]] == 1)
    soft = soft_targets(out["q"], out["mask"], out["choice"], 0.05)
    assert np.allclose(soft.sum(1), 1, atol=1e-5) and np.all(soft[~out["mask"]] == 0)
    assert np.any(soft.max(1) < 1) and np.all(soft.argmax(1) == legal_q.argmax(1))


def test_samples_written_before_the_values_were_kept_are_refused(tmp_path):
    cfg = load_config(SMOKE, ExpertConfig, runs_dir=str(tmp_path), iterations=1, eval_deal_sets=0)
    expert_iteration(cfg, progress=False)
    samples = tmp_path / "expert-smoke" / "samples.npz"
    with np.load(samples) as data:
        old = {"obs": data["obs"], "mask": data["mask"], "target": data["q"], "ret": data["ret"]}
    np.savez(samples, **old)
    with pytest.raises(CheckpointError, match="start a new run"):
        expert_iteration(load_config(SMOKE, ExpertConfig, runs_dir=str(tmp_path), iterations=2), resume=True,
                         progress=False)


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
