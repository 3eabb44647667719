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
