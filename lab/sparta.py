"""SPARTA's rule for the search (Lerer et al., 2020): the search only overrules its blueprint when sure.

:class:`Sparta` is a PIMC search whose rollout policy (the heuristic, a network) is also its
blueprint: at each decision the blueprint's own choice stands unless the search's best action
beats it by more than ``deviate`` in value units. A study (lab/results/search-network.md,
network-rollout-teacher.md), named as a ``python`` agent spec with the search's parameters after
it::

    chickenfoot eval "lab.sparta:Sparta:deviate=0.05:ms=0:sims=64:rollout=zoo:strong-4p" heuristic

As a label teacher its ``q`` are the search's own means, which its choices overrule by up to the
margin: a fit at a temperature above 0 learns the means (``chickenfoot labels fit`` warns), a fit
at temperature 0 the choices it played.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import agents
from agents.search import SearchAgent, SearchSpecError, parse_search_spec
from cf_env import RulesConfig

__all__ = ["Sparta"]


class Sparta(SearchAgent):
    """A PIMC search that plays its rollout policy's choice unless the search's best beats it by
    more than ``deviate`` (``search`` holds the search's parameters, as a spec's pairs)."""

    choices_overrule_values = True  #: as a label teacher its q are the search's means (training.distill warns)

    def __init__(self, config: RulesConfig, deviate: float, **search: Any) -> None:
        spec = ":".join(["search", *(f"{key}={value}" for key, value in search.items())])
        settings = parse_search_spec(spec)
        if not (isinstance(deviate, (int, float)) and math.isfinite(deviate) and deviate >= 0):
            raise SearchSpecError(f"deviate must be a number >= 0 (0: the search's best is played), got {deviate!r}")
        if settings.algo != "pimc":
            raise SearchSpecError(f"{spec!r}: deviate compares the actions' mean values, which pimc gives (ismcts "
                                  f"gives visit counts)")
        super().__init__(config, settings, name=f"sparta:deviate={deviate:g}:{spec}")
        self.deviate = float(deviate)
        #: the rollout policy as an agent, whose choice stands unless overruled
        self.blueprint = self._network if self._network is not None else agents.load(settings.rollout, config)

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        action = super().act(observation, rng)
        legal, scores = self.last_search["actions"], self.last_search["scores"]
        if legal.size == 1:
            return action
        own = int(self.blueprint.act(observation, self._seed_rng if self._seed_rng is not None else rng))
        mine = int(np.flatnonzero(legal == own)[0])
        if scores[int(np.flatnonzero(legal == action)[0])] - scores[mine] <= self.deviate:
            return own
        return action
