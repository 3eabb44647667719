"""The baselines sweep (lab/baselines.py) times the machine before it trains: a row from a machine
slower than ``--min-speed`` of the reference is refused before any training, and nothing is written."""

from __future__ import annotations

from lab import baselines


def test_the_machine_speed_is_a_share_of_the_reference():
    speed = baselines.machine_speed(runs=1, steps=2000)
    assert 0.0 < speed < 20.0


def test_a_machine_below_min_speed_trains_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(baselines, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(baselines, "machine_speed", lambda: 0.5)
    ran: list[object] = []
    monkeypatch.setattr(baselines.subprocess, "run", lambda *a, **k: ran.append(a))
    assert baselines.run("ppo", 30.0, 10, tmp_path / "runs", min_speed=0.85) is None
    assert not ran and not (tmp_path / "results").exists()
    assert "0.50 of the reference" in capsys.readouterr().out
