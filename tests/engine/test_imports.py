"""The engine layer stays pure: importing it pulls neither pettingzoo nor torch (STYLE.md)."""

import subprocess
import sys


def test_engine_import_is_light():
    code = "import sys, cf_env.engine, cf_env; print(sorted(m for m in ('pettingzoo', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_engine_sources_do_not_import_frameworks():
    from pathlib import Path

    import cf_env.engine

    for path in Path(cf_env.engine.__file__).parent.glob("*.py"):
        text = path.read_text()
        for name in ("gymnasium", "pettingzoo", "torch"):
            assert f"import {name}" not in text and f"from {name}" not in text, (path, name)
