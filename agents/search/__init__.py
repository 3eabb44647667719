"""Search agents: determinized Monte-Carlo search (PIMC) and single-observer ISMCTS.

Both act from the observation alone (what their seat may know, docs/RULES.md R17). From it they
sample *worlds* (:mod:`agents.search.worlds`): the hidden tiles dealt to the opponents' hands and
the boneyard, consistent with the hand sizes and (``infer=constraints``, the default) with each opponent's
failures to match; with ``infer=policy`` worlds are also resampled by how likely the
opponents' plays this round are under an opponent model (:mod:`agents.search.inference`), read
from the observation's ``history`` entry. Each world is played to the end of the round on the batched engine's compiled kernels
(:mod:`cf_env.vector`) by a rollout policy (:mod:`agents.search.rollout`) and valued by
:mod:`agents.search.values`.

* ``pimc`` (:mod:`agents.search.pimc`): every legal action is tried in every sampled world (the
  same worlds for every action), and the action with the best mean value is played; with
  ``race=Z`` (:mod:`agents.search.racing`) actions that are settled early stop being tried.
* ``ismcts`` (:mod:`agents.search.ismcts`): one tree over the action sequences from the
  searcher's decision, UCB restricted to the actions legal in each world; the most visited root
  action is played.

``agents.load("search")`` is the default setting; parameters follow after colons,
``search:algo=ismcts:ms=20:rollout=greedy`` (the table: :mod:`agents.search.spec`). A decision
with a single legal action costs no search.

=====================  ==================================================================
module                 what it holds
=====================  ==================================================================
``spec``               the parameters, their defaults and checks (``parse_search_spec``)
``worlds``             reading an observation, the world sampler (``sample_worlds``) and the
                       protocol of samplers of your own (``WorldSampler``, ``infer=module:Class``)
``inference``          the opponents' plays from the history, their likelihood in a world
``values``             the value of a finished round
``rollout``            the compiled rollout policies and the rollout loop
``racing``             racing PIMC: dropping settled actions between blocks of worlds
``pimc`` / ``ismcts``  the two searches' compiled kernels
``agent``              ``SearchAgent``: the budget, the chunks, ``act``
=====================  ==================================================================
"""

from __future__ import annotations

import importlib
from typing import Any

from agents.search.spec import (
    ALGORITHMS,
    DEFAULTS,
    ROLLOUTS,
    VALUES,
    SearchSettings,
    SearchSpecError,
    parse_search_spec,
)

__all__ = ["ALGORITHMS", "DEFAULTS", "ROLLOUTS", "SampledWorlds", "SearchAgent", "SearchSpecError", "VALUES", "World",
           "WorldSampler", "parse_search_spec", "read_observation", "sample_worlds", "SearchSettings"]

# the compiled parts load on first use: checking a spec (configs, the command line) needs no numba
_LAZY = {"SearchAgent": "agents.search.agent", "SampledWorlds": "agents.search.worlds", "World": "agents.search.worlds",
         "WorldSampler": "agents.search.worlds",
         "read_observation": "agents.search.worlds", "sample_worlds": "agents.search.worlds"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'agents.search' has no attribute {name!r}")
