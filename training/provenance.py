"""Where a JSON report came from: every report the commands write (eval, compare, ladder, the
trainers' and the label collections' summaries) carries a ``provenance`` object, so that a figure
read months later names the package version, the time, the command and the exact files behind it.

    {"version": "0.2.0", "created": "2026-12-06T22:31:05+00:00", "command": "chickenfoot eval ...",
     "python": "3.11.7", "platform": "Linux-...-x86_64", "checkpoints": {"zoo:strong-4p": "<sha256>"}}
"""

from __future__ import annotations

import datetime
import hashlib
import json
import platform
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cf_env import __version__

__all__ = ["checkpoint_file", "provenance", "sha256", "with_provenance", "write_report"]


def sha256(path: str | Path) -> str:
    """The file's SHA-256, hex."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checkpoint_file(spec: object) -> Path | None:
    """The file an agent spec plays from (a checkpoint, ``zoo:NAME``, an SB3 zip, a search's
    rollout or blueprint network), or ``None`` for the baselines, a search without one and agents
    given as objects."""
    if not isinstance(spec, str):
        return None
    from agents import zoo_path
    from agents.spec import AgentSpecError, parse_spec

    try:
        parsed = parse_spec(spec)
    except AgentSpecError:
        return None
    argument = parsed.argument
    if parsed.kind == "search":
        argument = next((v for k, v in parsed.params.items() if k in ("rollout", "blueprint")), "")
    elif parsed.kind not in ("checkpoint", "sb3"):
        return None
    if argument.startswith("zoo:"):
        try:
            return zoo_path(argument[4:])
        except AgentSpecError:
            return None
    path = Path(argument)
    return path if argument and path.is_file() else None


def provenance(specs: Iterable[object] = ()) -> dict[str, Any]:
    """The ``provenance`` object of a report about ``specs`` (agent specs; the files among them are
    hashed): package version, creation time (ISO 8601, UTC), the command line, Python and platform."""
    checkpoints = {}
    for spec in specs:
        path = checkpoint_file(spec)
        if path is not None:
            checkpoints[str(spec)] = sha256(path)
    return {
        "version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else "",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "checkpoints": checkpoints,
    }


def with_provenance(report: dict[str, Any], specs: Iterable[object] = ()) -> dict[str, Any]:
    """``report`` with its ``provenance`` (:func:`provenance` of ``specs``) added, as a new dict."""
    return {**report, "provenance": provenance(specs)}


def write_report(path: str | Path, report: dict[str, Any], specs: Iterable[object] = ()) -> None:
    """Write ``report`` with its provenance (:func:`with_provenance`) as JSON at ``path``, making its
    folder: what every command and trainer that writes a JSON report calls."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(with_provenance(report, specs), indent=2, default=str), encoding="utf-8")
