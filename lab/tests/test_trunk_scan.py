"""The trunk scan (lab/trunk_scan.py): one row per kind and epoch, fitted to the same labels."""

from __future__ import annotations

import pytest

from cf_env import RulesConfig
from lab import trunk_scan
from training import labels

TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)


def test_the_scan_fits_each_kind_and_reports_train_and_held_out_fit(tmp_path, capsys):
    settings = labels.collection_settings("heuristic", "search:ms=0:sims=32:race=2", ["random"], TINY, seed=7,
                                          shard_games=2, slots=2)
    labels.collect_shards(tmp_path / "a", settings, 3, progress=False)
    rows = trunk_scan.scan([tmp_path / "a"], ["tanh256", "ln256"], epochs=2, holdout=0.34)
    assert [(r["kind"], r["epoch"]) for r in rows] == [("tanh256", 1), ("tanh256", 2), ("ln256", 1), ("ln256", 2)]
    for row in rows:
        for part in ("train", "test"):
            assert 0.0 <= row[part]["agreement"] <= 1.0 and row[part]["regret"] >= 0.0
    assert rows[1]["train"] != rows[3]["train"]  # two networks, not one
    assert capsys.readouterr().out.count("\n") == 4  # a JSON line a row, as it ends
    with pytest.raises(ValueError, match="unknown kinds"):
        trunk_scan.scan([tmp_path / "a"], ["gelu"])
