"""Evaluation and expert collection on a Ray cluster (``--address``): a one-machine cluster
started as the RLlib test starts one (token authentication), the same report as in this process,
and a wrong address is a clear error in seconds."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.framework


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``ray start --head`` with 2 CPUs and token auth; yields (address, environment)."""
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_cli, "the ray command is missing from the venv"
    token = tmp_path_factory.mktemp("ray") / "token"
    token.write_text(secrets.token_hex(32))
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_USAGE_STATS_ENABLED": "0"}
    port = _free_port()
    start = subprocess.run([ray_cli, "start", "--head", "--num-cpus=2", "--node-ip-address=127.0.0.1", f"--port={port}",
                            "--include-dashboard=false", "--disable-usage-stats"],
                           capture_output=True, text=True, env=env, timeout=120)
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)


def _cli(args: list[str], env: dict, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chickenfoot.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


@pytest.mark.slow
def test_eval_and_expert_on_a_cluster_match_this_process(cluster, tmp_path):
    address, env = cluster
    rules = ["--players", "2", "--max-pip", "6", "--rounds", "2", "--deal-sets", "6", "--seed", "3", "--no-progress"]
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    out = _cli(["eval", "heuristic", "random", *rules, "--luck-correction", "--json", str(local)], env)
    assert out.returncode == 0, out.stderr[-3000:]
    out = _cli(["eval", "heuristic", "random", *rules, "--luck-correction", "--json", str(remote),
                "--address", address], env)
    assert out.returncode == 0, out.stderr[-3000:]
    a, b = json.loads(local.read_text()), json.loads(remote.read_text())
    for ra, rb in zip(a["results"], b["results"]):
        for key in ("win_rate", "win_rate_ci95", "mean_points", "win_rate_corrected", "mean_points_corrected_ci95"):
            assert ra[key] == pytest.approx(rb[key]), key
    out = _cli(["expert", "--config", str(ROOT / "configs" / "expert-smoke.yaml"), "--runs-dir", str(tmp_path),
                "--iterations", "1", "--workers", "2", "--address", address, "--no-progress"], env)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout[out.stdout.index("{"):out.stdout.rindex("}") + 1])
    assert summary["iterations"] == 1 and summary["samples"] > 0


def test_a_wrong_address_is_a_clear_error_in_seconds(tmp_path):
    start = time.perf_counter()
    out = _cli(["eval", "heuristic", "greedy", "--deal-sets", "1", "--address", f"127.0.0.1:{_free_port()}"],
               dict(os.environ))
    assert out.returncode == 1 and "could not join the Ray cluster" in out.stderr + out.stdout
    assert time.perf_counter() - start < 60
