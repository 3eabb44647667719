"""Tianshou 2.x: masked DQN through our observation adapter; the export plays in `chickenfoot eval`."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tianshou")

from click.testing import CliRunner

import agents
from agents.checkpoint import load_checkpoint
from cf_env import RulesConfig
from chickenfoot.cli import main as cli
from training.tianshou_dqn import make_env

pytestmark = pytest.mark.framework
RULES = RulesConfig(num_players=3, rounds=2)


def test_adapter_gives_tianshou_keys_and_fixed_info():
    env = make_env(RULES, ["random"])
    obs, info = env.reset(seed=0)
    assert set(obs) == {"obs", "mask"} and obs["mask"].dtype == bool and env.observation_space.contains(obs)
    keys = set(info)
    done = False
    while not done:
        action = int(np.flatnonzero(obs["mask"])[0])
        obs, _, done, _, info = env.step(action)
        assert set(info) == keys and info["totals"].shape == (3,)
    assert list(info["totals"]) == env.unwrapped.aec.game.totals


def test_dqn_trains_without_illegal_actions_and_exports(tmp_path):
    out = tmp_path / "ts"
    # the env raises IllegalActionError on an illegal action: finishing proves there was none
    result = CliRunner().invoke(cli, ["tianshou", "--steps", "1000", "--players", "3", "--rounds", "2",
                                      "--opponents", "random", "--num-envs", "2", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] >= 1000 and summary["gradient_steps"] > 0
    data = load_checkpoint(out / "model.pt")
    assert data["train_config"]["trainer"] == "tianshou-dqn"
    agent = agents.load(str(out / "model.pt"), RULES)
    assert agent.config == RULES
    result = CliRunner().invoke(cli, ["eval", str(out / "model.pt"), "random", "--players", "3", "--rounds", "2",
                                      "--deal-sets", "3", "--no-progress"])
    assert result.exit_code == 0, result.output


def test_unknown_opponent_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(cli, ["tianshou", "--opponents", "grandmaster", "--steps", "10", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "unknown agent spec" in result.output


def test_a_time_limit_stops_the_run(tmp_path):
    from training.tianshou_dqn import train

    summary = train(RulesConfig(num_players=3, rounds=2), ["random"], 10_000_000, tmp_path, num_envs=2,
                    progress=False, time_limit_minutes=0.03)
    assert summary["steps"] < 10_000_000 and summary["seconds"] < 60
