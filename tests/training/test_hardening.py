"""Bad input to the training layer: typed, range-checked configs, run folders that are never
overwritten by accident, interrupted runs that resume, and the command line's edges."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from chickenfoot.cli import main
from training.config import PPOConfig, TrainConfigError, load_config
from training.ppo import RunExistsError, Trainer

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"
TINY = {"total_steps": 256, "bc_games": 0, "eval_deal_sets": 0}


# ---------------------------------------------------------------- configs

@pytest.mark.parametrize("line, message", [
    ("clip_coef: banana", r"clip_coef = 'banana': Input should be a valid number"),
    ("ent_coef: -5", r"ent_coef = -5: Input should be greater than or equal to 0"),
    ("max_grad_norm: -1", r"max_grad_norm = -1: Input should be greater than 0"),
    ("anneal_lr: banana", r"anneal_lr = 'banana': Input should be a valid boolean"),
    ("time_limit_minutes: -3", r"time_limit_minutes = -3: Input should be greater than or equal to 0"),
    ("{num_envs: 8, rollout_steps: 32, num_minibatches: 1000}",
     r"num_minibatches \(1000\) exceeds num_envs x rollout_steps \(256\)"),
    ("hidden: 64", r"hidden = 64: Input should be a valid list"),
    ("pool_baselines: greedy", r"pool_baselines = 'greedy': Input should be a valid list"),
    ("num_envs: true", r"num_envs = True: a number is needed, not a boolean"),
    ("learning_rate: .nan", r"learning_rate = nan"),
    ("reward: wins", r"reward = 'wins': Input should be 'win', 'points' or 'relative'"),
])
def test_bad_values_are_refused_at_load_naming_the_field(tmp_path, line, message):
    path = tmp_path / "c.yaml"
    path.write_text(line + "\n")
    with pytest.raises(TrainConfigError, match=message):
        load_config(path)


def test_common_spellings_load(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("learning_rate: 3e-4\nanneal_lr: 'false'\nnum_envs: '16'\n")
    cfg = load_config(path)
    assert cfg.learning_rate == pytest.approx(3e-4) and cfg.anneal_lr is False and cfg.num_envs == 16
    with pytest.raises(TrainConfigError, match="ent_coef = -1"):
        cfg.ent_coef = -1  # assignment is checked too
    with pytest.raises(TrainConfigError, match="gamma = 2"):
        PPOConfig(gamma=2)


def test_empty_and_non_utf8_files_are_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("# nothing but a comment\n")
    with pytest.raises(TrainConfigError, match=r"is empty.*'\{\}' takes every default"):
        load_config(path)
    path.write_bytes("run_name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(TrainConfigError, match="not UTF-8"):
        load_config(path)
    path.write_text("{}\n")
    assert load_config(path).run_name == "default"


def test_rllib_config_is_checked_the_same_way(tmp_path):
    from training.rllib_ppo import RLlibConfig

    path = tmp_path / "r.yaml"
    path.write_text("lr: -1\npolicies: everyone\n")
    with pytest.raises(TrainConfigError, match=r"lr = -1: .*greater than 0") as err:
        load_config(path, cls=RLlibConfig)
    assert "policies = 'everyone': Input should be 'shared' or 'per_seat'" in str(err.value)
    path.write_text("minibatch_size: 9000\n")
    with pytest.raises(TrainConfigError, match=r"minibatch_size \(9000\) exceeds train_batch_size"):
        load_config(path, cls=RLlibConfig)
    path.write_text("action_head: 32\n")  # RLlib's module has no action-scoring head: refused, not ignored
    with pytest.raises(TrainConfigError, match=r"action_head 32: RLlib's module has the linear policy head only"):
        load_config(path, cls=RLlibConfig)


# ---------------------------------------------------------------- no run is lost

def test_a_run_folder_is_never_overwritten_by_accident(tmp_path):
    first = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), **TINY), progress=False).run()
    steps = load_checkpoint(first["checkpoint"])["train_step"]
    with pytest.raises(RunExistsError, match=r"already holds a run \(.*checkpoint.pt.*--resume.*--overwrite"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path), **TINY), progress=False)
    assert load_checkpoint(first["checkpoint"])["train_step"] == steps
    result = CliRunner().invoke(main, ["train", "--config", str(SMOKE), "--runs-dir", str(tmp_path),
                                       "--total-steps", "64", "--no-progress"])
    assert result.exit_code != 0 and "--overwrite" in result.output
    marker = tmp_path / "smoke" / "notes.txt"
    marker.write_text("old run")
    Trainer(load_config(SMOKE, runs_dir=str(tmp_path), **TINY), progress=False, overwrite=True).run()
    assert not marker.exists()  # --overwrite cleared the folder first
    with pytest.raises(TrainConfigError, match="choose one"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path), **TINY), resume=True, overwrite=True)


def test_resume_with_another_network_names_the_differing_fields(tmp_path):
    Trainer(load_config(SMOKE, runs_dir=str(tmp_path), **TINY), progress=False).run()
    wide = load_config(SMOKE, runs_dir=str(tmp_path), hidden=[64, 64], **TINY)
    with pytest.raises(CheckpointError, match=r"network hidden: checkpoint \[32, 32\], config \[64, 64\]"):
        Trainer(wide, resume=True, progress=False)


def test_pool_keeps_only_the_snapshots_it_can_draw(tmp_path):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), snapshot_every=1, pool_size=2, total_steps=2048, **{
        k: v for k, v in TINY.items() if k != "total_steps"})
    summary = Trainer(cfg, progress=False).run()
    files = sorted(p.name for p in (tmp_path / "smoke" / "pool").glob("*.pt"))
    assert summary["updates"] >= 4 and len(files) == 2
    pool = load_checkpoint(summary["checkpoint"])["trainer_state"]["pool"]
    assert sorted(Path(p).name for p in pool if p.endswith(".pt")) == files


def test_checkpoint_writes_fsync_the_folder(tmp_path, monkeypatch):
    synced_dirs = []
    real = os.fsync

    def spy(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            synced_dirs.append(fd)
        return real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    save_checkpoint(tmp_path / "x.pt", {"model": {}})
    assert synced_dirs, "the folder was not fsynced after the rename"


def _stop_with(sig, cmd, ckpt):
    """Start ``cmd``, send ``sig`` once it wrote ``ckpt``; (exit status, stdout, stderr, the
    checkpoint's train_step before the signal)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert ckpt.exists(), proc.communicate()[1][-2000:]
    steps_before = load_checkpoint(ckpt)["train_step"]
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err, steps_before


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_writes_a_checkpoint_and_prints_the_resume_command(tmp_path, sig):
    cmd = [sys.executable, "-m", "chickenfoot.cli", "train", "--config", str(SMOKE), "--runs-dir", str(tmp_path),
           "--total-steps", "10000000", "--no-progress"]
    ckpt = tmp_path / "smoke" / "checkpoint.pt"
    code, out, err, steps_before = _stop_with(sig, cmd, ckpt)
    assert code == (130 if sig == signal.SIGINT else 143), err[-2000:]
    summary = json.loads(out)
    assert summary["stop_reason"] == f"interrupted ({sig.name})" and summary["final"] is None
    data = load_checkpoint(ckpt)
    assert data["train_step"] == summary["learner_steps"] >= steps_before and "optimizer" in data
    resume = f"chickenfoot train --config {SMOKE} --resume --runs-dir {tmp_path} --total-steps 10000000"
    assert resume in err
    # the printed command resumes it
    resumed = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), total_steps=summary["learner_steps"] + 256,
                                  eval_deal_sets=0), resume=True, progress=False).run()
    assert resumed["learner_steps"] > summary["learner_steps"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_a_signal_stops_expert_iteration_the_same_way(tmp_path, sig):
    from training.expert import ExpertConfig, ExpertTrainer

    config = ROOT / "configs" / "expert-smoke.yaml"
    cmd = [sys.executable, "-m", "chickenfoot.cli", "expert", "--config", str(config), "--runs-dir", str(tmp_path),
           "--iterations", "100000", "--no-progress"]
    ckpt = tmp_path / "expert-smoke" / "checkpoint.pt"
    code, out, err, steps_before = _stop_with(sig, cmd, ckpt)
    assert code == 143, err[-2000:]
    summary = json.loads(out)
    assert summary["stop_reason"] == f"interrupted ({sig.name})" and summary["final"] is None
    data = load_checkpoint(ckpt)
    assert data["trainer_state"]["iteration"] == summary["iterations"] >= 1 and "optimizer" in data
    assert data["train_step"] >= steps_before
    assert f"chickenfoot expert --config {config} --resume --runs-dir {tmp_path} --iterations 100000" in err
    # the printed command resumes it, and the summary's history holds the whole run
    resumed = ExpertTrainer(load_config(config, ExpertConfig, runs_dir=str(tmp_path),
                                        iterations=summary["iterations"] + 1, eval_deal_sets=0),
                            resume=True, progress=False).run()
    assert resumed["iterations"] == summary["iterations"] + 1
    assert [h["iteration"] for h in resumed["history"]] == list(range(1, resumed["iterations"] + 1))
    # and a PPO run cannot resume it
    with pytest.raises(CheckpointError, match="written by the expert trainer"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path), run_name="expert-smoke"), resume=True, progress=False)


# ---------------------------------------------------------------- the command line

@pytest.fixture(scope="module")
def smoke_final(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    return Trainer(load_config(SMOKE, runs_dir=str(runs), **TINY), progress=False).run()["final"]


def test_eval_takes_the_rules_from_the_checkpoint(smoke_final, tmp_path):
    # the README's own form, for a checkpoint trained on other rules than the default game
    result = CliRunner().invoke(main, ["eval", smoke_final, "greedy", "--deal-sets", "2", "--no-progress",
                                       "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["config"]["max_pip"] == 4 and report["config"]["num_players"] == 2
    assert report["config"]["rounds"] == 2 and report["games"] == 4
    for r in report["results"]:
        assert 0.0 <= r["win_rate_ci95"][0] <= r["win_rate"] <= r["win_rate_ci95"][1] <= 1.0
    result = CliRunner().invoke(main, ["eval", smoke_final, "greedy", "--rounds", "1", "--deal-sets", "1",
                                       "--no-progress"])
    assert result.exit_code == 0 and "1 rounds" in result.output  # a flag that fits the network is taken
    result = CliRunner().invoke(main, ["eval", smoke_final, "greedy", "--players", "3", "--deal-sets", "1",
                                       "--no-progress"])
    assert result.exit_code != 0 and "trained for num_players=2" in result.output
    result = CliRunner().invoke(main, ["play", "--opponents", smoke_final, "--seed", "0"], input="q\n" * 50)
    assert result.exit_code == 0 and "player_1" in result.output and "player_2" not in result.output, result.output


def test_wilson_intervals_stay_in_range():
    from training.evaluate import wilson_interval

    assert wilson_interval(0.0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    assert wilson_interval(1.0, 10) == (pytest.approx(0.7225, abs=1e-4), 1.0)
    lo, hi = wilson_interval(0.05, 20)
    assert 0.0 < lo < 0.05 < hi < 1.0


@pytest.mark.parametrize("args, message", [
    (["eval", "greedy", "--deal-sets", "0"], "x>=1"),
    (["eval", "greedy", "--deal-sets", "-5"], "x>=1"),
    (["eval", "greedy", "--seed", "-1"], "x>=0"),
    (["play", "--opponents", ","], "no agent spec"),
    (["eval", "runs/nothing/final.pt", "greedy"], "no such file: runs/nothing/final.pt"),
    (["eval", "greedy", "--max-pip", "3", "--players", "2", "--hand-size", "2"], "center_arms=4 exceeds max_pip=3"),
])
def test_bad_command_lines_are_clear_errors(args, message):
    result = CliRunner().invoke(main, args + ["--no-progress"] if args[0] == "eval" else args)
    assert result.exit_code != 0 and message in result.output, result.output
    assert "Traceback" not in result.output


def test_a_foreign_pt_file_is_refused_without_unsafe_advice(tmp_path):
    path = tmp_path / "foreign.pt"
    torch.save({"format": "chickenfoot-rl/checkpoint/v1", "x": Path("a")}, path)  # a pickled object
    result = CliRunner().invoke(main, ["eval", str(path), "greedy", "--deal-sets", "1", "--no-progress"])
    assert result.exit_code != 0 and "holds Python objects" in result.output
    assert "weights_only" not in result.output


def test_version():
    from cf_env import __version__

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def _distill_config(tmp_path: Path, **fields) -> Path:
    """distill-smoke.yaml with ``fields`` changed, written to ``tmp_path``."""
    import yaml

    data = yaml.safe_load((ROOT / "configs" / "distill-smoke.yaml").read_text()) | fields
    path = tmp_path / "distill.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("during, fields, wait_for", [
    ("collection", {"max_shards": 100, "epochs": 3}, "shard_00003.npz"),  # 100 shards take seconds
    ("fit", {"max_shards": 12, "epochs": 3000}, "shard_00011.npz"),  # the last shard; the fit takes seconds
])
def test_a_signal_stops_distillation_at_once_and_the_resumed_run_ends_with_the_same_network(tmp_path, during, fields,
                                                                                            wait_for):
    """What `make train` runs: Ctrl-C during a collection or a fit keeps every label shard and prints
    the command that resumes; with a shard budget the resumed run's network is the uninterrupted one's."""
    from training.config import DistillConfig
    from training.distill import distill_run
    from training.labels import shard_paths

    config = _distill_config(tmp_path, **fields)
    whole = distill_run(load_config(config, DistillConfig, runs_dir=str(tmp_path / "whole")), progress=False)
    runs = tmp_path / "stopped"
    cmd = [sys.executable, "-m", "chickenfoot.cli", "distill", "--config", str(config), "--runs-dir", str(runs),
           "--no-progress"]
    labels = runs / "distill-smoke" / "labels"
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while not (labels / wait_for).exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    if during == "fit":
        time.sleep(1.0)  # into the fit
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    summary = json.loads(out)
    assert summary["stop_reason"] == "interrupted (SIGINT)" and summary["final"] is None
    assert not (runs / "distill-smoke" / "final.pt").exists() and not (runs / "distill-smoke" / "round-0.pt").exists()
    kept = len(shard_paths(labels))
    assert 4 <= kept <= fields["max_shards"] and (kept < fields["max_shards"]) == (during == "collection")
    assert f"chickenfoot distill --config {config} --resume --runs-dir {runs}" in err
    resumed = distill_run(load_config(config, DistillConfig, runs_dir=str(runs)), resume=True, progress=False)
    assert resumed["collection"]["games"] == (fields["max_shards"] - kept) * 2  # only the missing shards
    a, b = (load_checkpoint(s["final"])["model"] for s in (whole, resumed))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
