"""Training tier: a subprocess smoke run of configs/smoke.yaml, resume, eval, play and config errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from agents.checkpoint import load_checkpoint
from chickenfoot.cli import main
from training.config import PPOConfig, TrainConfigError, load_config
from training.ppo import Trainer, Trajectories

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


@pytest.mark.slow
def test_smoke_run_in_a_subprocess(tmp_path):
    cmd = [sys.executable, "-m", "chickenfoot.cli", "train", "--config", str(SMOKE), "--runs-dir", str(tmp_path),
           "--no-progress"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["learner_steps"] >= 1024 and summary["updates"] >= 4
    run = tmp_path / "smoke"
    assert (run / "checkpoint.pt").exists() and (run / "final.pt").exists()
    assert list(run.glob("events.out.tfevents.*")), "TensorBoard log missing"
    assert list((run / "pool").glob("update_*.pt")), "no policy snapshot joined the pool"
    data = load_checkpoint(run / "final.pt")
    assert data["train_step"] == summary["learner_steps"]
    assert data["rules"]["max_pip"] == 4 and data["train_config"]["run_name"] == "smoke"


def test_resume_continues_steps_and_optimizer(tmp_path):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), total_steps=512, bc_games=0)
    first = Trainer(cfg, progress=False).run()
    saved = load_checkpoint(Path(first["checkpoint"]))
    resumed = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), total_steps=1024, bc_games=0), resume=True,
                      progress=False)
    assert resumed.global_step == saved["train_step"] == first["learner_steps"]
    opt_state = resumed.optimizer.state_dict()["state"]
    for key, value in saved["optimizer"]["state"].items():
        assert torch.equal(opt_state[key]["exp_avg"], value["exp_avg"])
        assert int(opt_state[key]["step"]) == int(value["step"]) > 0
    summary = resumed.run()
    assert summary["learner_steps"] >= 1024
    after = load_checkpoint(Path(summary["checkpoint"]))
    assert after["trainer_state"]["update"] > saved["trainer_state"]["update"]


def test_init_checkpoint_starts_from_those_weights(tmp_path):
    from agents.checkpoint import CheckpointError

    first = Trainer(load_config(SMOKE, runs_dir=str(tmp_path), total_steps=256, bc_games=0), progress=False).run()
    cfg = load_config(SMOKE, runs_dir=str(tmp_path / "b"), total_steps=256, init_checkpoint=first["final"])
    trainer = Trainer(cfg, progress=False)
    trainer.warm_start()
    saved = load_checkpoint(Path(first["final"]))["model"]
    for name, tensor in trainer.model.state_dict().items():
        assert torch.equal(tensor, saved[name]), name
    assert trainer.global_step == 0  # a new run from those weights, not a resume
    # :temperature=T: the same network with its logits multiplied by 1 / T (the argmax unchanged)
    sharp = Trainer(load_config(SMOKE, runs_dir=str(tmp_path / "s"), init_checkpoint=f"{first['final']}:temperature=0.25"),
                    progress=False)
    sharp.warm_start()
    obs = torch.rand(5, sharp.model.obs_dim)
    mask = torch.ones(5, sharp.model.num_actions, dtype=torch.bool)
    with torch.no_grad():
        want, got = trainer.model(obs, mask)[0], sharp.model(obs, mask)[0]
    torch.testing.assert_close(got, 4.0 * want)
    for bad, message in ((f"{first['final']}:sharpen=4", "one parameter"), (f"{first['final']}:temperature=0", "positive"),
                         ("heuristic", "not a checkpoint")):
        with pytest.raises(TrainConfigError, match=message):
            load_config(SMOKE, init_checkpoint=bad)
    other = load_config(SMOKE, runs_dir=str(tmp_path / "c"), init_checkpoint=first["final"],
                        rules={"max_pip": 5, "num_players": 2, "hand_size": 4, "rounds": 2})
    with pytest.raises(CheckpointError, match="trained with rules"):
        Trainer(other, progress=False).warm_start()
    narrow = load_config(SMOKE, runs_dir=str(tmp_path / "d"), init_checkpoint=first["final"], hidden=[16, 32])
    with pytest.raises(CheckpointError, match="set hidden to match"):
        Trainer(narrow, progress=False).warm_start()
    # wider layers are grown from the checkpoint: the old units' weights as saved, the rest unread
    grown = Trainer(load_config(SMOKE, runs_dir=str(tmp_path / "g"), init_checkpoint=first["final"],
                                hidden=[64, 48]), progress=False)
    grown.warm_start()
    assert torch.equal(grown.model.trunk[0].weight[:32], saved["trunk.0.weight"])
    assert torch.equal(grown.model.policy.weight[:, :32], saved["policy.weight"])
    assert not grown.model.policy.weight[:, 32:].any() and grown.global_step == 0
    # the command line names the starting weights and the run folder of a fine-tune
    result = CliRunner().invoke(main, ["train", "--config", str(SMOKE), "--runs-dir", str(tmp_path / "e"),
                                       "--run-name", "tuned", "--init-checkpoint", first["final"],
                                       "--total-steps", "256", "--no-progress"])
    assert result.exit_code == 0, result.output
    tuned = load_checkpoint(tmp_path / "e" / "tuned" / "final.pt")
    assert tuned["train_config"]["init_checkpoint"] == first["final"] and tuned["train_config"]["run_name"] == "tuned"
    result = CliRunner().invoke(main, ["train", "--config", str(SMOKE), "--runs-dir", str(tmp_path / "f"),
                                       "--init-checkpoint", str(tmp_path / "missing.pt"), "--no-progress"])
    assert result.exit_code != 0 and "no checkpoint file" in result.output


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    from agents.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="no checkpoint"):
        Trainer(load_config(SMOKE, runs_dir=str(tmp_path)), resume=True, progress=False)


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("total_step: 100\n", "unknown key 'total_step'; valid keys are", id="unknown-key"),
    pytest.param("num_envs: 0\n", "num_envs = 0: Input should be greater than or equal to 1", id="bad-value"),
    pytest.param("rules: {max_pip: 30}\n", "rules = .*max_pip must be between 1 and 18", id="bad-rules"),
    pytest.param("pool_baselines: [alphazero]\n", "unknown agents", id="unknown-agent"),
    pytest.param("- a list\n", "mapping", id="not-a-mapping"),
])
def test_bad_config_keys_and_values(tmp_path, text, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(TrainConfigError, match=message):
        load_config(bad)
    result = CliRunner().invoke(main, ["train", "--config", str(bad)])
    assert result.exit_code != 0 and re.search(message, result.output), result.output


def test_configs_in_the_repo_load():
    from training.rllib_ppo import RLlibConfig

    for path in (ROOT / "configs").glob("*.yaml"):
        if path.name.startswith("rllib"):
            assert load_config(path, cls=RLlibConfig).module_ids()
            continue
        if path.name.startswith("expert"):
            from training.expert import ExpertConfig

            assert load_config(path, cls=ExpertConfig).teacher.startswith("search")
            continue
        if path.name.startswith("dmc"):
            from training.config import DMCConfig

            assert load_config(path, cls=DMCConfig).epsilon > 0
            continue
        if path.name.startswith("distill"):
            from training.distill import DistillConfig

            assert load_config(path, cls=DistillConfig).teacher.startswith("search")
            continue
        cfg = load_config(path)
        assert cfg.batch_size == cfg.num_envs * cfg.rollout_steps
    assert PPOConfig().batch_size == 32 * 64


def test_gae_per_stream_credits_rewards_between_turns():
    buf = Trajectories(num_envs=1, num_players=2, obs_dim=3, num_actions=2)
    one = np.array([0])
    a, b = np.array([0]), np.array([1])  # seats 0 and 1 of game 0

    def open_(seat, action, value):
        buf.open(one, seat, np.zeros((1, 3), np.float32), np.ones((1, 2), bool), np.array([action]),
                 np.array([-0.1], np.float32), np.array([value], np.float32))

    open_(a, 0, 0.5)
    open_(b, 1, 0.2)
    buf.credit(one, a, np.array([1.0], np.float32))  # a round ended on b's move: credited to a's last decision
    open_(a, 0, 0.3)
    buf.credit(np.array([0, 0]), np.array([0, 1]), np.array([-2.0, 2.0], np.float32))
    buf.terminate(np.array([0, 0]), np.array([0, 1]))
    idx, adv, ret = buf.gae(gamma=1.0, lam=1.0)
    assert idx.tolist() == [0, 1, 2]
    # a: r=1 then r=-2 terminal -> returns 1 + (-2) = -1 and -2
    assert ret.tolist() == pytest.approx([-1.0, 2.0, -2.0])
    assert adv.tolist() == pytest.approx([-1.5, 1.8, -2.3])
    assert buf.carry_over().size == 0


def test_open_transitions_carry_over_with_their_rewards():
    buf = Trajectories(num_envs=3, num_players=2, obs_dim=2, num_actions=2)
    rng = np.random.default_rng(0)
    for step in range(700):  # past the initial capacity, so the arrays grow
        envs = np.array([step % 3])
        buf.open(envs, np.array([step % 2]), rng.random((1, 2), dtype=np.float32), np.ones((1, 2), bool),
                 np.array([1]), np.zeros(1, np.float32), np.array([step], np.float32))
        buf.credit(envs, np.array([step % 2]), np.array([0.5], np.float32))
    idx, _, _ = buf.gae(0.99, 0.95)
    assert len(idx) == 700 - 6  # the last decision of each (game, seat) is still open
    rest = buf.carry_over()
    assert rest.size == 6 and sorted(rest.value[:6].tolist()) == list(range(694, 700))
    assert rest.reward[:6].tolist() == [0.5] * 6
    row = buf.pending[1, 0]
    assert np.array_equal(rest.obs[rest.pending[1, 0]], buf.obs[row])


def test_eval_command_writes_reports(tmp_path):
    result = CliRunner().invoke(main, ["eval", "heuristic", "greedy", "--players", "3", "--max-pip", "6",
                                       "--rounds", "2", "--deal-sets", "3", "--no-progress",
                                       "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"),
                                       "--plot", str(tmp_path / "r.png")])
    assert result.exit_code == 0, result.output
    assert "heuristic" in result.output and "95% CI" in result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["games"] == 9 and {r["spec"] for r in report["results"]} == {"heuristic", "greedy"}
    assert (tmp_path / "r.csv").read_text().startswith("agent,")
    assert (tmp_path / "r.png").stat().st_size > 1000
    bad = CliRunner().invoke(main, ["eval", "nobody", "--deal-sets", "1", "--no-progress"])
    assert bad.exit_code != 0 and "unknown agent spec" in bad.output


def test_play_command_takes_moves_and_rejects_bad_input():
    answers = "\n".join(["banana", "99", "0"] * 200 + ["q"]) + "\n"
    result = CliRunner().invoke(main, ["play", "--opponents", "greedy", "--players", "2", "--max-pip", "4",
                                       "--hand-size", "4", "--rounds", "1", "--seed", "1"], input=answers)
    assert result.exit_code == 0, result.output
    assert "cannot parse 'banana'" in result.output
    assert "pick a number from 0 to" in result.output
    assert "hand of player_0" in result.output
    assert "Game over" in result.output or "bye" in result.output


def test_both_collection_backends_train(tmp_path):
    for backend in ("vector", "aec"):
        cfg = load_config(SMOKE, runs_dir=str(tmp_path), run_name=backend, backend=backend, total_steps=600,
                          bc_games=0, self_play_prob=0.5)
        summary = Trainer(cfg, progress=False).run()
        assert summary["learner_steps"] >= 600 and summary["env_steps"] > summary["learner_steps"]
        assert load_checkpoint(Path(summary["final"]))["train_config"]["backend"] == backend


def test_search_agents_join_the_opponent_pool(tmp_path):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), total_steps=256, bc_games=0, self_play_prob=0.0,
                      pool_baselines=["search:ms=0:sims=2"], eval_opponents=["search:ms=0:sims=1"])
    summary = Trainer(cfg, progress=False).run()
    assert summary["learner_steps"] >= 256
    with pytest.raises(TrainConfigError, match="algo must be"):
        load_config(SMOKE, runs_dir=str(tmp_path / "b"), pool_baselines=["search:algo=alphazero"])


def test_a_seed_fixes_the_trained_weights(tmp_path):
    finals = []
    for name in ("a", "b"):
        cfg = load_config(SMOKE, runs_dir=str(tmp_path), run_name=name, total_steps=512, eval_deal_sets=0)
        finals.append(load_checkpoint(Path(Trainer(cfg, progress=False).run()["final"]))["model"])
    for key, tensor in finals[0].items():
        assert torch.equal(tensor, finals[1][key]), key
