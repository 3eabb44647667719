"""Fuzzing the training layer's entry points (YAML configs, agent specs, command lines): every
input either works or raises the project's typed error (or, on the command line, exits with a
message and no traceback); never another exception type."""

from __future__ import annotations

import contextlib

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agents
from cf_env import ChickenFootError, RulesConfig
from chickenfoot.cli import main
from training.config import PPOConfig, TrainConfigError, load_config

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
value = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**7), st.floats(allow_nan=True), st.text(max_size=8),
                  st.lists(st.one_of(st.integers(-2, 300), st.text(max_size=5)), max_size=3),
                  st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(PPOConfig.model_fields) + ["typo"]), value, max_size=6))
def test_yaml_configs(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    try:
        cfg = load_config(path)
    except TrainConfigError:
        return
    assert cfg.batch_size >= cfg.num_minibatches and cfg.rules_config.num_players >= 2


@FUZZ
@given(st.binary(max_size=60))
def test_raw_config_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_bytes(raw)
    with contextlib.suppress(TrainConfigError):  # a typed error or a config: nothing else
        load_config(path)


@FUZZ
@given(st.one_of(st.text(max_size=20), st.sampled_from(["zoo:", "zoo:nope", "sb3:", "sb3:x.zip", "sb3+trust:",
                                                         "a/b.pt", ".", "/", "greedy ", "x.pt"]),
                 st.integers(), st.none()))
def test_agent_specs(spec):
    try:
        agent = agents.load(spec, RulesConfig())
    except ChickenFootError as exc:
        assert isinstance(exc, ValueError), repr(exc)
        return
    assert callable(agent.act)


flag = st.sampled_from(["--players", "--max-pip", "--rounds", "--hand-size", "--seed", "--deal-sets"])
number = st.sampled_from(["-1", "0", "1", "2", "3", "x", "1.5", ""])
spec = st.sampled_from(["random", "greedy", "nobody", "zoo:nope", "missing.pt", ","])


@settings(max_examples=40, deadline=None)
@given(st.lists(spec, min_size=1, max_size=3), st.lists(st.tuples(flag, number), max_size=4))
def test_eval_command_lines(specs, flags):
    args = ["eval", *specs] + [x for pair in flags for x in pair] + ["--deal-sets", "1", "--rounds", "1",
                                                                    "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=12), st.lists(st.tuples(flag.filter(lambda f: f not in ("--deal-sets",)), number), max_size=3))
def test_play_command_lines(opponents, flags):
    args = ["play", "--opponents", opponents] + [x for pair in flags for x in pair]
    result = CliRunner().invoke(main, args, input="q\n")
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
