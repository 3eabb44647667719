"""The ladder (training.ladder, chickenfoot ladder, play --level): ratings fitted by maximum
likelihood recover the strengths that generated the results, an agent's rating sits where its
results against fixed rungs put it, and the command rates your own class."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cf_env import ConfigError, RulesConfig
from chickenfoot.cli import main
from training.ladder import PANELS, fit_ratings, ladder, level_spec, panel_for

SMALL = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)


@pytest.mark.parametrize("seats", [2, 4])
def test_fitted_ratings_recover_the_strengths_behind_the_results(seats):
    truth = np.array([0.0, 120.0, 300.0, 310.0])
    results = []
    for i in range(4):
        for j in range(4):
            if i != j:
                g = 10 ** (truth[i] / 400)
                p = g / (g + (seats - 1) * 10 ** (truth[j] / 400))
                results.append((i, j, 1000 * p, 1000.0))  # the expected wins: the MLE is the truth
    assert fit_ratings(results, 4, {0: 0.0}, seats) == pytest.approx(truth, abs=1e-6)


def test_an_agent_is_rated_between_the_rungs_it_beats_and_loses_to():
    panel = [("random", 0.0), ("heuristic", 400.0)]
    result = ladder("greedy", SMALL, deal_sets=6, progress=False, panel=panel, bootstrap=50)
    lo, hi = result.rating_ci95
    assert [r["spec"] for r in result.rungs] == ["random", "heuristic"] and result.rungs[0]["games"] == 18
    assert lo <= result.rating <= hi and 0.0 < result.rating < 400.0  # above random, below heuristic
    again = ladder("greedy", SMALL, deal_sets=6, progress=False, panel=panel, bootstrap=50)
    assert again.rating == result.rating  # fixed deal sets: the same rating on every machine
    assert "rating" in result.table()
    with pytest.raises(ConfigError, match="no panel"):
        panel_for(SMALL)


def test_levels_are_the_rungs():
    assert [level_spec(k, 4) for k in (1, 3, 5)] == ["random", "heuristic", "zoo:strong-4p"]
    assert level_spec(4, 2) == "zoo:strong-2p-545k" and len(PANELS[2]) == len(PANELS[4]) == 5
    assert all(a[1] < b[1] for panel in PANELS.values() for a, b in zip(panel, panel[1:]))  # weakest first
    with pytest.raises(ConfigError, match="level must be 1 to 5"):
        level_spec(6, 4)
    result = CliRunner().invoke(main, ["play", "--level", "2", "--opponents", "random"])
    assert result.exit_code == 2 and "not both" in result.output


@pytest.mark.slow
def test_the_command_rates_your_own_class(tmp_path):
    out = tmp_path / "ladder.json"
    result = CliRunner().invoke(main, ["ladder", "examples/my_agent.py:MyAgent", "--players", "2", "--deal-sets", "2",
                                       "--no-progress", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [r["spec"] for r in data["rungs"]] == [spec for spec, _ in PANELS[2]]
    assert np.isfinite(data["rating"]) and "on the 2-player ladder" in result.output
    assert "zoo:strong-2p-545k" in data["provenance"]["checkpoints"]  # the rungs' files are hashed too
    assert CliRunner().invoke(main, ["ladder"]).exit_code == 2


#: The files the panels' network rungs were calibrated with. A rung's rating holds only for these
#: weights: a network replaced in the zoo keeps its old file under a suffixed name for its rung.
RUNG_FILES = {"zoo:strong-4p": "bb8ff04d1406d8483ef0ec2fa5eb8afad4d5db03fc4dfadb160910d25ffc3e10",
              "zoo:strong-2p-545k": "cd3f2c07ad78c549334a6bd7b0dc0683aefb47a9eaf8165bd877554cbde52f28"}


def test_the_panels_network_rungs_are_the_weights_they_were_calibrated_with():
    import hashlib

    import agents

    rungs = {spec for panel in PANELS.values() for spec, _ in panel if spec.startswith("zoo:")}
    assert rungs == set(RUNG_FILES)
    for spec, digest in RUNG_FILES.items():
        assert hashlib.sha256(agents.zoo_path(spec[4:]).read_bytes()).hexdigest() == digest, (
            f"{spec} is not the network the ladder was calibrated with: keep that file under a suffixed name "
            f"for the rung, or calibrate the panel again (chickenfoot ladder --calibrate)")
