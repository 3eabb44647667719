"""The examples under examples/ run as the README says, and what they save loads on the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from chickenfoot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_bring_your_own_agent_example(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "my_agent.py"), "--deal-sets", "2",
                             "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "lightest-first" in result.stdout and "4 games = 2 deal sets" in result.stdout
    network = tmp_path / "my_network.pt"
    assert f"chickenfoot eval {network} greedy" in result.stdout
    evaluated = CliRunner().invoke(main, ["eval", str(network), "greedy", "--deal-sets", "1", "--no-progress"])
    assert evaluated.exit_code == 0, evaluated.output
    assert "double-6, 3 rounds" in evaluated.output  # the rules came from the checkpoint
