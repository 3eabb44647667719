"""A Ray head on this machine for the cluster tests (RLlib, evaluation and expert collection):
``ray start --head`` with 2 CPUs and token authentication, stopped on exit."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def ray_head(folder: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """Start the head (its token file in ``folder``); yields its address and the environment a
    process needs to join it (``RAY_AUTH_MODE=token`` and the token's path)."""
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_cli, "the ray command is missing from the venv"
    token = folder / "token"
    token.write_text(secrets.token_hex(32))
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    start = subprocess.run([ray_cli, "start", "--head", "--num-cpus=2", "--node-ip-address=127.0.0.1", f"--port={port}",
                            "--include-dashboard=false", "--disable-usage-stats"],
                           capture_output=True, text=True, env=env, timeout=120)
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
