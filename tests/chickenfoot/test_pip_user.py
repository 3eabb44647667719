"""What a user who installed the wheel meets (the pip-user issue): packaged configs, one-line
errors for a missing extra, ``--version`` from the core, a shadowing folder named, types for mypy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from chickenfoot.cli import main
from training.config import CONFIGS_DIR, DistillConfig, TrainConfigError, config_path, load_config, packaged_configs

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_configs_are_package_data_read_by_name_and_listed(tmp_path, monkeypatch):
    names = packaged_configs()
    assert {"smoke", "default", "distill", "distill-smoke", "expert-4p", "rllib"} <= set(names)
    assert (ROOT / "configs").resolve() == CONFIGS_DIR  # the repository's configs/ is the packaged folder
    monkeypatch.chdir(tmp_path)  # an empty folder, as after a pip install
    assert config_path("distill") == config_path("distill.yaml") == names["distill"]
    assert isinstance(load_config("distill-smoke", DistillConfig), DistillConfig)
    (tmp_path / "distill").write_text("{}")  # a file of the user's wins over a packaged name
    assert config_path("distill") == Path("distill")
    with pytest.raises(TrainConfigError, match=r"no packaged config of that name; the packaged configs are .*smoke"):
        config_path("no-such-config")
    listing = CliRunner().invoke(main, ["configs"])
    assert listing.exit_code == 0 and all(name in listing.output for name in names)
    shown = CliRunner().invoke(main, ["configs", "show", "smoke"])
    assert shown.exit_code == 0 and shown.output == names["smoke"].read_text()
    missing = CliRunner().invoke(main, ["configs", "show", "nope"])
    assert missing.exit_code == 1 and "chickenfoot configs" in missing.output


def test_the_wheel_lists_the_configs_and_the_typing_markers():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'training = ["configs/*.yaml", "py.typed"]' in text
    for package in ("cf_env", "agents", "training", "chickenfoot"):
        assert (ROOT / package / "py.typed").is_file()


def test_version_needs_only_the_core(monkeypatch, capsys):
    from chickenfoot import entry

    monkeypatch.setattr(entry, "NEEDED", (*entry.NEEDED, "no_such_module_for_this_test"))
    assert entry.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("chickenfoot, version ")


@pytest.mark.parametrize("argv, extra", [
    (["sb3", "--steps", "10"], "sb3"),
    (["tianshou", "--steps", "10"], "tianshou"),
    (["torchrl", "--frames", "10"], "torchrl"),
    (["rllib"], "rllib"),
    (["eval", "sb3:model.zip", "random", "--deal-sets", "1"], "sb3"),
])
def test_a_missing_extra_is_one_line_everywhere(tmp_path, argv, extra):
    hidden = {"sb3": "sb3_contrib", "tianshou": "tianshou", "torchrl": "torchrl", "rllib": "ray"}[extra]
    done = _python(f"""
        import sys
        sys.modules[{hidden!r}] = None  # as if the extra were not installed
        from chickenfoot.entry import main
        sys.exit(main({argv!r}))
    """, tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and f"pip install 'chickenfoot-rl[{extra}]'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize("folder", ["training", "agents"])
def test_a_users_folder_that_shadows_a_package_is_named(tmp_path, folder):
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "__init__.py").write_text("")  # the user's own package of that name
    # as after a pip install: our packages on sys.path after the working directory (the editable
    # install's finder would find training's submodules in this checkout even under the user's folder)
    done = _python(f"""
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.append({str(ROOT)!r})
        import cf_env
        from training.evaluate import evaluate
    """, tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert f"{tmp_path / folder}" in last and "shadows" in last and f"my_{folder}" in last, done.stderr


@pytest.mark.slow
def test_a_users_mypy_checks_calls_against_the_public_api(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "user.py").write_text(textwrap.dedent("""
        import agents
        import cf_env
        from training.config import load_config
        from training.evaluate import evaluate

        env = cf_env.raw_env(num_players=4)
        env.reset(seed=0)
        config = cf_env.RulesConfig(num_players=2)
        report = evaluate(["heuristic", "greedy"], config, deal_sets=2)
        agent = agents.load("heuristic", config)

        cf_env.raw_env(num_players="four")
        evaluate(["heuristic"], "rules")
        agents.load(3)
        report.no_such_field
    """))
    # PYTHONPATH: mypy cannot see through the editable install's import hook; a path on it is an
    # installed package to mypy, read only with its py.typed marker, as from a wheel
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           "--cache-dir", str(tmp_path / "cache"), "user.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in errors] == [13, 14, 15, 16], done.stdout
    assert "py.typed" not in done.stdout
