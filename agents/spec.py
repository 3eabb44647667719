"""The one grammar of agent specs and device strings.

An agent spec is a string a user types (``chickenfoot eval heuristic search:ms=20 zoo:strong-4p``) or
writes in a config. :func:`parse_spec` reads it into an :class:`AgentSpec` ``(kind, argument,
params)``, and every place that needs to know what a spec names asks it: :func:`agents.load`, the
trainers' config validation, the expert trainer's teacher check and the search's rollout setting.

=============================  ============  ==================  =============================
spec                           kind          argument            params
=============================  ============  ==================  =============================
``random`` / ``greedy`` /      baseline      the name            {}
``heuristic``
``search[:name=value...]``     search        ``""``              the pairs, as typed (strings)
``sb3:PATH.zip``               sb3           the file            {}
``sb3+trust:PATH.zip``         sb3           the file            ``{"trust": "1"}``
``zoo:NAME[:k=v...]``          checkpoint    ``zoo:NAME``        the ``k=v`` pairs (strings)
``zoo:NAME[:k=v...]`` (named)  search        ``""``              its spec's pairs, then ``k=v``
``module:Class[:k=v...]``      python        ``module:Class``    the ``k=v`` pairs (strings)
``path/file.py:Class[:k=v]``   python        ``path/file.py:C``  the ``k=v`` pairs (strings)
any other ``PATH[:k=v...]``    checkpoint    the path            the ``k=v`` pairs (strings)
=============================  ============  ==================  =============================

A **named spec** is a search spec shipped under a name: ``agents/zoo/NAME.spec`` holds one spec
line (lines starting ``#`` are its description), and ``zoo:NAME`` reads as that spec, so every
place that asks what a spec names sees a search. Pairs after the name override the file's
(``zoo:NAME:ms=200`` is its spec with ``ms=200``). A name is a checkpoint's or a spec's, not both.

A checkpoint's one parameter is ``temperature=T``: the network samples its move from
``softmax(logits / T)`` instead of playing its most likely one (``zoo:strong-4p:temperature=1`` is
the policy PPO trains; :func:`agents.load` checks the name and the value).

A ``python`` spec names your own agent class (or any callable that returns an agent) the way
Gymnasium's entry points do: ``my_bots.doubles:DoublesFirst`` imports the module,
``bots/doubles.py:DoublesFirst`` loads the file, and ``:key=value`` pairs after it are keyword
arguments (values read as Python literals where they are one: ``depth=2``, ``greedy=True``,
``temperature=0.5``; else as strings). :func:`agents.load` calls ``Class(config, **kwargs)``.

The search parameters' names and values are checked by :func:`agents.search.parse_search_spec`
(its :class:`~agents.search.SearchSpecError` is an :class:`AgentSpecError`); whether a checkpoint
file exists is checked when it is loaded. This module imports neither torch nor numba.

A device string is ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (:func:`check_device`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from cf_env import ChickenFootError

__all__ = ["AgentSpec", "AgentSpecError", "BASELINE_NAMES", "DEVICES", "DeviceError", "SearchSpecError", "ZOO_DIR",
           "check_device", "import_target", "literal_value", "named_spec", "named_specs", "parse_spec"]

BASELINE_NAMES = ("random", "greedy", "heuristic")
DEVICES = ("auto", "cpu", "cuda")  #: and ``cuda:N``
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_PAIR = re.compile(r"[A-Za-z_]\w*=[^/\\]*")  # a checkpoint spec's trailing name=value part
ZOO_DIR = Path(__file__).parent / "zoo"  #: the shipped checkpoints (``NAME.pt``) and named specs (``NAME.spec``)


class AgentSpecError(ChickenFootError, ValueError):
    """An agent spec names nothing that can be loaded."""


class SearchSpecError(AgentSpecError):
    """A search spec names an unknown parameter or an invalid value (raised by
    :func:`agents.search.parse_search_spec`, and here for a ``search:`` spec that is not
    ``name=value`` pairs)."""


class DeviceError(ChickenFootError, ValueError):
    """The device asked for is unknown or not on this machine."""


class AgentSpec(NamedTuple):
    """A parsed agent spec (see the module docstring)."""

    kind: str  #: ``baseline``, ``search``, ``sb3``, ``python`` or ``checkpoint``
    argument: str  #: the baseline's name, the checkpoint's path or ``zoo:NAME``, the sb3 file,
    #: ``module:Class`` / ``file.py:Class``; ``""`` for search
    params: dict[str, str]  #: search, python, checkpoint: ``name=value`` pairs as typed; sb3: ``{"trust": "1"}`` for
    #: ``sb3+trust:``


def named_specs() -> list[str]:
    """Names of the search specs shipped in ``agents/zoo`` (``NAME.spec``; load them as ``zoo:NAME``)."""
    return sorted(p.stem for p in ZOO_DIR.glob("*.spec"))


def named_spec(name: str) -> str | None:
    """The spec that ``zoo:NAME`` names when ``NAME`` is a named spec (its file's one line that is
    not a ``#`` comment); ``None`` when there is no such file."""
    path = ZOO_DIR / f"{name}.spec"
    if not name or "/" in name or "\\" in name or not path.is_file():
        return None
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    if len(lines) != 1 or not lines[0].startswith("search:"):
        raise AgentSpecError(f"{path}: a named spec file holds one search spec line (and # comments), got {lines}")
    return lines[0]


def parse_spec(spec: object) -> AgentSpec:
    """What ``spec`` names (see the module docstring); :class:`AgentSpecError` for a spec that
    cannot name anything (not a string, empty, ``search:`` followed by no ``name=value``). A spec
    is parsed once per process: the CLI's checks, the rules reader and the loader that each ask
    get the same value (treat its ``params`` as read-only)."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"an agent spec is a string, got {type(spec).__name__}")
    return _parse(spec)


@functools.lru_cache(maxsize=256)
def _parse(spec: str) -> AgentSpec:
    if not spec:
        raise AgentSpecError(f"an agent spec is empty; use one of {list(BASELINE_NAMES)}, search[:name=value...], "
                             f"a checkpoint path or zoo:NAME")
    if spec in BASELINE_NAMES:
        return AgentSpec("baseline", spec, {})
    head, _, rest = spec.partition(":")
    if head == "zoo":
        name, _, extra = rest.partition(":")
        named = named_spec(name)
        if named is not None:
            return parse_spec(f"{named}:{extra}" if extra else named)
    if head == "search":
        return AgentSpec("search", "", _pairs(spec, rest) if rest or spec.endswith(":") else {})
    if head in ("sb3", "sb3+trust"):
        return AgentSpec("sb3", rest, {"trust": "1"} if head == "sb3+trust" else {})
    if rest and (head.endswith(".py") or _MODULE.fullmatch(head)) and head != "zoo":
        attr, _, pairs = rest.partition(":")
        if _IDENTIFIER.fullmatch(attr):
            return AgentSpec("python", f"{head}:{attr}", _pairs(spec, pairs, after=f"{head}:{attr}") if pairs else {})
    parts = spec.split(":")
    keep = len(parts)
    while keep > 1 and _PAIR.fullmatch(parts[keep - 1]):
        keep -= 1
    return AgentSpec("checkpoint", ":".join(parts[:keep]), dict(part.split("=", 1) for part in parts[keep:]))


def _pairs(spec: str, rest: str, after: str = "search") -> dict[str, str]:
    """``name=value`` pairs separated by colons; a part without ``=`` continues the value before
    it (a value such as ``zoo:strong-4p`` holds a colon)."""
    pairs: list[list[str]] = []
    for part in rest.split(":"):
        if "=" in part:
            pairs.append(part.split("=", 1))
        elif pairs:
            pairs[-1][1] += ":" + part
        else:
            error = SearchSpecError if after == "search" else AgentSpecError
            raise error(f"{spec!r}: expected name=value after '{after}:', got {part!r}")
    return dict(pairs)


def literal_value(text: str) -> object:
    """``text`` as the Python literal it spells (``2``, ``0.5``, ``True``, ``'a'``), else itself."""
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def import_target(argument: str) -> object:
    """What ``module:attr`` or ``path/file.py:attr`` names; :class:`AgentSpecError` when it can
    not be imported or has no such attribute."""
    import importlib
    import importlib.util
    import sys

    where, _, attr = argument.rpartition(":")
    if where.endswith(".py"):
        path = Path(where).resolve()
        if not path.is_file():
            raise AgentSpecError(f"{argument}: no such file {where}")
        name = f"chickenfoot_user.{path.stem}_{abs(hash(str(path))):x}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
    else:
        _local_modules_importable(where)
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            raise AgentSpecError(f"{argument}: cannot import {where!r} ({exc}); a module must be importable from "
                                 f"here (installed, or under the current folder), or name a file as "
                                 f"path/to/file.py:{attr}") from None
    if not hasattr(module, attr):
        public = sorted(n for n in vars(module) if not n.startswith("_") and isinstance(getattr(module, n), type))
        raise AgentSpecError(f"{argument}: {where} has no {attr!r}; its classes: {public or 'none'}")
    return getattr(module, attr)


def _local_modules_importable(module: str) -> None:
    """Put the current folder on ``sys.path`` (last, so that it shadows nothing installed) when
    ``module``'s top-level package or file is in it and the folder is not on the path: a console
    script (``chickenfoot eval mybots:Bot``) starts with its own folder there, not the current one,
    and ``python -m`` or the interpreter's prompt start with the current one."""
    import os
    import sys

    here = os.getcwd()
    top = module.split(".")[0]
    on_path = {os.path.abspath(p or os.curdir) for p in sys.path}
    if here not in on_path and ((Path(here) / f"{top}.py").is_file() or (Path(here) / top).is_dir()):
        sys.path.append(here)


def check_device(device: object) -> str:
    """``device`` when it is ``cpu``, ``cuda``, ``cuda:N`` or ``auto``; else :class:`DeviceError`
    saying what is allowed (whether a GPU is there is :func:`agents.torch_policy.resolve_device`'s
    question)."""
    if isinstance(device, str) and (device in DEVICES or (device.startswith("cuda:") and device[5:].isdigit())):
        return device
    raise DeviceError(f"unknown device {device!r}; use auto, cpu, cuda or cuda:N")
