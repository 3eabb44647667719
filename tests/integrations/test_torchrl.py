"""TorchRL: its PettingZooWrapper over our AEC env (turn masks), self-play PPO, export to eval."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from click.testing import CliRunner  # noqa: E402

from agents.checkpoint import load_checkpoint  # noqa: E402
from cf_env import RulesConfig  # noqa: E402
from chickenfoot.cli import main as cli  # noqa: E402
from training.torchrl_ppo import GROUP, make_env  # noqa: E402

pytestmark = [pytest.mark.framework, pytest.mark.filterwarnings("ignore::UserWarning")]
RULES = RulesConfig(num_players=3, rounds=2)


def test_wrapper_marks_one_acting_seat_and_pays_every_seat():
    env = make_env(RULES, seed=4)
    rollout = env.rollout(5000, break_when_any_done=True)  # random actions drawn from the masked spec
    acting = rollout[GROUP, "mask"]
    assert bool((acting.sum(-1) == 1).all())
    action_mask = rollout[GROUP, "action_mask"]
    assert bool(action_mask[~acting].all())  # other seats' rows: all True, never all False
    chosen = rollout[GROUP, "action"][acting]
    assert bool(action_mask[acting].gather(-1, chosen[:, None]).all())  # the acting seat chose legally
    assert bool(rollout["next", "done"][-1])
    totals = env._env.game.totals
    got = rollout["next", GROUP, "reward"].squeeze(-1).sum(0)
    want = torch.tensor([((sum(totals) - t) / 2 - t) / 100 for t in totals])
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_self_play_ppo_trains_and_exports_for_eval(tmp_path):
    out = tmp_path / "trl"
    # the env raises IllegalActionError on an illegal action: finishing proves there was none
    result = CliRunner().invoke(cli, ["torchrl", "--frames", "2048", "--frames-per-batch", "1024", "--players", "3",
                                      "--rounds", "2", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["frames"] == 2048 and summary["decisions"] == 2048 and summary["updates"] > 0
    assert load_checkpoint(out / "model.pt")["train_config"]["trainer"] == "torchrl-ppo"
    result = CliRunner().invoke(cli, ["eval", str(out / "model.pt"), "random", "--players", "3", "--rounds", "2",
                                      "--deal-sets", "3", "--no-progress"])
    assert result.exit_code == 0, result.output


def test_bad_rules_are_a_clear_error():
    result = CliRunner().invoke(cli, ["torchrl", "--players", "9", "--frames", "10"])
    assert result.exit_code == 2 and "num_players" in result.output


def test_a_time_limit_stops_the_run(tmp_path):
    from training.torchrl_ppo import train

    summary = train(RULES, 10_000_000, tmp_path, frames_per_batch=256, progress=False, time_limit_minutes=0.02)
    assert summary["frames"] < 10_000_000 and summary["seconds"] < 60
