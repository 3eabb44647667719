"""Paired comparisons (training.compare.compare, chickenfoot compare): common random numbers, so
an agent compared with itself differs by exactly 0, and the figures are the two evaluations'; the
sequential test (training.stats.Sprt) stops at the verdict the data call for, and a saved
comparison resumes where it stopped."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cf_env import ConfigError, RulesConfig
from chickenfoot.cli import main
from training.compare import compare
from training.evaluate import evaluate
from training.stats import Sprt, elo_of_win_rates, head_to_head_elo, head_to_head_win_rate, win_rate_at_elo

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
    assert result.win_rate == pytest.approx((one.results[0].win_rate, two.results[0].win_rate))
    assert result.win_rate_diff == pytest.approx(d[:, 0].mean()) and result.mean_points_diff == pytest.approx(d[:, 1].mean())
    lo, hi = result.mean_points_diff_ci95
    assert lo < result.mean_points_diff < hi and result.games == 24
    assert -1.0 <= result.win_rate_correlation <= 1.0
    head = compare("heuristic", "greedy", SMALL, vs=None, deal_sets=4, seed=1, progress=False)
    assert head.vs == [] and head.win_rate[0] + 2 * head.win_rate[1] == pytest.approx(1.0)
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
    assert data["a"] == "heuristic" and data["b"] == "greedy" and len(data["per_deal_set"]["a"]) == 4
    result = CliRunner().invoke(main, ["compare", "heuristic", "nobody", "--deal-sets", "2"])
    assert result.exit_code == 2 and "nobody" in result.output


def test_elo_conversions_invert_each_other():
    assert elo_of_win_rates(0.5, 0.5) == 0.0
    assert elo_of_win_rates(win_rate_at_elo(0.3, 40.0), 0.3) == pytest.approx(40.0)
    assert head_to_head_win_rate(0.0, 4) == pytest.approx(0.25) and head_to_head_win_rate(0.0, 2) == pytest.approx(0.5)
    assert head_to_head_elo(head_to_head_win_rate(-25.0, 3), 3) == pytest.approx(-25.0)
    lower, upper = Sprt(alpha=0.05, beta=0.05).bounds
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    for bad in ({"elo0": 10.0, "elo1": 5.0}, {"alpha": 0.0}, {"beta": 0.7}, {"min_deal_sets": 1}):
        with pytest.raises(ConfigError):
            Sprt(**bad)


def test_a_sequential_comparison_stops_at_the_verdict_the_data_call_for():
    stronger = compare("heuristic", "random", SMALL, vs=["greedy"], deal_sets=200, seed=2, progress=False,
                       sprt=Sprt(elo0=0.0, elo1=40.0))
    assert stronger.verdict == "H1" and 10 <= stronger.deal_sets < 200
    assert stronger.sprt["llr"] >= stronger.sprt["bounds"][1] and stronger.elo > 40.0
    assert stronger.fixed_deal_sets["paired"] > 0 and stronger.fixed_deal_sets["independent"] > 0
    assert "verdict H1" in stronger.table() and "fixed-size test" in stronger.table()
    weaker = compare("random", "heuristic", SMALL, vs=["greedy"], deal_sets=200, seed=2, progress=False,
                     sprt=Sprt(elo0=0.0, elo1=40.0))
    assert weaker.verdict == "H0" and weaker.deal_sets < 200
    same = compare("greedy", "greedy", SMALL, vs=["random"], deal_sets=50, seed=2, progress=False, sprt=Sprt())
    assert same.verdict == "H0" and same.deal_sets == Sprt().min_deal_sets  # identical play: no difference at all
    head = compare("heuristic", "random", SMALL, vs=None, deal_sets=200, seed=2, progress=False,
                   sprt=Sprt(elo0=0.0, elo1=40.0))
    assert head.verdict == "H1"


def test_a_saved_comparison_resumes_where_it_stopped(tmp_path):
    path = tmp_path / "c.jsonl"
    test = Sprt(elo0=0.0, elo1=5.0, alpha=0.01, beta=0.01)  # far from a verdict in a few deal sets
    whole = compare("heuristic", "greedy", SMALL, vs=["random"], deal_sets=9, seed=5, progress=False, sprt=test)
    compare("heuristic", "greedy", SMALL, vs=["random"], deal_sets=4, seed=5, progress=False, sprt=test, save=path)
    with path.open("a") as f:
        f.write('{"d": 4, "a": [0.5')  # a line cut short by a stop
    resumed = compare("heuristic", "greedy", SMALL, vs=["random"], deal_sets=9, seed=5, progress=False, sprt=test,
                      save=path)
    assert resumed.per_deal_set == whole.per_deal_set and resumed.sprt == whole.sprt
    assert len(path.read_text().splitlines()) == 1 + 9
    assert all(ms > 0 for ms in whole.ms_per_choice) and "ms/choice" in whole.table()  # the deal sets played here
    again = compare("heuristic", "greedy", SMALL, vs=["random"], deal_sets=9, seed=5, progress=False, sprt=test,
                    save=path)
    assert again.per_deal_set == whole.per_deal_set and again.ms_per_choice is None  # the file keeps no times
    assert "ms/choice" not in again.table()
    with pytest.raises(ConfigError, match="holds another comparison"):
        compare("heuristic", "random", SMALL, vs=["greedy"], deal_sets=2, progress=False, save=path)


def test_the_command_runs_until_a_verdict(tmp_path):
    args = ["compare", "heuristic", "random", "--vs", "greedy", "--players", "3", "--max-pip", "6", "--hand-size", "5",
            "--rounds", "2", "--deal-sets", "300", "--seed", "2", "--no-progress", "--until-verdict", "--elo1", "40",
            "--save", str(tmp_path / "c.jsonl")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "SPRT: LLR" in result.output and "verdict H1" in result.output
    result = CliRunner().invoke(main, [*args[:-2], "--elo0", "50"])
    assert result.exit_code == 2 and "elo1 must be greater than elo0" in result.output
