"""The ``chickenfoot`` console script: says which extra to install when the command-line tools'
dependencies are missing (``pip install chickenfoot-rl`` alone gives the engine and the env),
else runs :func:`chickenfoot.cli.main`. ``chickenfoot --version`` needs nothing beyond the core,
and a command or agent spec whose extra is missing ends with one line naming it (exit status 1)."""

from __future__ import annotations

import importlib.util
import sys

#: what every command needs: the ``train`` extra's command-line and evaluation libraries
NEEDED = ("click", "tqdm", "yaml", "openskill", "pydantic", "torch")

#: the CPU build of torch, which the ``train`` extra needs (a plain ``pip install torch`` on Linux
#: brings the CUDA build, several GB)
TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def missing_modules() -> list[str]:
    """The modules of :data:`NEEDED` that Python cannot find."""
    return [m for m in NEEDED if importlib.util.find_spec(m) is None]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-V"):
        from cf_env import __version__

        print(f"chickenfoot, version {__version__}")
        return 0
    missing = missing_modules()
    if missing:
        print(f"chickenfoot: the command-line tools need the 'train' extra (not installed: {', '.join(missing)}).\n"
              f"Install it with: pip install 'chickenfoot-rl[train]'   (torch first; its CPU build: {TORCH_CPU})\n"
              f"The engine and the environment work without it: import cf_env.", file=sys.stderr)
        return 1
    from cf_env.packages import MissingExtraError
    from chickenfoot.cli import main as cli

    try:
        cli.main(args=args, prog_name="chickenfoot", standalone_mode=True)
    except MissingExtraError as exc:  # raised where the command or a spec first needed its extra
        print(f"chickenfoot: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
