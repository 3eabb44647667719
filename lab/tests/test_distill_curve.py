"""The distillation learning curve (lab/distill_curve.py): its points, their JSON and their plots."""

from __future__ import annotations

import json

import pytest

from cf_env import ConfigError, RulesConfig
from lab import distill_curve
from training import labels

TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)
TEACHER = "search:ms=0:sims=32:race=2"


def test_the_curve_command_warm_starts_saves_each_point_and_continues_its_json(tmp_path):
    settings = labels.collection_settings("heuristic", TEACHER, ["random"], TINY, seed=7, shard_games=2, slots=2)
    labels.collect_shards(tmp_path / "a", settings, 3, progress=False)
    out, plot = tmp_path / "curve.json", tmp_path / "curve.png"
    common = ["curve", "--labels", str(tmp_path / "a"), "--holdout", "0.34", "--hidden", "32", "32", "--imitate",
              "heuristic", "--imitation-games", "4", "--imitation-epochs", "1", "--opponent", "random",
              "--deal-sets", "1", "--no-progress", "--json", str(out)]
    args = common + ["--epochs", "1"]
    distill_curve.main(args + ["--sizes", "20"])
    first = json.loads(out.read_text())
    assert [r["size"] for r in first] == [20] and first[0]["labels"] == 20 and first[0]["imitate"] == "heuristic"
    assert first[0]["vs_random_games"] == 2 and 0.0 <= first[0]["test_agreement"] <= 1.0
    distill_curve.main(args + ["--sizes", "20", "40", "--plot", str(plot), "--reference", "goal=0.5"])
    rows = json.loads(out.read_text())
    assert [r["size"] for r in rows] == [20, 40] and rows[0] == first[0]  # the first point was not fitted again
    assert plot.stat().st_size > 0 and {r["teacher"] for r in rows} == {TEACHER}
    both = tmp_path / "both.png"  # the plot command draws saved curves together
    distill_curve.main(["plot", "--json", str(out), str(out), "--opponent", "random", "--out", str(both)])
    assert both.stat().st_size > 0
    with pytest.raises(ConfigError, match="against heuristic"):
        distill_curve.main(["plot", "--json", str(out), "--out", str(both)])
    with pytest.raises(ConfigError, match="epochs"):  # other settings: refused, the file unchanged
        distill_curve.main(common + ["--epochs", "2", "--sizes", "60"])
    assert json.loads(out.read_text()) == rows
    with pytest.raises(SystemExit):
        distill_curve.main(args + ["--sizes", "60", "--reference", "goal"])
    with pytest.raises(SystemExit):
        distill_curve.main(args + ["--sizes", "60", "--init", "zoo:strong-2p"])
