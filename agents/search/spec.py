"""The search agents' spec: ``search[:name=value...]``, its parameters and their checks.

=========  ==========  =======================================================================
name       default     meaning
=========  ==========  =======================================================================
algo       pimc        ``pimc`` or ``ismcts``
ms         40          time budget per decision in milliseconds (0: no clock, ``sims`` only)
sims       0           most worlds (pimc) or iterations (ismcts) per decision; 0 = no cap, and
                       with ``ms=0`` it must be given. With ``ms=0`` decisions are reproducible.
rollout    heuristic   ``heuristic``, ``greedy`` or ``random``: the policy that plays every seat in
                       the rollouts (compiled); or a checkpoint spec (``zoo:NAME`` or a path): with
                       ``pimc`` its network plays every rollout of a batch of worlds in lockstep,
                       one batched forward pass per step (about 40 ms per batch: give it
                       ``ms=200`` or more); with ``ismcts`` its weights are compiled into the
                       rollouts (:mod:`agents.search.network`: two tanh hidden layers, no action head)
others     (rollout)   with a checkpoint ``rollout``: ``heuristic``, ``greedy`` or ``random`` plays the
                       opponents' seats in the rollouts (compiled), the network only the searcher's;
                       the search then models its opponents as that policy (against that opponent,
                       the model is exact, and the rollouts cost a quarter of the forward passes)
value      points      ``points``, ``win`` or ``joint`` (:mod:`agents.search.values`)
infer      constraints ``constraints``: worlds respect the opponents' failures to match (``1``
                       too); ``policy``: they are also resampled by how likely the opponents'
                       plays this round are under the opponent model (needs the observation's
                       ``history`` entry; without it, ``constraints``); ``none``: ignore both
                       (``0`` too). ``constraints`` is the default because ``policy`` measured no
                       stronger and costs a third of the worlds (lab/results/search.md).
                       ``module:Class`` (or ``path/file.py:Class``): a world sampler of your own
                       (:class:`agents.search.WorldSampler`), made as ``Class(config, **options)``
                       with the spec's pairs that are not search parameters as its options
                       (``search:infer=my.samplers:Kept:keep=0.2``); the lab's belief network and
                       oracle are such samplers (``lab/samplers.py``)
temp       TEMP        the opponent model's softmax temperature over heuristic scores (fitted,
                       see ``lab/opponent_model.py``)
proposals  8           ``infer=policy`` (or a sampler that weighs worlds): candidate worlds dealt for
                       each world kept
race       0           pimc: racing (:mod:`agents.search.racing`): stop trying an action once the
                       leader beats it by ``race`` standard errors over the worlds so far (0: off,
                       every action in every world); needs ``sims``, the most worlds
tie        0.01        racing: an action the leader beats by less than this (in value units) with
                       that confidence is dropped too (equally good)
c          0.7         ismcts: UCB exploration constant (values are in about [-1, 1])
tree       all         ismcts: ``all``, a node for every seat's move (SO-ISMCTS, each seat choosing
                       by UCB on its own value); ``own``, nodes for the searcher's moves alone, the
                       opponents' moves played by the rollout's model of them (``others``, or the
                       compiled ``rollout``), as PIMC models them
depth      0           ismcts: the most tree nodes on a path below the root (with ``tree=own``: the
                       searcher's moves, this one and its next ``depth - 1`` turns); 0 = no limit
root       ucb         ismcts: ``ucb``, each iteration one root move chosen by UCB, the most visited
                       played; ``every``, each sampled world plays every legal root move (PIMC's
                       paired comparison; ``sims`` counts worlds) with one iteration of the tree
                       below each, the move of the best mean played (``depth=1``: PIMC)
seed       none        the agent's own random seed; by default it draws from ``act``'s generator
=========  ==========  =======================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from agents.spec import SearchSpecError, import_target, parse_spec

__all__ = ["ALGORITHMS", "DEFAULTS", "INFER_MODES", "ROLLOUTS", "ROOTS", "SearchSettings", "SearchSpecError", "TEMPERATURE",
           "TREES", "VALUES", "is_sampler_entry_point", "parse_search_spec"]

ALGORITHMS = ("pimc", "ismcts")
TREES = ("all", "own")  #: ismcts: whose moves are the tree's nodes
ROOTS = ("ucb", "every")  #: ismcts: how an iteration takes the root's moves
INFER_MODES = ("policy", "constraints", "none")  #: how worlds use what the opponents showed (or a sampler's entry point)
TEMPERATURE = 6.0  #: the opponent model's temperature: the fit on heuristic and search plays (lab/opponent_model.py)
ROLLOUTS = ("random", "greedy", "heuristic")  #: the compiled rollout policies; a policy's code is its index
VALUES = ("win", "points", "joint")

@dataclass(frozen=True)
class SearchSettings:
    """A search agent's parameters (the table above), typed and checked when made: what
    :func:`parse_search_spec` returns and :class:`~agents.search.SearchAgent` takes.
    ``SearchSettings(ms=0, sims=16).spec`` is the spec string that names the same agent."""

    algo: str = "pimc"
    ms: float = 40.0
    sims: int = 0
    rollout: str = "heuristic"
    others: str = ""
    value: str = "points"
    infer: str = "constraints"
    temp: float = TEMPERATURE
    proposals: int = 8
    c: float = 0.7
    tree: str = "all"
    depth: int = 0
    root: str = "ucb"
    race: float = 0.0
    tie: float = 0.01
    seed: int | None = None
    #: a sampler entry point's own ``name=value`` pairs (``infer=module:Class``), as typed
    options: tuple[tuple[str, str], ...] = ()

    @property
    def spec(self) -> str:
        """``search[:name=value...]`` with the parameters that differ from the defaults."""
        def text(value: Any) -> str:
            return f"{value:g}" if isinstance(value, float) and float(f"{value:g}") == value else str(value)

        pairs = [f"{f.name}={text(getattr(self, f.name))}" for f in fields(self)
                 if f.name != "options" and getattr(self, f.name) != f.default]
        return ":".join(["search", *pairs, *(f"{k}={v}" for k, v in self.options)])

    def __post_init__(self) -> None:
        where = self.spec
        if self.infer not in INFER_MODES and not is_sampler_entry_point(self.infer):
            raise SearchSpecError(f"{where!r}: infer must be one of {INFER_MODES} (or 1/0) or a world sampler's "
                                  f"module:Class, got {self.infer!r}")
        if self.options and self.infer in INFER_MODES:
            raise SearchSpecError(f"{where!r}: unknown search parameters {[k for k, _ in self.options]}; known: "
                                  f"{sorted(DEFAULTS)} (other names are a world sampler's options, infer=module:Class)")
        if self.algo not in ALGORITHMS:
            raise SearchSpecError(f"{where!r}: algo must be one of {ALGORITHMS}, got {self.algo!r}")
        if self.tree not in TREES:
            raise SearchSpecError(f"{where!r}: tree must be one of {TREES}, got {self.tree!r}")
        if self.root not in ROOTS:
            raise SearchSpecError(f"{where!r}: root must be one of {ROOTS}, got {self.root!r}")
        if (self.tree != "all" or self.depth or self.root != "ucb") and self.algo != "ismcts":
            raise SearchSpecError(f"{where!r}: tree, depth and root shape ismcts's tree; algo={self.algo} has none")
        if self.depth < 0:
            raise SearchSpecError(f"{where!r}: depth must be >= 0 (0: no limit), got {self.depth}")
        if self.value not in VALUES:
            raise SearchSpecError(f"{where!r}: value must be one of {VALUES}, got {self.value!r}")
        if self.rollout not in ROLLOUTS and (not self.rollout or parse_spec(self.rollout).kind == "search"):
            raise SearchSpecError(f"{where!r}: rollout must be one of {ROLLOUTS} or a checkpoint spec, got "
                                  f"{self.rollout!r}")
        if self.others:
            if self.others not in ROLLOUTS:
                raise SearchSpecError(f"{where!r}: others must be one of {ROLLOUTS} (a compiled policy for the "
                                      f"opponents' seats), got {self.others!r}")
            if self.rollout in ROLLOUTS:
                raise SearchSpecError(f"{where!r}: others sets the opponents' policy beside a checkpoint rollout; "
                                      f"rollout={self.rollout} already plays every seat compiled")
        for name in ("ms", "c"):
            if not (getattr(self, name) >= 0 and math.isfinite(getattr(self, name))):
                raise SearchSpecError(f"{where!r}: {name} must be >= 0, got {getattr(self, name)}")
        if self.sims < 0:
            raise SearchSpecError(f"{where!r}: sims must be >= 0, got {self.sims}")
        if self.ms == 0 and self.sims == 0:
            raise SearchSpecError(f"{where!r}: with ms=0 (no clock) give sims=N, the worlds or iterations per decision")
        if not (self.temp > 0 and math.isfinite(self.temp)):
            raise SearchSpecError(f"{where!r}: temp must be > 0, got {self.temp}")
        if self.proposals < 1:
            raise SearchSpecError(f"{where!r}: proposals must be >= 1, got {self.proposals}")
        if not (self.race >= 0 and math.isfinite(self.race)):
            raise SearchSpecError(f"{where!r}: race must be >= 0 (0: off), got {self.race}")
        if not (self.tie >= 0 and math.isfinite(self.tie)):
            raise SearchSpecError(f"{where!r}: tie must be >= 0, got {self.tie}")
        if self.race > 0:
            if self.algo != "pimc" or self.rollout not in ROLLOUTS:
                raise SearchSpecError(f"{where!r}: race drops actions between blocks of worlds, which pimc with a "
                                      f"compiled rollout ({'|'.join(ROLLOUTS)}) does")
            if self.sims == 0:
                raise SearchSpecError(f"{where!r}: race needs sims=N, the most worlds an action may be tried in")
        if self.seed is not None and self.seed < 0:
            raise SearchSpecError(f"{where!r}: seed must be >= 0, got {self.seed}")


DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(SearchSettings) if f.name != "options"}  #: every
#: parameter's default


def is_sampler_entry_point(infer: str) -> bool:
    """Whether ``infer`` names a world sampler (``module:Class`` or ``path/file.py:Class``)."""
    where, _, attr = infer.rpartition(":")
    return bool(where) and attr.isidentifier() and (where.endswith(".py") or all(
        part.isidentifier() for part in where.split(".")))


def parse_search_spec(spec: str, player: bool = False) -> SearchSettings:
    """The parameters of ``search[:name=value]...`` (see the module docstring), typed and checked.
    ``player=True`` for a spec that is to play (eval, compare, play, a config's opponents): such a
    spec may not name a sampler that reads the opponents' true hands (``needs_hands``, a
    teacher's privilege in label collection), which no observation carries (R17)."""
    parsed = parse_spec(spec) if isinstance(spec, str) else None
    if parsed is None or parsed.kind != "search":
        raise SearchSpecError(f"a search spec starts with 'search', got {spec!r}")
    params: dict[str, Any] = {}
    options: list[tuple[str, str]] = []
    for key, value in parsed.params.items():
        if key not in DEFAULTS or key == "options":
            options.append((key, value))  # a sampler's option; refused below unless infer names one
            continue
        if key == "infer":
            params[key] = {"1": "constraints", "true": "constraints", "0": "none", "false": "none"}.get(value, value)
            continue
        try:
            kind = int if key == "seed" else type(DEFAULTS[key])  # the field's type, from its default
            params[key] = kind(value) if kind in (int, float) else value
        except ValueError:
            raise SearchSpecError(f"{spec!r}: {key}={value!r} is not a valid value") from None
    if options and not is_sampler_entry_point(str(params.get("infer", ""))):
        raise SearchSpecError(f"{spec!r}: unknown search parameter {options[0][0]!r}; known: {sorted(DEFAULTS)} "
                              f"(other names are options of a world sampler named as infer=module:Class)")
    settings = SearchSettings(**params, options=tuple(options))
    reads_hands = is_sampler_entry_point(settings.infer) and getattr(import_target(settings.infer), "needs_hands", False)
    if player and reads_hands:
        raise SearchSpecError(f"{spec!r}: infer={settings.infer} reads the opponents' true hands, a teacher's "
                              f"privilege (chickenfoot labels collect / distill --teacher), not a player's: no "
                              f"observation carries them (R17); play it with infer=constraints")
    return settings
