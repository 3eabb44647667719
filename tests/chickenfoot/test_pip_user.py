"""What a user who installed the wheel meets (the pip-user issue): packaged configs, one-line
errors for a missing extra, ``--version`` from the core, a shadowing folder named, types for mypy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
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


def test_every_option_of_every_command_says_what_it_does():
    import click

    missing = []

    def walk(command: click.Command, path: str) -> None:
        missing.extend(f"{path} {p.opts[0]}" for p in command.params if isinstance(p, click.Option) and not p.help)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(main, "chickenfoot")
    assert missing == []


def test_the_docs_keep_double_dashes():
    import runpy

    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
    assert conf["smartquotes"] is False  # Sphinx's smart quotes turn --option into an en dash


def test_messages_point_at_the_fix(tmp_path, monkeypatch):
    import torch

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("class Mine:\n    pass\n")
    result = CliRunner().invoke(main, ["eval", "mine.py", "heuristic", "--deal-sets", "1"])
    assert result.exit_code != 0 and "mine.py:ClassName" in result.output
    torch.save({"weight": torch.zeros(2)}, tmp_path / "plain.pt")
    result = CliRunner().invoke(main, ["eval", "plain.pt", "heuristic", "--deal-sets", "1"])
    assert "PyTorch file of your own" in result.output and "save_checkpoint" in result.output
    result = CliRunner().invoke(main, ["eval", "runs/distill/final.pt", "heuristic", "--deal-sets", "1"])
    assert "make train" in result.output and "zoo:strong-4p" in result.output
    result = CliRunner().invoke(main, ["ladder", "zoo:strong-2p", "--deal-sets", "2"])
    assert result.exit_code == 2 and "--players 2" in result.output
    result = CliRunner().invoke(main, ["play", "--level", "5", "--players", "3"], input="q\n")
    assert result.exit_code == 2 and "--players 4" in result.output
    long_rules = {"max_pip": 4, "num_players": 9, "hand_size": 4, "center_arms": 3, "draw_rule": "until_playable",
                  "double_blank_points": 25, "rounds": 2}
    (tmp_path / "bad.yaml").write_text(f"rules: {long_rules}\n")
    result = CliRunner().invoke(main, ["train", "--config", "bad.yaml"])
    assert result.exit_code == 1 and "'rounds': 2}" in result.output and "R2" in result.output


def test_an_illegal_action_names_the_agent_that_chose_it(tmp_path):
    from cf_env import IllegalActionError, RulesConfig
    from training.evaluate import evaluate

    class Stubborn:
        name = "stubborn"

        def act(self, observation, rng):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    with pytest.raises(IllegalActionError, match=r"agent 'stubborn' \(seat \d, player_\d\) chose an illegal action"):
        evaluate([Stubborn(), "greedy"], RulesConfig(num_players=2), deal_sets=1, progress=False)


def test_every_trainer_writes_its_summary_with_provenance(tmp_path):
    import json

    result = CliRunner().invoke(main, ["train", "--config", "smoke", "--runs-dir", str(tmp_path), "--run-name", "s",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert summary["final"] and set(summary["provenance"]["checkpoints"]) == {summary["final"]}


@pytest.mark.slow
def test_the_first_compile_says_what_it_is_doing(tmp_path):
    code = "import cf_env; e = cf_env.raw_env(num_players=2, max_pip=4, hand_size=3, rounds=1); e.reset(seed=0)"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == again.returncode == 0, first.stderr
    assert "compiling the engine's kernels" in first.stderr and "chickenfoot precompile" in first.stderr
    assert "compiling" not in again.stderr  # cached: nothing to say


def test_one_version_everywhere_and_a_release_in_the_changelog():
    import re

    import cf_env

    version = cf_env.__version__
    assert f'version = "{version}"' in (ROOT / "pyproject.toml").read_text()
    assert f"version: {version}" in (ROOT / "CITATION.cff").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## (\d+\.\d+\.\d+)", changelog, re.M)
    assert releases[0] == version  # the newest release heading is this version
    unreleased = changelog.split("## Unreleased", 1)[1].split(f"## {version}", 1)[0]
    assert len(unreleased.strip().splitlines()) <= 40  # changes wait in Unreleased for a release, not for ever
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text  # an SPDX expression, not the deprecated table


def test_every_readme_command_that_takes_time_says_how_long():
    import re

    from conftest import commands

    readme = (ROOT / "README.md").read_text()
    long_running = re.compile(r"(^|/)chickenfoot (train|distill|expert|eval|compare|ladder|sb3|rllib|tianshou|torchrl)"
                              r"\b|^make train")
    says = re.compile(r"#.*(\d+ ?(s|min)\b|seconds|minutes|~\d)")
    silent = []
    for block in re.findall(r"```bash\n(.*?)```", readme, re.S):
        for line in block.splitlines():
            command = commands(line)
            if command and long_running.search(command[0]) and not says.search(line):
                silent.append(line)
    assert silent == []


def test_docs_links_stay_inside_the_site_and_the_cards_are_cards():
    import re

    docs = ROOT / "docs"
    pages = {p.name for p in docs.glob("*.md")}
    for page in docs.glob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://", "#", "_static/")):
                continue
            assert target.split("#")[0] in pages, (page.name, target)  # a page of the site, not a repo file
    assert "../agents/zoo/README.md" in (docs / "zoo.md").read_text()
    cards = (ROOT / "agents" / "zoo" / "README.md").read_text()
    names = re.findall(r"^## `zoo:([\w-]+)`", cards, re.M)
    import agents

    assert sorted(names) == sorted([*agents.zoo_names(), *agents.named_specs()])
    for section in cards.split("\n## `zoo:")[1:]:
        for heading in ("**What it is:**", "**How it was", "**Strength:**", "**Limits:**"):
            assert heading in section, (section[:30], heading)
        assert re.search(r"\[\d+\.\d, \d+\.\d\]", section), section[:30]  # figures come with intervals
    assert len(cards.split()) < 1500  # a card, not the lab notebook (lab/results/zoo-history.md)


def test_statistics_are_labelled_for_what_they_are():
    from cf_env import RulesConfig
    from training.compare import Comparison
    from training.evaluate import evaluate
    from training.ladder import LadderResult

    report = evaluate(["heuristic", "greedy"], RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=1),
                      deal_sets=2, progress=False)
    table = report.table()
    assert "OpenSkill" in table.splitlines()[0] and " rating " not in table.splitlines()[0]
    assert "Plackett-Luce" in table and "chickenfoot ladder" in table
    four = Comparison(a="A", b="B", vs=[], deal_sets=2, games=8, seed=0, players=4).table()
    assert "each in one seat against 3 copies of the other" in four and "head to head" not in four
    assert "head to head" in Comparison(a="A", b="B", vs=[], deal_sets=2, games=4, seed=0, players=2).table()
    rungs = [{"spec": s, "rating": r, "win_rate": 0.5, "win_rate_ci95": (0.4, 0.6), "games": 8}
             for s, r in (("random", 0.0), ("greedy", 200.0), ("heuristic", 400.0))]
    between = LadderResult(agent="x", rating=300.0, rating_ci95=(-60.0, -60.0), players=4, deal_sets=2, seed=0,
                           rungs=rungs).table()
    assert "between greedy (200) and heuristic (400)" in between
    assert "no interval: 2 deal sets per rung are too few" in between and "[-60, -60]" not in between
    top = LadderResult(agent="x", rating=500.0, rating_ci95=(450.0, 560.0), players=4, deal_sets=50, seed=0,
                       rungs=rungs).table()
    assert "above every rung" in top and "[450, 560]" in top
    low = LadderResult(agent="x", rating=-10.0, rating_ci95=(-50.0, 20.0), players=4, deal_sets=50, seed=0,
                       rungs=rungs).table()
    assert "below every rung" in low


def test_the_api_reference_has_a_page_per_package_and_the_integrations():
    docs = ROOT / "docs"
    index = (docs / "api.md").read_text()
    for page, module in (("api-engine", "cf_env.engine"), ("api-env", "cf_env.chicken_foot"),
                         ("api-integrations", "cf_env.integrations.rllib"), ("api-agents", "agents.search.agent"),
                         ("api-training", "training.evaluate")):
        assert page in index and module in (docs / f"{page}.md").read_text()
    import runpy

    conf = runpy.run_path(str(docs / "conf.py"))
    lines = ["Alias for field number 0"]
    conf["_no_namedtuple_aliases"](None, "attribute", "x", None, {}, lines)
    assert lines == []


def test_the_cpu_path_is_stated_with_what_each_path_weighs():
    command = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
    for page in (ROOT / "README.md", ROOT / "docs" / "getting-started.md"):
        text = page.read_text()
        assert command in text and "1,373 MB" in text and "5.7 GB" in text, page.name
    assert "344 MB" in (ROOT / "docs" / "getting-started.md").read_text()
