"""Evaluation, expert collection and label collection on a Ray cluster (``--address``): a
one-machine cluster started as the RLlib test starts one (token authentication), the same report
and the same labels as in this process, and a wrong address is a clear error in seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integrations.ray_head import free_port, ray_head

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.framework


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Ray head on this machine: (address, environment)."""
    with ray_head(tmp_path_factory.mktemp("ray")) as head:
        yield head


def _cli(args: list[str], env: dict, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chickenfoot.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


@pytest.mark.slow
def test_eval_and_expert_on_a_cluster_match_this_process(cluster, tmp_path):
    address, env = cluster
    rules = ["--players", "2", "--max-pip", "6", "--rounds", "2", "--deal-sets", "6", "--seed", "3", "--no-progress"]
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    out = _cli(["eval", "heuristic", "random", *rules, "--json", str(local)], env)
    assert out.returncode == 0, out.stderr[-3000:]
    out = _cli(["eval", "heuristic", "random", *rules, "--json", str(remote),
                "--address", address], env)
    assert out.returncode == 0, out.stderr[-3000:]
    a, b = json.loads(local.read_text()), json.loads(remote.read_text())
    for ra, rb in zip(a["results"], b["results"]):
        for key in ("win_rate", "win_rate_ci95", "mean_points", "mean_points_ci95"):
            assert ra[key] == pytest.approx(rb[key]), key
    out = _cli(["expert", "--config", str(ROOT / "configs" / "expert-smoke.yaml"), "--runs-dir", str(tmp_path),
                "--iterations", "1", "--workers", "2", "--address", address, "--no-progress"], env)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout[out.stdout.index("{"):out.stdout.rindex("}") + 1])
    assert summary["iterations"] == 1 and summary["samples"] > 0


@pytest.mark.slow
def test_label_shards_from_the_cluster_are_the_ones_this_process_makes(cluster, tmp_path):
    import numpy as np

    address, env = cluster
    args = ["--players", "2", "--max-pip", "6", "--rounds", "1", "--shards", "2", "--shard-games", "1",
            "--slots", "1", "--student", "heuristic", "--teacher", "search:ms=0:sims=16:race=2", "--seed", "5",
            "--no-progress"]
    for name, extra in (("local", []), ("remote", ["--workers", "2", "--address", address])):
        out = subprocess.run([sys.executable, "-m", "chickenfoot.cli", "labels", "collect", "--out", str(tmp_path / name),
                              *args, *extra], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
    for shard in ("shard_00000.npz", "shard_00001.npz"):  # written by this process, from the actors' arrays
        with np.load(tmp_path / "local" / shard) as a, np.load(tmp_path / "remote" / shard) as b:
            assert sorted(a.files) == sorted(b.files) and len(a["ret"]) > 0
            for key in a.files:
                assert np.array_equal(a[key], b[key]), (shard, key)


def test_a_wrong_address_is_a_clear_error_in_seconds(tmp_path):
    start = time.perf_counter()
    out = _cli(["eval", "heuristic", "greedy", "--deal-sets", "1", "--address", f"127.0.0.1:{free_port()}"],
               dict(os.environ))
    assert out.returncode == 1 and "could not join the Ray cluster" in out.stderr + out.stdout
    assert time.perf_counter() - start < 60


@pytest.mark.slow
def test_an_actor_that_dies_loses_no_deal_set(cluster, tmp_path):
    """One of two actors is killed (os._exit in the deal-set hook) after playing deal set 2: its
    deal sets are played by the other, and the report is the one-process report."""
    address, env = cluster
    script = f"""
import json, warnings
from cf_env import RulesConfig
from training.evaluate import evaluate
from tests.training.test_worker_loss import KillOnce

rules = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)
kwargs = dict(deal_sets=8, seed=4, progress=False)
alone = evaluate(["heuristic", "random"], rules, **kwargs)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    hit = evaluate(["heuristic", "random"], rules, workers=2, address={address!r},
                   on_deal_set=KillOnce({str(tmp_path / 'died')!r}, 2), **kwargs)
print(json.dumps({{"same": hit.per_deal_set == alone.per_deal_set, "hooks": hit.hook_results,
                   "warnings": [str(w.message) for w in caught]}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                         env={**env, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert (tmp_path / "died").exists() and result["same"] and result["hooks"] == list(range(8))
    assert any("Ray worker died" in w for w in result["warnings"]), result["warnings"]
