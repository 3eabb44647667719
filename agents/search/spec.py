"""The search agents' spec: ``search[:name=value...]``, its parameters and their checks.

=========  ==========  =======================================================================
name       default     meaning
=========  ==========  =======================================================================
algo       pimc        ``pimc`` or ``ismcts``
ms         40          time budget per decision in milliseconds (0: no clock, ``sims`` only)
sims       0           most worlds (pimc) or iterations (ismcts) per decision; 0 = no cap, and
                       with ``ms=0`` it must be given. With ``ms=0`` decisions are reproducible.
rollout    heuristic   ``heuristic``, ``greedy`` or ``random``: the policy that plays every seat in
                       the rollouts (compiled); or, with ``pimc``, a checkpoint spec (``zoo:NAME`` or
                       a path): its network plays every rollout of a batch of worlds in lockstep,
                       one batched forward pass per step (about 40 ms per batch: give it
                       ``ms=200`` or more)
value      points      ``points`` or ``win`` (:mod:`agents.search.values`)
infer      constraints ``constraints``: worlds respect the opponents' failures to match (``1``
                       too); ``policy``: they are also resampled by how likely the opponents'
                       plays this round are under the opponent model (needs the observation's
                       ``history`` entry; without it, ``constraints``); ``none``: ignore both
                       (``0`` too). ``constraints`` is the default because ``policy`` measured no
                       stronger and costs a third of the worlds (lab/results/search.md)
temp       TEMP        the opponent model's softmax temperature over heuristic scores (fitted,
                       see ``lab/opponent_model.py``)
proposals  8           ``infer=policy``: candidate worlds dealt for each world kept
keep       0           chance that an opponent holds one tile of a value it failed to match
race       0           pimc: racing (:mod:`agents.search.racing`): stop trying an action once the
                       leader beats it by ``race`` standard errors over the worlds so far (0: off,
                       every action in every world); needs ``sims``, the most worlds
tie        0.01        racing: an action the leader beats by less than this (in value units) with
                       that confidence is dropped too (equally good)
c          0.7         ismcts: UCB exploration constant (values are in about [-1, 1])
seed       none        the agent's own random seed; by default it draws from ``act``'s generator
=========  ==========  =======================================================================
"""

from __future__ import annotations

import math
from typing import Any

from agents.spec import SearchSpecError, parse_spec

__all__ = ["ALGORITHMS", "DEFAULTS", "INFER_MODES", "ROLLOUTS", "SearchSpecError", "TEMPERATURE", "VALUES",
           "parse_search_spec"]

ALGORITHMS = ("pimc", "ismcts")
INFER_MODES = ("policy", "constraints", "none")  #: how worlds use what the opponents showed
TEMPERATURE = 6.0  #: the opponent model's temperature: the fit on heuristic and search plays (lab/opponent_model.py)
ROLLOUTS = ("random", "greedy", "heuristic")  #: the compiled rollout policies; a policy's code is its index
VALUES = ("win", "points")
DEFAULTS: dict[str, Any] = {"algo": "pimc", "ms": 40.0, "sims": 0, "rollout": "heuristic", "value": "points",
                            "infer": "constraints", "temp": TEMPERATURE, "proposals": 8, "keep": 0.0, "c": 0.7,
                            "race": 0.0, "tie": 0.01, "seed": None}


def parse_search_spec(spec: str) -> dict[str, Any]:
    """The parameters of ``search[:name=value]...`` (see the module docstring), typed and checked."""
    parsed = parse_spec(spec) if isinstance(spec, str) else None
    if parsed is None or parsed.kind != "search":
        raise SearchSpecError(f"a search spec starts with 'search', got {spec!r}")
    params = dict(DEFAULTS)
    for key, value in parsed.params.items():
        if key == "infer":
            value = {"1": "constraints", "true": "constraints", "0": "none", "false": "none"}.get(value, value)
            if value not in INFER_MODES:
                raise SearchSpecError(f"{spec!r}: infer must be one of {INFER_MODES} (or 1/0), got {value!r}")
            params[key] = value
            continue
        if key not in DEFAULTS:
            raise SearchSpecError(f"{spec!r}: unknown search parameter {key!r}; known: {sorted(DEFAULTS)}")
        try:
            if key in ("ms", "keep", "c", "temp", "race", "tie"):
                params[key] = float(value)
            elif key in ("sims", "seed", "proposals"):
                params[key] = int(value)
            else:
                params[key] = value
        except ValueError:
            raise SearchSpecError(f"{spec!r}: {key}={value!r} is not a valid value") from None
    if params["algo"] not in ALGORITHMS:
        raise SearchSpecError(f"{spec!r}: algo must be one of {ALGORITHMS}, got {params['algo']!r}")
    if params["value"] not in VALUES:
        raise SearchSpecError(f"{spec!r}: value must be one of {VALUES}, got {params['value']!r}")
    if params["rollout"] not in ROLLOUTS:
        if not params["rollout"] or parse_spec(params["rollout"]).kind == "search":
            raise SearchSpecError(f"{spec!r}: rollout must be one of {ROLLOUTS} or a checkpoint spec, got "
                                  f"{params['rollout']!r}")
        if params["algo"] != "pimc":
            raise SearchSpecError(f"{spec!r}: a checkpoint rollout ({params['rollout']}) is played in batches over "
                                  f"the worlds, which pimc does; ismcts plays one world at a time: use "
                                  f"rollout={'|'.join(ROLLOUTS)}")
    if not (params["ms"] >= 0 and math.isfinite(params["ms"])):
        raise SearchSpecError(f"{spec!r}: ms must be >= 0, got {params['ms']}")
    if params["sims"] < 0:
        raise SearchSpecError(f"{spec!r}: sims must be >= 0, got {params['sims']}")
    if params["ms"] == 0 and params["sims"] == 0:
        raise SearchSpecError(f"{spec!r}: with ms=0 (no clock) give sims=N, the worlds or iterations per decision")
    if not 0.0 <= params["keep"] <= 1.0:
        raise SearchSpecError(f"{spec!r}: keep is a probability in [0, 1], got {params['keep']}")
    if not (params["temp"] > 0 and math.isfinite(params["temp"])):
        raise SearchSpecError(f"{spec!r}: temp must be > 0, got {params['temp']}")
    if params["proposals"] < 1:
        raise SearchSpecError(f"{spec!r}: proposals must be >= 1, got {params['proposals']}")
    if not (params["c"] >= 0 and math.isfinite(params["c"])):
        raise SearchSpecError(f"{spec!r}: c must be >= 0, got {params['c']}")
    if not (params["race"] >= 0 and math.isfinite(params["race"])):
        raise SearchSpecError(f"{spec!r}: race must be >= 0 (0: off), got {params['race']}")
    if not (params["tie"] >= 0 and math.isfinite(params["tie"])):
        raise SearchSpecError(f"{spec!r}: tie must be >= 0, got {params['tie']}")
    if params["race"] > 0:
        if params["algo"] != "pimc" or params["rollout"] not in ROLLOUTS:
            raise SearchSpecError(f"{spec!r}: race drops actions between blocks of worlds, which pimc with a "
                                  f"compiled rollout ({'|'.join(ROLLOUTS)}) does")
        if params["sims"] == 0:
            raise SearchSpecError(f"{spec!r}: race needs sims=N, the most worlds an action may be tried in")
    if params["seed"] is not None and params["seed"] < 0:
        raise SearchSpecError(f"{spec!r}: seed must be >= 0, got {params['seed']}")
    return params
