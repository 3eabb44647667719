"""What a new user met on a fresh clone (the library/lab issue's list), each fixed and held here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cf_env import ConfigError, Game, RulesConfig, Tile
from cf_env.engine import action_table
from cf_env.packages import MissingExtraError, require_extra
from chickenfoot import entry
from chickenfoot.cli import main
from chickenfoot.play import Table, parse_choice

ROOT = Path(__file__).resolve().parents[2]


def test_play_refuses_more_opponents_than_seats_as_eval_does():
    with pytest.raises(ConfigError, match="2 agent specs .* for the 1 other seat"):
        Table(RulesConfig(num_players=2), 0, ["zoo:strong-2p", "heuristic"])
    result = CliRunner().invoke(main, ["play", "--opponents", "zoo:strong-2p,heuristic"])
    assert result.exit_code == 1 and "1 other seat" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["eval", "zoo:strong-2p", "heuristic", "greedy"])
    assert result.exit_code == 2 and "3 agents for 2 seats" in result.output


def test_a_play_typed_as_an_action_of_a_tile_you_do_not_hold_is_said_so():
    game = Game(RulesConfig(), seed=1)
    hand = game.hand(game.current_player)
    table = action_table(9)
    held = {t.index for t in hand}
    action = next(m * 10 + x for m in range(10) for x in range(10) if table.action_tile[m * 10 + x] not in held)
    tile = Tile.from_index(table.action_tile[action])
    text = f"{action // 10}>{action % 10}"
    answer = parse_choice(text, game.legal_actions(), 9, hand)
    assert answer == f"you do not hold {tile}; your tiles: {' '.join(str(t) for t in hand)}"
    assert parse_choice(text, game.legal_actions(), 9) == f"{text} is not legal now; legal moves are listed above"


def test_a_file_that_is_not_a_checkpoint_is_called_so(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x00\x01 not a checkpoint at all \xff" * 40)
    result = CliRunner().invoke(main, ["eval", str(junk), "heuristic", "--deal-sets", "1"])
    assert result.exit_code != 0 and "not a PyTorch file" in result.output
    assert "Python objects other than tensors" not in result.output


def test_the_saved_games_folder_is_named_once(tmp_path):
    folder = tmp_path / "worst"
    result = CliRunner().invoke(main, ["eval", "heuristic", "greedy", "--players", "2", "--rounds", "1",
                                       "--deal-sets", "2", "--no-progress", "--save-games", f"{folder}/",
                                       "--worst", "1"])
    assert result.exit_code == 0, result.output
    assert f"{folder}/ (index.json" in result.output and "//" not in result.output


def test_a_missing_extra_is_named_with_its_install_command(monkeypatch, capsys):
    with pytest.raises(MissingExtraError, match=r"pip install 'chickenfoot-rl\[sb3\]'"):
        require_extra("no_such_module_for_this_test", "sb3", "chickenfoot sb3")
    with pytest.raises(ImportError):  # a MissingExtraError is an ImportError too
        require_extra("no_such_parent.child", "train", "x")
    monkeypatch.setattr(entry, "NEEDED", (*entry.NEEDED, "no_such_module_for_this_test"))
    assert entry.main() == 1
    err = capsys.readouterr().err
    assert "'train' extra" in err and "pip install 'chickenfoot-rl[train]'" in err


def test_make_help_lists_every_target_a_user_runs():
    out = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    for target in ("train", "train-ppo", "test", "setup", "lint", "docs", "demo", "bench", "clean"):
        assert f"make {target} " in out, target


def test_every_argparse_main_left_is_in_the_lab_or_the_benchmarks():
    shipped = [p for package in ("cf_env", "agents", "training", "chickenfoot")
               for p in (ROOT / package).rglob("*.py") if "argparse" in p.read_text(encoding="utf-8")]
    assert shipped == []


def test_the_console_script_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "chickenfoot.entry", "--help"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0 and "labels" in out.stdout and "sb3" in out.stdout
