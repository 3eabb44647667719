"""Every code block of README.md and docs/*.md runs as a test (Sybil).

Python blocks run as written, one namespace per page. Shell blocks (``bash``) run line by line in a
fresh folder per page, where ``configs/`` and ``examples/`` are linked in, with this environment's
``bin`` first on ``PATH``; a page's commands may use the files its earlier commands wrote.

With ``CHICKENFOOT_DOCS_SMALL=1`` (the default here; ``0`` runs the commands as written) the
commands run at a small size: :data:`SMALL` rewrites their sizes and configs, ``make train`` runs
the smoke config with one deal set per evaluation, ``make test``/``lint``/``docs`` are checked
with ``make -n`` (CI runs them for real), interactive commands read ``q``, and ``play --web``
runs until it has printed its address. A block right after ``<!-- skip: next "REASON" -->`` does
not run (docs/contributing.md lists those).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
SMALL_SWITCH = os.environ.get("CHICKENFOOT_DOCS_SMALL", "1") != "0"
TIMEOUT = 600  #: seconds one command may take

#: (pattern, replacement) applied to every shell command in small mode, in this order
SMALL: list[tuple[str, str]] = [
    (r"--deal-sets \d+", "--deal-sets 1"),
    (r"--steps \d+", "--steps 300"),
    (r"--frames \d+", "--frames 512 --frames-per-batch 256"),
    (r"--workers \d+", "--workers 1"),  # two spawned processes cost more than they save on this little
    (r"--iterations \d+", "--iterations 1"),
    (r"--total-steps \d+", "--total-steps 2048"),
    (r"--shards \d+", "--shards 2"),
    (r"--shard-games \d+", "--shard-games 1"),
    (r"--imitation-games \d+", "--imitation-games 4"),
    (r"--epochs \d+", "--epochs 1"),
    (r"--(collect-)?minutes [\d.]+", r"--\1minutes 0.05"),
    (r"configs/default\.yaml", "configs/smoke.yaml"),
    (r"configs/distill(-2p)?\.yaml", "configs/distill-small.yaml"),
    (r"configs/expert-[24]p\.yaml", "configs/expert-smoke.yaml"),
    (r"configs/dmc-4p\.yaml", "configs/dmc-smoke.yaml"),
    (r"configs/rllib\.yaml", "configs/rllib-smoke.yaml"),
]
#: make targets checked with ``make -n`` in small mode (CI runs them for real)
DRY_TARGETS = ("test", "lint", "docs")


def small(command: str) -> str:
    """``command`` at the small size (:data:`SMALL`)."""
    for pattern, replacement in SMALL:
        command = re.sub(pattern, replacement, command)
    if "chickenfoot compare" in command or "chickenfoot ladder" in command:  # an interval needs two deal sets
        command = command.replace("--deal-sets 1", "--deal-sets 2")
    return command


def _uncomment(line: str) -> str:
    """``line`` without a trailing shell comment (a ``#`` outside quotes, after a blank)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line


def commands(block: str) -> list[str]:
    """The block's commands: continuation lines joined, blank and comment lines dropped."""
    out, current = [], ""
    for line in block.splitlines():
        line = _uncomment(line)
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip() and not current.strip().startswith("#"):
            out.append(current.strip())
        current = ""
    return out


def _make(command: str, folder: Path) -> str:
    """A ``make`` command run in the checkout; in small mode, the small configs and sizes."""
    words = command.split()
    target = next((w for w in words[1:] if "=" not in w and not w.startswith("-")), "help")
    rest = " ".join(words[1:])
    if not SMALL_SWITCH:
        return f"make -C {ROOT} {rest}"
    if target in DRY_TARGETS:
        return f"make -n -C {ROOT} {rest}"
    if target in ("train", "train-ppo"):
        return (f"make -C {ROOT} {rest} RUNS={folder / 'runs'} DISTILL_CONFIG=configs/distill-small.yaml "
                f"PPO_CONFIG=configs/smoke.yaml EVAL_DEAL_SETS=1 BASELINE_DEAL_SETS=1 EVAL_WORKERS=1")
    return f"make -C {ROOT} {rest}"


def _serve(command: str, folder: Path, env: dict) -> None:
    """A server (``play --web``): it must print its address, then it is stopped as Ctrl-C would."""
    if "--port" not in command:
        command += " --port 0"
    if "--no-browser" not in command:
        command += " --no-browser"
    def interruptible() -> None:  # a shell that started this suite with `&` ignores SIGINT; Ctrl-C is what we test
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(["bash", "-c", command], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, preexec_fn=interruptible)
    seen, start = "", time.monotonic()
    try:
        assert proc.stdout is not None
        while "http://127.0.0.1:" not in seen and time.monotonic() - start < 120:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen += line
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:  # read what it writes while it stops: a full pipe would block its exit
            seen += proc.communicate(timeout=90)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            seen += proc.communicate()[0]
            raise AssertionError(f"{command!r} did not stop within 90 s of Ctrl-C:\n{seen[-3000:]}") from None
    assert "http://127.0.0.1:" in seen, f"{command!r} did not serve:\n{seen[-3000:]}"


def run_shell(example) -> None:
    """Sybil's evaluator of a ``bash`` block."""
    folder: Path = example.namespace["_shell_folder"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "CHICKENFOOT_DOCS_SMALL": "1"}
    for command in commands(example.parsed):
        command = command.replace(".venv/bin/", f"{BIN}/")
        if SMALL_SWITCH:
            command = small(command)
        if command.startswith("make "):
            command = _make(command, folder)
        if command.startswith("source .venv/"):
            command = f"source {BIN}/activate"
        if "chickenfoot play" in command and "--web" in command:
            _serve(command, folder, env)
            continue
        interactive = ("chickenfoot play" in command or
                       ("chickenfoot replay" in command and "--html" not in command and "--gif" not in command))
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                              input="q\n" if interactive else "", timeout=TIMEOUT)
        assert done.returncode == 0, (f"{command!r} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                                      f"\n--- stderr\n{done.stderr[-3000:]}")


def _setup(namespace: dict) -> None:
    folder = Path(tempfile.mkdtemp(prefix="chickenfoot-docs-"))
    for name in ("configs", "examples"):
        (folder / name).symlink_to(ROOT / name)
    namespace["_shell_folder"] = folder


def _teardown(namespace: dict) -> None:
    shutil.rmtree(namespace["_shell_folder"], ignore_errors=True)


pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser(), CodeBlockParser(language="bash", evaluator=run_shell),
             SkipParser()],
    patterns=["README.md", "docs/*.md"],
    setup=_setup,
    teardown=_teardown,
    fixtures=[],
).pytest()



# the tests that start Ray: `make test` runs them in a process of their own, one after another, beside
# the others (two processes, pytest-xdist), since `ray stop --force` ends every Ray process on the machine
_RAY_FILES = ("tests/integrations/test_rllib.py", "tests/integrations/test_ray_pool.py", "docs/frameworks.md",
              "README.md")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the Ray tests ``ray`` as they are collected (``-m ray`` / ``-m "not ray"`` select them)."""
    if item.nodeid.split("::")[0] in _RAY_FILES:
        item.add_marker(pytest.mark.ray)
