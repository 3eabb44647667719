"""The speed benchmarks' anchors and table (benchmarks/env.py, benchmarks/table.py), run small: the
do-nothing AEC env passes PettingZoo's own API test, the env benchmark's JSON has every figure the
table reads, and the table prints one row per figure. (The figures themselves are measured by
``make bench``, not asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from pettingzoo.test import api_test

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import env as env_benchmark  # noqa: E402  (benchmarks/ is not a package)
import table as table_benchmark  # noqa: E402


def test_the_do_nothing_anchor_is_a_pettingzoo_aec_env():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(env_benchmark.do_nothing_env(4, 513, 102, 40), num_cycles=200)


@pytest.fixture(scope="module")
def env_json():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "env.py"), "--runs", "1", "--steps", "300"],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout)


def test_the_env_benchmark_measures_every_env_beside_its_anchors(env_json):
    for name in ("chicken_foot_raw_env", "chicken_foot_env", "chicken_foot_env_history",
                 "do_nothing_aec_env", "connect_four_raw_env", "connect_four_env"):
        assert env_json[f"{name}_decisions_per_s_median"] > 0
    assert env_json["do_nothing_game_length"] > 100  # as long as a random 4-player double-nine game
    assert env_json["raw_env_vs_do_nothing"] > 0


def test_the_table_has_a_row_per_figure(env_json):
    vector = {"by_batch": {"256": {"decisions_per_s_median": 800_000.0, "threads": True},
                           "4096": {"decisions_per_s_median": 1_250_000.0, "threads": True}},
              "numba_threads": 2, "runs": 5}
    evaluation = {"deal_sets": 500, "runs": 1, "config": "4 players",
                  "results": {name: {"spec": spec, "speedup_2_warm_median": 1.9, "speedup_2_cold_median": 1.7,
                                     "games_per_s_one_worker_median": 30.0}
                              for name, spec in (("network", "zoo:strong-4p"), ("heuristic", "heuristic"))}}
    text = table_benchmark.table(env_json, vector, evaluation)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 3 + 2 + 2  # the header, three env rows, two batch sizes, two evaluations
    assert "1.25M" in text and f"{env_json['raw_env_vs_do_nothing']}x a do-nothing" in text
