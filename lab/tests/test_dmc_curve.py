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


def test_a_pause_counts_nothing_and_the_plot_draws_every_run(tmp_path, capsys):
    """Events 10 s apart with a 30-minute gap (a process stopped, or a stop and its resume in a
    second events file): the gap is dropped from the seconds; the plot has a row an opponent."""
    first = SummaryWriter(str(tmp_path / "run"), filename_suffix=".a")
    for i in range(3):
        first.add_scalar("eval/win_rate_vs_heuristic", 0.5, 100_000 * (i + 1), walltime=1000.0 + 10 * i)
    first.close()
    resumed = SummaryWriter(str(tmp_path / "run"), filename_suffix=".b")
    for i in range(3):
        resumed.add_scalar("losses/q_loss", 0.01, 400_000 + i, walltime=2820.0 + 10 * i)
        resumed.add_scalar("eval/win_rate_vs_zoo:strong-4p", 0.2, 400_000 + i, walltime=2825.0 + 10 * i)
    resumed.close()
    curves = dmc_curve.read_curves(tmp_path / "run")
    assert [p[1] for p in curves["eval/win_rate_vs_heuristic"]] == [0.0, 10.0, 20.0]
    assert [p[1] for p in curves["eval/win_rate_vs_zoo:strong-4p"]] == [25.0, 35.0, 45.0]  # 1,800 s left out
    assert dmc_curve.read_curves(tmp_path / "run", max_gap=1e9)["eval/win_rate_vs_zoo:strong-4p"][0][1] == 1825.0
    saved = tmp_path / "a.curve.json"
    dmc_curve.main([str(tmp_path / "run"), "--out", str(saved)])
    png = tmp_path / "curves.png"
    result = dmc_curve.main(["--plot", str(png), str(saved), str(saved)])
    assert result["opponents"] == ["heuristic", "zoo:strong-4p"]  # the heuristic's row first
    from PIL import Image

    assert Image.open(png).size == (1200, 800)  # two rows of two panels at 100 dpi
    with pytest.raises(SystemExit):
        dmc_curve.main([str(tmp_path / "run"), str(tmp_path / "run")])
    assert "give one run's folder" in capsys.readouterr().err


def test_a_file_that_is_not_a_saved_curve_is_refused_by_name(tmp_path):
    old = tmp_path / "old.curve.json"
    old.write_text(json.dumps({"metric": "eval/win_rate_vs_heuristic", "points": [[1, 0.5]]}))
    with pytest.raises(ValueError, match="old.curve.json is not a saved curve"):
        dmc_curve.plot([old], tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
