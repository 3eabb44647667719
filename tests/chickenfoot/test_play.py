"""``chickenfoot play`` as a person meets it: every way out keeps the game, the round-end hands are
the engine's, rounds open with who placed the double, arms are counted from 1 everywhere."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from cf_env import Game, RulesConfig, Tile
from cf_env.engine.scoring import tile_points
from cf_env.render import render_ansi
from cf_env.replay import landing, load_record
from chickenfoot.cli import main
from chickenfoot.play import parse_choice

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--players", "2", "--max-pip", "6", "--rounds", "2", "--seed", "3"]


class _Reader:
    """Collects a process's output in the background, so a test can wait for a line."""

    def __init__(self, stream) -> None:
        self.text = ""
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for chunk in iter(lambda: stream.read(1), ""):
            self.text += chunk

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = re.search(pattern, self.text)
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in {self.text[-2000:]!r}")


def _default_sigint() -> None:
    """Ctrl-C as a terminal delivers it: a shell's background job (``make test &``) starts with
    SIGINT ignored, the children inherit that and Python then installs no KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str]) -> tuple[subprocess.Popen, _Reader]:
    proc = subprocess.Popen([sys.executable, "-m", "chickenfoot.cli", *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=0,
                            preexec_fn=_default_sigint)
    return proc, _Reader(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("way_out", ["q", "end of input", "SIGINT", "SIGTERM", "SIGHUP"])
def test_every_way_out_of_play_writes_the_record_so_far(tmp_path, way_out):
    path = tmp_path / "game.json"
    proc, out = _start(["play", "--opponents", "greedy", *SMALL, "--save", str(path)])
    out.wait_for(r"your move")
    proc.stdin.write("0\n")
    proc.stdin.flush()
    out.wait_for(r"you (play|drew)")
    if way_out == "q":
        proc.stdin.write("q\n")
        proc.stdin.flush()
    elif way_out == "end of input":
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, way_out))
    proc.wait(timeout=60)
    assert f"game record written to {path}" in out.text, out.text[-1500:]
    record = load_record(path)
    assert len(record["game"]["actions"]) >= 1  # the move made before leaving is in it
    assert record["players"][0] == "you"


@pytest.mark.slow
def test_play_web_writes_the_record_on_sigterm(tmp_path):
    path = tmp_path / "web.json"
    proc, out = _start(["play", "--web", "--no-browser", "--port", "0", "--opponents", "greedy", *SMALL,
                        "--save", str(path)])
    url = out.wait_for(r"Play at (http://127\.0\.0\.1:\d+/)").group(1)
    state = json.loads(urllib.request.urlopen(url + "state", timeout=30).read())
    body = json.dumps({"action": state["legal"][0]["action"]}).encode()
    urllib.request.urlopen(urllib.request.Request(url + "move", data=body, method="POST"), timeout=30).read()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert f"game record written to {path}" in out.text, out.text[-1500:]
    assert len(load_record(path)["game"]["actions"]) >= 1


def _points(hand_text: str, double_blank: int = 50) -> int:
    tiles = [Tile(int(a), int(b)) for a, b in re.findall(r"\[(\d+)\|(\d+)\]", hand_text)]
    return sum(tile_points(t.low, t.high, double_blank) for t in tiles)


@pytest.mark.parametrize("args", [
    ["--opponents", "greedy,heuristic", "--seed", "5"],  # the report's game: a tile drawn on a round's last action
    *[["--opponents", "random", "--players", "3", "--max-pip", "6", "--rounds", "4", "--seed", str(s)] for s in range(6)],
])
def test_round_end_hands_are_what_was_scored(args):
    result = CliRunner().invoke(main, ["play", *args], input="0\n" * 800)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    checked = 0
    for i, line in enumerate(lines):
        done = re.match(r"--- round (\d+) over: points \[([\d, ]+)\]", line)
        if not done:
            continue
        points = [int(v) for v in done.group(2).split(",")]
        listing = lines[i - len(points):i]
        assert [_points(row.split(":", 1)[1]) for row in listing] == points, (listing, points)
        checked += 1
    assert checked >= 2


def test_rounds_open_with_who_placed_the_double_and_the_r6_draws():
    found_r6 = False
    for seed in range(12):
        result = CliRunner().invoke(main, ["play", "--opponents", "greedy", "--players", "2", "--max-pip", "6",
                                           "--hand-size", "3", "--rounds", "2", "--seed", str(seed)], input="0\n" * 200)
        assert result.exit_code == 0, result.output
        text = result.output
        first_move = re.search(r"^(you|player_\d \(greedy\)) (play|draw|drew|pass)", text, re.M)
        opening = re.search(r"^=== round 1/2: (you|player_\d \(greedy\)) places? the 6-6", text, re.M)
        assert opening and first_move and opening.start() < first_move.start(), text[:800]
        found_r6 |= "looking for it, R6" in text
    assert found_r6  # with 3-tile hands the starting double is often in the boneyard


def test_a_tile_you_do_not_hold_is_said_so():
    hand = [Tile(1, 2), Tile(3, 7)]
    assert parse_choice("8-8", [37], 9, hand=hand).startswith("you do not hold 8-8")
    assert "no legal play" in parse_choice("1-2", [37], 9, hand=hand)
    assert parse_choice("7-3", [37], 9, hand=hand) == 37


def test_arms_are_counted_from_one_in_moves_and_in_the_tree():
    config = RulesConfig(num_players=2, max_pip=6, rounds=1)
    game = Game(config, seed=3)
    assert "open ends: none" not in render_ansi(game)  # the forced centre arms say it all
    seen = 0
    while not game.is_over and game.round_index == 0 and seen < 6:
        action = game.legal_actions()[0]
        where = landing(game, action) if action < config.num_actions - 2 else ""
        game.apply(action)
        arm = re.search(r"arm (\d+)", where)
        if arm and game.round_index == 0:
            tree = render_ansi(game)
            assert re.search(rf"arm {arm.group(1)}: \S*\[", tree), (where, tree)
            assert "arm 0" not in tree
            seen += 1
    assert seen >= 3
