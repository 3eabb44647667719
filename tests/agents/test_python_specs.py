"""Your own agent wherever a spec goes: ``module:Class`` and ``path/file.py:Class`` with
``key=value`` arguments (agents.load), used by the command line like any other spec."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import agents
from agents import AgentSpecError, parse_spec
from cf_env import RulesConfig, raw_env
from chickenfoot.cli import main
from training.evaluate import evaluate

SMALL = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)
EXAMPLE = "examples/my_agent.py:MyAgent"


def test_parse_python_specs():
    assert parse_spec("my_bots.doubles:DoublesFirst") == ("python", "my_bots.doubles:DoublesFirst", {})
    assert parse_spec("bots/x.py:Bot:depth=2:name=zoo:a") == ("python", "bots/x.py:Bot", {"depth": "2", "name": "zoo:a"})
    for other in ("zoo:strong-4p", "search:ms=5", "sb3:model.zip", "runs/x/final.pt", "heuristic"):
        assert parse_spec(other).kind != "python"
    with pytest.raises(AgentSpecError, match="expected name=value"):
        parse_spec("bots.x:Bot:oops")


def test_a_class_in_a_file_or_a_module_loads_with_its_arguments(monkeypatch):
    agent = agents.load(f"{EXAMPLE}:doubles_first=False", SMALL)
    assert agent.name == f"{EXAMPLE}:doubles_first=False" and agent.config == SMALL
    assert not agent.weight.max() >= 100  # the keyword reached the class: no bonus for doubles
    monkeypatch.syspath_prepend("examples")
    assert agents.load("my_agent:MyAgent", SMALL).weight.max() >= 100
    env = raw_env(**SMALL.to_dict())
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs, np.random.default_rng(0))] == 1


@pytest.mark.parametrize("spec,message", [
    ("examples/nothing.py:MyAgent", "no such file"),
    ("examples/my_agent.py:Nobody", "has no 'Nobody'; its classes"),
    ("no_such_module_here:Bot", "cannot import 'no_such_module_here'"),
    ("examples/my_agent.py:MyAgent:colour=3", "unexpected keyword argument 'colour'"),
    ("examples/my_agent.py:main", "takes the RulesConfig first"),
    ("numpy:pi", "not a class or function"),
])
def test_a_spec_that_loads_nothing_useful_says_why(spec, message):
    with pytest.raises(AgentSpecError, match=message):
        agents.load(spec, SMALL)


def test_evaluate_and_the_command_line_take_it():
    report = evaluate([EXAMPLE, "random"], SMALL, deal_sets=2, progress=False, workers=2)
    assert report.results[0].spec == EXAMPLE and report.results[0].seat_games == 6
    result = CliRunner().invoke(main, ["eval", EXAMPLE, "heuristic", "--players", "3", "--max-pip", "6",
                                       "--hand-size", "5", "--rounds", "1", "--deal-sets", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "MyAgent" in result.output


def test_a_module_in_the_current_folder_loads_from_the_console_script_too(tmp_path, monkeypatch):
    """``module:Class`` imports a module in the current folder even where the current folder is
    not on ``sys.path``, as for the ``chickenfoot`` console script (whose own folder is there)."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "local_bots_here.py").write_text("from agents import GreedyAgent as Bot\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    assert agents.load("local_bots_here:Bot", SMALL).act is not None
    assert sys.path[-1] == str(tmp_path)  # appended: it shadows nothing installed
    script = Path(sys.executable).parent / "chickenfoot"
    if not script.exists():
        pytest.skip("the chickenfoot console script is not installed beside this interpreter")
    out = subprocess.run([str(script), "eval", "local_bots_here:Bot", "random", "--players", "3", "--max-pip", "6",
                          "--hand-size", "5", "--rounds", "1", "--deal-sets", "1", "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "local_bots_here:Bot" in out.stdout
