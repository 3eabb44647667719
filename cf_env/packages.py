"""This distribution installs top-level packages with common names (``agents``, ``training``,
beside ``cf_env`` and ``chickenfoot``). A user's own ``agents/`` or ``training/`` folder in the
working directory comes first on ``sys.path`` and shadows ours; the layers above call
:func:`require_own` so that the failure names its cause instead of a missing attribute later.
No import happens here: the check reads where Python would find the package.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["MissingExtraError", "install_shadow_finder", "require_extra", "require_own"]

_HOME = Path(__file__).resolve().parent.parent  # the folder holding cf_env and its sibling packages
_SIBLINGS = ("agents", "training", "chickenfoot")


def _shadowing(module: ModuleType) -> str | None:
    """Where ``module`` (one of our sibling packages' names) was found, when that is not ours."""
    name = module.__name__
    places = [str(Path(p).resolve()) for p in getattr(module, "__path__", [])]
    if str(_HOME / name) in places:
        return None
    return ", ".join(places) or str(getattr(module, "__file__", None) or "a module that is not a package")


class _ShadowFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: asked only for a module no other finder found. When that is a
    submodule of ``agents``/``training``/``chickenfoot`` (``training.evaluate``) and the package
    Python imported under that name is a folder of the user's, the ImportError says so and how to
    mend it, in place of a bare ``No module named 'training.evaluate'``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        module = sys.modules.get(top) if top in _SIBLINGS and "." in fullname else None
        where = _shadowing(module) if module is not None else None
        if where is not None:
            raise ImportError(
                f"cannot import {fullname!r}: 'import {top}' found {where}, a folder of yours that shadows "
                f"chickenfoot-rl's '{top}' package (the working directory comes first on sys.path). Rename your "
                f"folder (e.g. my_{top}/), or run from another directory.", name=fullname)
        return None


def install_shadow_finder() -> None:
    """Put :class:`_ShadowFinder` last on ``sys.meta_path`` (once); ``import cf_env`` does."""
    if not any(isinstance(f, _ShadowFinder) for f in sys.meta_path):
        sys.meta_path.append(_ShadowFinder())


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
