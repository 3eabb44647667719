"""This distribution installs top-level packages with common names (``agents``, ``training``,
beside ``cf_env`` and ``chickenfoot``). A user's own ``agents/`` or ``training/`` folder in the
working directory comes first on ``sys.path`` and shadows ours; the layers above call
:func:`require_own` so that the failure names its cause instead of a missing attribute later.
No import happens here: the check reads where Python would find the package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["MissingExtraError", "require_extra", "require_own"]

_HOME = Path(__file__).resolve().parent.parent  # the folder holding cf_env and its sibling packages


def require_own(name: str) -> None:
    """ImportError, saying why and what to do, when the top-level package ``name`` that Python
    imports is not the one installed with ``cf_env``."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
    expected = _HOME / name / "__init__.py"
    if origin != expected:
        found = origin or "nothing importable"
        raise ImportError(
            f"'import {name}' finds {found}, not chickenfoot-rl's {expected}: a folder or module named '{name}' in "
            f"the working directory (or earlier on sys.path) shadows the package. Rename yours (e.g. my_{name}), or "
            f"run from another directory.")


class MissingExtraError(ImportError):
    """A part of the library whose dependencies are an optional extra that is not installed; the
    message names the extra and the command that installs it."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        self.what, self.extra, self.module = what, extra, module
        super().__init__(f"{what} needs the '{extra}' extra (module '{module}' is not installed): "
                         f"pip install 'chickenfoot-rl[{extra}]'", name=module)


def require_extra(module: str, extra: str, what: str) -> None:
    """:class:`MissingExtraError` when ``module`` cannot be imported: ``what`` (a command, a
    kind of agent) needs the optional dependencies of ``extra``. Only looks where Python would
    find the module; imports nothing."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing
        found = False
    if not found:
        raise MissingExtraError(what, extra, module)
