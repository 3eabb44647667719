"""lab/recipes/strong-2p.sh, the one command behind zoo:strong-2p: every command it runs names a
real chickenfoot command with options that command has, and its last step builds the ensemble the
shipped checkpoint records, from the same members in the same order."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import click

from agents import zoo_path
from agents.checkpoint import load_checkpoint
from chickenfoot.cli import main

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "lab" / "recipes" / "strong-2p.sh"


def _commands(runs: str) -> list[list[str]]:
    out = subprocess.run(["bash", str(RECIPE), runs], cwd=ROOT, env={**os.environ, "DRY_RUN": "1"},
                         capture_output=True, text=True, check=True).stdout
    return [shlex.split(line) for line in out.splitlines()]


def _command(argv: list[str]) -> tuple[click.Command, list[str]]:
    command: click.Command = main
    rest = argv[1:]
    while isinstance(command, click.Group):
        command, rest = command.commands[rest[0]], rest[1:]
    return command, rest


def test_every_step_is_a_chickenfoot_command_with_options_it_has(tmp_path):
    commands = _commands(str(tmp_path))
    assert [c[1] for c in commands] == ["distill", "labels", "labels", "labels", "labels", "labels", "labels",
                                        "ensemble"]
    made = [tmp_path / "distill-2p-long" / f"labels-dagger-{i}" for i in range(1, 8)]
    for folder in [*made, tmp_path / "distill-2p-long" / "labels", tmp_path / "labels-2p-s256",
                   tmp_path / "labels-2p-s256b"]:
        folder.mkdir(parents=True)  # what the earlier steps make, so that the fits' folders parse
    for argv in commands:
        command, rest = _command(argv)
        known = {opt for param in command.params for opt in getattr(param, "opts", [])}
        flags = [a for a in rest if a.startswith("--")]
        assert flags and set(flags) <= known, (argv[:3], set(flags) - known)
        with command.make_context(argv[1], list(rest)) as ctx:  # values parse too (types, ranges)
            assert ctx.params
    fits = [c for c in commands if c[1:3] == ["labels", "fit"]]
    assert all(str(tmp_path / "distill-2p-long" / "labels") in c for c in fits)  # every fit reads the rounds


def test_the_last_step_builds_the_shipped_ensemble_from_its_members_in_order():
    ensemble = _commands("runs")[-1]
    members = ensemble[2:ensemble.index("--precision")]
    shipped = load_checkpoint(zoo_path("strong-2p"))
    assert shipped["train_config"] == {"ensemble": members}
    assert shipped["precision"] == ensemble[ensemble.index("--precision") + 1] == "int8"
