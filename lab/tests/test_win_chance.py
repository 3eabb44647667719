import json

import numpy as np
import pytest

from lab import win_chance


def test_the_empirical_chance_is_the_share_of_the_lowest_total():
    # two seats; every round the same points for both: the totals decide, ties are shared
    bank = np.array([[5.0, 5.0]])
    rng = np.random.default_rng(0)
    assert win_chance.empirical_chance(bank, np.array([0.0, 1.0]), 3, 100, rng) == 1.0
    assert win_chance.empirical_chance(bank, np.array([1.0, 0.0]), 3, 100, rng) == 0.0
    assert win_chance.empirical_chance(bank, np.array([0.0, 0.0]), 3, 100, rng) == 0.5
    # one seat scores 10 and the other 0, seats shuffled: seat 0 is lowest half the time
    bank = np.array([[10.0, 0.0]])
    assert win_chance.empirical_chance(bank, np.array([0.0, 0.0]), 1, 20_000, rng) == pytest.approx(0.5, abs=0.02)


def test_the_report_sets_the_two_estimates_beside_play(capsys):
    win_chance.main(["--games", "3", "--rounds-left", "1", "--samples", "2000", "--no-progress"])
    report = json.loads(capsys.readouterr().out)
    assert report["rounds"] == 30 and report["difference_sd"] > 0
    level = report["positions"][0]
    assert level["totals"] == [0, 0, 0, 0] and level["joint"] == pytest.approx(0.25, abs=1e-3)
    assert level["win"] == pytest.approx(0.125, abs=1e-3) and 0.1 < level["empirical"] < 0.4
    with pytest.raises(SystemExit):
        win_chance.main(["--games", "0"])
