"""The learned belief's experiment (lab/belief.py): positions with their true hidden tiles, a fit,
and the scores of every method on held-out positions."""

from __future__ import annotations

import math

import numpy as np

from cf_env import Game, RulesConfig
from lab import belief


def test_the_labels_put_every_hidden_tile_where_it_is():
    config = RulesConfig()
    game = Game(config, seed=3)
    for _ in range(30):
        game.apply(game.legal_actions()[0])
    seat, n = game.current_player, config.num_players
    labels = belief.truth_labels(game, seat)
    for i in range(1, n):
        assert (labels == i - 1).sum() == game.hand_sizes[(seat + i) % n]
    assert (labels == n - 1).sum() == game.boneyard_size
    seen = labels == belief.SEEN
    assert seen.sum() == game.hand_sizes[seat] + len(game.layout())


def test_collect_fit_and_score(tmp_path):
    data, model = tmp_path / "positions", tmp_path / "belief.pt"
    common = ["--lineup", "heuristic", "--players", "2"]
    assert belief.main(["collect", "--out", str(data), "--games", "3", "--shard-games", "1", *common]) == {"shards": 3}
    before = sorted(p.stat().st_mtime_ns for p in data.glob("shard-*.npz"))
    belief.main(["collect", "--out", str(data), "--games", "3", "--shard-games", "1", *common])  # resumes: no new work
    assert sorted(p.stat().st_mtime_ns for p in data.glob("shard-*.npz")) == before
    fitted = belief.main(["fit", str(data), "--out", str(model), "--epochs", "2", "--hidden", "16", "--holdout", "0.34",
                          "--torch-threads", "1"])
    assert fitted["saved_epoch"] in (1, 2) and len(fitted["curve"]) == 2
    report = belief.main(["score", str(data), "--model", str(model), "--positions", "6", "--worlds", "8",
                          "--holdout", "0.34"])
    assert report["positions"] == 6 and report["hidden_tiles"] > 0
    for name in ("learned", "hand_sizes", "constraints_alpha1", "policy_alpha1", "belief_alpha1", "both_alpha1"):
        entry = report["methods"][name]
        assert math.isfinite(entry["nats_per_tile"]) and 0 < entry["p_true"] < 1
    # with 2 players every hidden tile is the opponent's or the boneyard's: hand sizes alone beat a coin
    assert report["methods"]["hand_sizes"]["nats_per_tile"] < np.log(2) + 1e-6
