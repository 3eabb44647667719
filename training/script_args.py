"""Command-line pieces shared by the framework scripts (``sb3_maskable_ppo``, ``tianshou_dqn``,
``torchrl_ppo``): the game and run flags, and how a run reports."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cf_env import RulesConfig

__all__ = ["fail", "framework_parser", "report", "rules_from_args"]


def framework_parser(module: str, doc: str, out_default: str) -> argparse.ArgumentParser:
    """A parser with the flags every framework script takes; the script adds its own."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--max-pip", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=None, help="rounds per game (default: the full game)")
    parser.add_argument("--out", default=out_default, help="folder for the model and summary.json")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch intra-op threads (1 is fastest for these small batches)")
    return parser


def rules_from_args(args: argparse.Namespace) -> RulesConfig:
    """Set torch's threads and build the rules (a bad value raises :class:`cf_env.ConfigError`)."""
    import torch

    torch.set_num_threads(max(1, args.torch_threads))
    return RulesConfig(num_players=args.players, max_pip=args.max_pip, rounds=args.rounds)


def report(out: str | Path, summary: dict[str, Any]) -> int:
    """Write ``out/summary.json``, print it; the exit status of a finished run."""
    text = json.dumps(summary, indent=2)
    Path(out, "summary.json").write_text(text)
    print(text)
    return 0


def fail(exc: Exception) -> int:
    """Print a user error; the exit status of a run that could not start."""
    print(f"error: {exc}", file=sys.stderr)
    return 2
