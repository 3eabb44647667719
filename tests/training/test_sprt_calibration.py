"""The sequential comparison's error rates, measured (benchmarks/sprt.py at a small size): equal
agents rarely get an H1 verdict, agents a known gap apart usually do, and the test stops sooner
than a fixed-size test with the same error rates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_false_verdicts_are_rare_and_the_gap_is_found():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sprt.py"), "--null", "60", "--gap", "30",
                          "--gap-deal-sets", "1000", "--seed", "3"], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["gap"]["elo"] > 20  # greedy against its opposite: a real gap
    # 60 null comparisons at alpha 0.05: 9 or more false verdicts has chance 0.2% if the test holds alpha
    assert result["null"]["h1"] <= 8, result["null"]
    assert result["power"]["power"] >= 0.8, result["power"]  # 1 - beta = 0.95 at the design margin
    assert result["power"]["mean_deal_sets"] < result["fixed_size_deal_sets"]["independent"]
