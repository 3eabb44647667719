"""``python -m agents.precompile`` (make setup runs it beside pip's install of torch) compiles the
kernels with the core dependencies alone."""

from __future__ import annotations

import subprocess
import sys


def test_precompile_runs_the_search_without_torch():
    code = ("import sys; from agents.precompile import main; "
            "main(['--spec', 'search:ms=0:sims=4:race=2', '--no-threads']); "
            "assert 'torch' not in sys.modules, 'precompile imported torch'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "precompiled in" in done.stdout and "search:ms=0:sims=4:race=2" in done.stdout
