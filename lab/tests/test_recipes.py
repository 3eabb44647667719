"""lab/recipes/strong-2p.sh, the one command behind zoo:strong-2p: every command it runs names a
real chickenfoot (or lab.policy_distill) command with options that command has, its ensemble step
builds lab/zoo/strong-2p-ensemble.pt from the members that file records, in their order, and its
last step fits the shipped network to that ensemble as the shipped file records."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import click

from agents import zoo_path
from agents.checkpoint import load_checkpoint
from chickenfoot.cli import main
from lab import policy_distill

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
    everything = _commands(str(tmp_path))
    commands = [c for c in everything if c[0] == "chickenfoot"]
    assert [c[1] for c in commands] == ["distill", "labels", "labels", "labels", "labels", "labels", "labels",
                                        "ensemble"]
    lab_steps = everything[len(commands):]
    assert [c[:3] for c in lab_steps] == [["python", "-m", "lab.policy_distill"]] * 4
    for argv in lab_steps:  # the distillation from the ensemble: its own parsers read them
        args = argv[3:]
        parsed = policy_distill.play_parser().parse_args(args[1:]) if args[0] == "play" \
            else policy_distill.parser().parse_args(args)
        assert parsed.torch_threads == 2
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


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_the_ensemble_step_builds_the_kept_ensemble_from_its_members_in_order():
    ensemble = next(c for c in _commands("runs") if c[:2] == ["chickenfoot", "ensemble"])
    members = ensemble[2:ensemble.index("--precision")]
    kept = load_checkpoint(ROOT / "lab" / "zoo" / "strong-2p-ensemble.pt")
    assert kept["train_config"] == {"ensemble": members}
    assert kept["precision"] == _option(ensemble, "--precision") == "int8"


def test_the_last_step_fits_the_shipped_network_as_its_file_records():
    commands = _commands("runs")
    ensemble, last = next(c for c in commands if c[:2] == ["chickenfoot", "ensemble"]), commands[-1]
    shipped = load_checkpoint(zoo_path("strong-2p"))
    config = shipped["train_config"]
    assert _option(last, "--teacher") == _option(ensemble, "--out")  # the ensemble's policy is the target
    assert config["teacher_ensemble"] == ensemble[2:ensemble.index("--precision")]
    assert shipped["precision"] == _option(last, "--precision") == "float16"
    assert config["epochs"] == int(_option(last, "--epochs"))
    assert config["learning_rate"] == float(_option(last, "--learning-rate"))
    assert len(config["source"]["states"]) == len(last[last.index("--states") + 1:last.index("--out")]) == 2
