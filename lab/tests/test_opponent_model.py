"""The opponent model's fit (lab/opponent_model.py): a smoke run of its command, and the fit finds
a temperature the heuristic's own plays favour over a flat one."""

from __future__ import annotations

import math

from lab import opponent_model


def test_the_fit_runs_and_the_heuristic_is_likelier_than_uniform():
    report = opponent_model.main(["--players", "2", "--games", "2", "--agents", "heuristic", "--test", "greedy"])
    assert report["choices"] > 0 and 0 < report["temperature"] < math.inf
    heuristic = report["agents"]["heuristic"]
    assert heuristic["group"] == "fitted" and report["agents"]["greedy"]["group"] == "held out"
    assert heuristic["loglik_per_choice"] > heuristic["uniform_loglik_per_choice"]
