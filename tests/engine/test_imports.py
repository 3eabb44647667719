"""The layers hold: importing the engine pulls neither pettingzoo nor torch, and imports go one
way, cf_env <- agents <- training <- chickenfoot (the README's "Repository layout")."""

import subprocess
import sys


def test_engine_import_is_light():
    # pettingzoo's registry loads (import cf_env registers the env there, as it does in Gymnasium's);
    # torch and the env modules themselves do not
    heavy = ("torch", "cf_env.chicken_foot", "cf_env.gym_env", "pettingzoo.classic")
    code = f"import sys, cf_env.engine, cf_env; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_engine_sources_do_not_import_frameworks():
    from pathlib import Path

    import cf_env.engine

    for path in Path(cf_env.engine.__file__).parent.glob("*.py"):
        text = path.read_text()
        for name in ("gymnasium", "pettingzoo", "torch", "numba"):  # the rules' vocabulary; they run in cf_env.vector
            assert f"import {name}" not in text and f"from {name}" not in text, (path, name)


def test_imports_go_one_way():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    above = {"cf_env": ("agents", "training", "chickenfoot"), "agents": ("training", "chickenfoot"),
             "training": ("chickenfoot",)}
    for layer, forbidden in above.items():
        for path in (root / layer).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for name in forbidden:
                assert not re.search(rf"^\s*(from|import) {name}\b", text, re.M), (path, name)

