"""The training and evaluation commands as a new user meets them: resuming a finished run, flags
that contradict each other, errors that name what was typed, evaluation's small print."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from chickenfoot.cli import main
from training.config import load_config
from training.evaluate import evaluate, short_name
from training.ppo import Trainer

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"
TINY = ["--total-steps", "256", "--no-progress"]


def test_resuming_a_complete_run_says_so_and_how_to_extend_it(tmp_path):
    runs = ["--config", str(SMOKE), "--runs-dir", str(tmp_path)]
    assert CliRunner().invoke(main, ["train", *runs, *TINY]).exit_code == 0
    result = CliRunner().invoke(main, ["train", *runs, "--resume", *TINY])
    assert result.exit_code == 1, result.output
    assert "is complete" in result.output and "--resume --total-steps 512" in result.output
    assert "env_steps_per_second" not in result.output  # no old summary reprinted
    result = CliRunner().invoke(main, ["train", *runs, "--resume", "--total-steps", "512", "--no-progress"])
    assert result.exit_code == 0, result.output


def test_resume_and_init_checkpoint_are_refused_together(tmp_path):
    result = CliRunner().invoke(main, ["train", "--config", str(SMOKE), "--runs-dir", str(tmp_path), "--resume",
                                       "--init-checkpoint", "zoo:strong-4p"])
    assert result.exit_code == 2 and "--init-checkpoint" in result.output and "resume" in result.output
    result = CliRunner().invoke(main, ["expert", "--config", str(ROOT / "configs" / "expert-smoke.yaml"),
                                       "--runs-dir", str(tmp_path), "--resume", "--init-checkpoint", "x.pt"])
    assert result.exit_code == 2, result.output


def test_a_bad_flag_value_is_blamed_on_the_flag_not_the_file(tmp_path):
    result = CliRunner().invoke(main, ["train", "--config", str(SMOKE), "--runs-dir", str(tmp_path),
                                       "--total-steps", "-5"])
    assert result.exit_code == 1
    assert "--total-steps -5" in result.output and "smoke.yaml" not in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_steps: -5\n")
    result = CliRunner().invoke(main, ["train", "--config", str(bad), "--runs-dir", str(tmp_path)])
    assert "bad.yaml: total_steps = -5" in result.output  # a file's own value is the file's


def test_eval_every_zero_switches_periodic_evaluation_off(tmp_path, monkeypatch):
    cfg = load_config(SMOKE, runs_dir=str(tmp_path), total_steps=768, eval_every=0, bc_games=0)
    calls = []
    trainer = Trainer(cfg, progress=False)
    real = trainer.evaluate_now
    monkeypatch.setattr(trainer, "evaluate_now", lambda: calls.append(trainer.update) or real())
    summary = trainer.run()
    assert summary["updates"] >= 3 and calls == [summary["updates"]]  # the final evaluation only


def test_a_bad_search_parameter_is_a_usage_error_like_a_bad_spec():
    for args in (["eval", "search:ms=-1", "heuristic"], ["eval", "nobody", "heuristic"],
                 ["play", "--opponents", "search:sims=x"]):
        result = CliRunner().invoke(main, [*args, "--deal-sets", "1"] if args[0] == "eval" else args)
        assert result.exit_code == 2, (args, result.output)
    # a sampler that reads the opponents' true hands (a label teacher's) cannot play: refused before any game
    peek = "search:ms=0:sims=4:infer=tests.agents.test_search:Peek:keep=0"
    for args in (["eval", peek, "heuristic", "--deal-sets", "1"], ["compare", peek, "heuristic", "--deal-sets", "2"],
                 ["play", "--opponents", peek]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and "teacher's privilege" in result.output, (args, result.output)


def test_evaluation_names_fit_and_counts_agree():
    assert short_name("zoo:strong-4p") == "zoo:strong-4p"
    assert short_name("runs/default/final.pt") == "default/final"
    assert short_name("search:algo=ismcts:ms=20:rollout=greedy").startswith("search:algo=ism")
    from cf_env import RulesConfig

    report = evaluate(["greedy", "random"], RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=1),
                      deal_sets=1, progress=False)
    assert "2 games = 1 deal set x 2 seat rotations" in report.table()


def test_action_masks_are_int8_everywhere():
    import gymnasium

    import cf_env  # noqa: F401 - registers ChickenFoot-v1

    env = gymnasium.make("ChickenFoot-v1", num_players=2, max_pip=4, hand_size=4, rounds=1)
    obs, info = env.reset(seed=0)
    masks = env.unwrapped.action_masks()
    assert masks.dtype == obs["action_mask"].dtype == info["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(masks, obs["action_mask"])
    masks[:] = 0
    assert env.unwrapped.action_masks().any()  # a copy


def test_a_users_own_agents_or_training_folder_is_named_as_the_cause(tmp_path):
    import subprocess
    import sys

    for name, code in (("agents", "import training.evaluate"), ("training", "import chickenfoot.cli")):
        folder = tmp_path / f"with_{name}" / name
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("mine = True\n")
        result = subprocess.run([sys.executable, "-c", code], cwd=folder.parent, capture_output=True, text=True)
        assert result.returncode != 0
        assert f"a folder or module named '{name}' in the working directory" in result.stderr, result.stderr[-800:]
        assert "Rename yours" in result.stderr
