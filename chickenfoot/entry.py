"""The ``chickenfoot`` console script: says which extra to install when the command-line tools'
dependencies are missing (``pip install chickenfoot-rl`` alone gives the engine and the env),
else runs :func:`chickenfoot.cli.main`."""

from __future__ import annotations

import importlib.util
import sys

#: what every command needs: the ``train`` extra's command-line and evaluation libraries
NEEDED = ("click", "tqdm", "yaml", "openskill", "pydantic", "torch")


def missing_modules() -> list[str]:
    """The modules of :data:`NEEDED` that Python cannot find."""
    return [m for m in NEEDED if importlib.util.find_spec(m) is None]


def main() -> int:
    missing = missing_modules()
    if missing:
        print(f"chickenfoot: the command-line tools need the 'train' extra (not installed: {', '.join(missing)}).\n"
              f"Install it with: pip install 'chickenfoot-rl[train]'   (torch first: pip install torch, CPU build "
              f"recommended)\nThe engine and the environment work without it: import cf_env.", file=sys.stderr)
        return 1
    from chickenfoot.cli import main as cli

    cli()
    return 0


if __name__ == "__main__":
    sys.exit(main())
