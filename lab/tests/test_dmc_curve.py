"""The curves of a run read from its TensorBoard events (lab/dmc_curve.py)."""

from __future__ import annotations

import json

import pytest
from torch.utils.tensorboard import SummaryWriter

from lab import dmc_curve


def test_the_eval_scalars_come_back_by_decisions_and_seconds_and_in_bands(tmp_path, capsys):
    writer = SummaryWriter(str(tmp_path / "run"))
    for i, step in enumerate([100_000, 400_000, 700_000, 1_500_000, 2_500_000]):
        writer.add_scalar("eval/win_rate_vs_heuristic", 0.5 - 0.1 * i, step, walltime=1000.0 + 60 * i)
        writer.add_scalar("losses/q_loss", 0.03, step, walltime=1000.0 + 60 * i)
    writer.add_scalar("eval/win_rate_vs_zoo:strong-4p", 0.25, 100_000, walltime=1000.0)
    writer.close()
    curves = dmc_curve.read_curves(tmp_path / "run")
    assert set(curves) == {"eval/win_rate_vs_heuristic", "eval/win_rate_vs_zoo:strong-4p"}
    points = curves["eval/win_rate_vs_heuristic"]
    assert [p[0] for p in points] == [100_000, 400_000, 700_000, 1_500_000, 2_500_000]
    assert [p[1] for p in points] == [0.0, 60.0, 120.0, 180.0, 240.0]
    summary = dmc_curve.bands(points)
    assert [(b["from"], b["points"]) for b in summary] == [(0, 2), (500_000, 1), (1_000_000, 1), (2_000_000, 1)]
    assert summary[0]["mean"] == pytest.approx(0.45) and summary[-1]["seconds"] == 240.0
    out = tmp_path / "curve.json"
    dmc_curve.main([str(tmp_path / "run"), "--out", str(out)])
    saved = json.loads(out.read_text())
    assert saved["curves"]["eval/win_rate_vs_heuristic"]["points"][1] == [400_000, 60.0, pytest.approx(0.4)]
    assert "0.5M-1.0M: 0.300 over 1 points" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="not a run"):
        dmc_curve.read_curves(tmp_path / "missing")
