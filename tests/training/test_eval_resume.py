"""``eval`` keeps its work: Ctrl-C reports the deal sets played, ``--save`` resumes after them, and
every JSON report says where it came from."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cf_env import ConfigError, RulesConfig
from chickenfoot.cli import main
from training.evaluate import evaluate

RULES = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)
SMALL = ["--players", "2", "--max-pip", "4", "--hand-size", "4", "--rounds", "2", "--no-progress"]

# an agent whose owner presses Ctrl-C once it has made STOP_AFTER decisions (read at each decision,
# so one spec serves a stopped run and its resumption; a spec file:Class loads it)
STOPPER = """
import os

import numpy as np

class Stopper:
    name = "stopper"

    def __init__(self, config):
        self.decisions = 0

    def act(self, observation, rng):
        self.decisions += 1
        if self.decisions > int(os.environ.get("STOP_AFTER", "1000000000")):
            raise KeyboardInterrupt
        return int(np.flatnonzero(observation["action_mask"])[0])
"""


def _figures(report):
    return [(r.spec, r.seat_games, round(r.win_rate, 9), round(r.mean_points, 9), round(r.rating, 9))
            for r in report.results], report.per_deal_set


def test_a_saved_evaluation_resumes_to_the_same_report(tmp_path):
    whole = evaluate(["heuristic", "greedy"], RULES, deal_sets=6, seed=3, progress=False)
    save = tmp_path / "eval.jsonl"
    first = evaluate(["heuristic", "greedy"], RULES, deal_sets=2, seed=3, progress=False, save=save)
    assert first.deal_sets == 2 and len(save.read_text().splitlines()) == 3  # the header and two deal sets
    resumed = evaluate(["heuristic", "greedy"], RULES, deal_sets=6, seed=3, progress=False, save=save)
    assert _figures(resumed) == _figures(whole)
    assert len(save.read_text().splitlines()) == 7
    with pytest.raises(ConfigError, match="holds another evaluation"):
        evaluate(["random", "greedy"], RULES, deal_sets=6, seed=3, progress=False, save=save)
    with pytest.raises(ConfigError, match="holds another evaluation"):
        evaluate(["heuristic", "greedy"], RULES, deal_sets=6, seed=4, progress=False, save=save)


def test_ctrl_c_reports_the_deal_sets_played(tmp_path, monkeypatch):
    path = tmp_path / "stopper.py"
    path.write_text(STOPPER)
    monkeypatch.setenv("STOP_AFTER", "40")
    report = evaluate([f"{path}:Stopper", "greedy"], RULES, deal_sets=50, seed=0, progress=False)
    assert report.stopped_of == 50 and 0 < report.deal_sets < 50
    assert report.results[0].seat_games == 2 * report.deal_sets
    assert "of 50 (stopped)" in report.table()
    monkeypatch.setenv("STOP_AFTER", "0")  # stopped before any deal set: nothing to report
    with pytest.raises(KeyboardInterrupt):
        evaluate([f"{path}:Stopper", "greedy"], RULES, deal_sets=5, seed=0, progress=False)


def test_the_command_prints_the_report_exits_130_and_resumes_from_its_file(tmp_path, monkeypatch):
    stopper = tmp_path / "stopper.py"
    stopper.write_text(STOPPER)
    monkeypatch.setenv("STOP_AFTER", "40")
    save, report = tmp_path / "eval.jsonl", tmp_path / "report.json"
    args = ["eval", f"{stopper}:Stopper", "greedy", "--deal-sets", "50", "--save", str(save), "--json", str(report),
            *SMALL]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 130, result.output
    assert "stopped by Ctrl-C after" in result.output and "run the same command again to resume" in result.output
    assert "win rate" in result.output and "Traceback" not in result.output
    kept = len(save.read_text().splitlines()) - 1
    data = json.loads(report.read_text())
    assert data["deal_sets"] == kept and data["stopped_of"] == 50
    assert data["provenance"]["command"] and data["provenance"]["version"]
    monkeypatch.setenv("STOP_AFTER", str(10**9))  # the same agent, now patient: the run resumes and ends
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["deal_sets"] == 50


def test_every_json_report_carries_its_provenance(tmp_path):
    from agents import zoo_path
    from training.provenance import sha256

    out = tmp_path / "eval.json"
    result = CliRunner().invoke(main, ["eval", "zoo:strong-2p", "greedy", "--deal-sets", "1", "--json", str(out),
                                       "--rounds", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    prov = json.loads(out.read_text())["provenance"]
    assert set(prov) == {"version", "created", "command", "python", "platform", "checkpoints"}
    assert prov["checkpoints"] == {"zoo:strong-2p": sha256(zoo_path("strong-2p"))}
    assert np.datetime64(prov["created"][:19])  # ISO 8601
    out = tmp_path / "compare.json"
    result = CliRunner().invoke(main, ["compare", "heuristic", "greedy", "--vs", "random", "--deal-sets", "2",
                                       "--json", str(out), *SMALL])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["provenance"]["checkpoints"] == {}
