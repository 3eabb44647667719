"""Paired comparisons (training.evaluate.compare, chickenfoot compare): common random numbers, so
an agent compared with itself differs by exactly 0, and the figures are the two evaluations'."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cf_env import ConfigError, RulesConfig
from chickenfoot.cli import main
from training.evaluate import compare, evaluate

SMALL = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)


def test_an_agent_against_itself_differs_by_exactly_nothing():
    same = compare("heuristic", "heuristic", SMALL, vs=["random"], deal_sets=6, seed=3, progress=False)
    assert same.win_rate_diff == 0.0 and same.mean_points_diff == 0.0
    assert same.win_rate_diff_ci95 == (0.0, 0.0) and same.win_rate_se[0] == 0.0 < same.win_rate_se[1]


def test_the_difference_is_the_two_evaluations_deal_set_by_deal_set():
    result = compare("heuristic", "greedy", SMALL, vs=["random"], deal_sets=8, seed=1, progress=False)
    one = evaluate(["heuristic", "random"], SMALL, deal_sets=8, seed=1, progress=False)
    two = evaluate(["greedy", "random"], SMALL, deal_sets=8, seed=1, progress=False)
    d = np.array(one.per_deal_set["heuristic"]) - np.array(two.per_deal_set["greedy"])
    assert result.win_rate == (one.results[0].win_rate, two.results[0].win_rate)
    assert result.win_rate_diff == pytest.approx(d[:, 0].mean()) and result.mean_points_diff == pytest.approx(d[:, 1].mean())
    lo, hi = result.mean_points_diff_ci95
    assert lo < result.mean_points_diff < hi and result.games == 24
    assert -1.0 <= result.win_rate_correlation <= 1.0
    head = compare("heuristic", "greedy", SMALL, vs=None, deal_sets=4, seed=1, progress=False)
    assert head.vs == [] and len(head.reports) == 1 and head.win_rate[0] + 2 * head.win_rate[1] == pytest.approx(1.0)
    for b, vs in (("greedy", ["heuristic"]), ("heuristic", None)):
        with pytest.raises(ConfigError, match="also among its opponents"):
            compare("heuristic", b, SMALL, vs=vs, deal_sets=2, progress=False)
    with pytest.raises(ConfigError, match="vs names no opponent"):
        compare("heuristic", "greedy", SMALL, vs=[], deal_sets=2, progress=False)


def test_the_command_prints_and_writes_the_comparison(tmp_path):
    out = tmp_path / "c.json"
    args = ["compare", "heuristic", "greedy", "--vs", "random", "--players", "3", "--max-pip", "6", "--hand-size", "5",
            "--rounds", "2", "--deal-sets", "4", "--no-progress", "--json", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "A - B" in result.output and "win rate" in result.output
    data = json.loads(out.read_text())
    assert data["a"] == "heuristic" and data["b"] == "greedy" and len(data["reports"]) == 2
    result = CliRunner().invoke(main, ["compare", "heuristic", "nobody", "--deal-sets", "2"])
    assert result.exit_code == 2 and "nobody" in result.output
