"""The agent protocol: act on the env's observation dict, return a legal action id.

An agent is built for one rules config (it may need it to read the observation) and acts on
``{"observation": float32 (D,), "action_mask": int8 (A,)}`` as returned by the env's
``observe``/``last``. All randomness comes from the ``np.random.Generator`` passed to ``act``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cf_env import ChickenFootError, RulesConfig

__all__ = ["Agent", "NotToMoveError", "act_batch", "legal_actions", "needs_history"]


class NotToMoveError(ChickenFootError, ValueError):
    """An agent was asked to act on an observation whose action mask is all zeros (the env gives
    such masks to every seat but the one to move)."""


@runtime_checkable
class Agent(Protocol):
    """What every agent provides."""

    name: str
    config: RulesConfig

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        """Return a legal action id for ``observation`` (its mask must have a 1 somewhere)."""
        ...


def legal_actions(observation: dict) -> np.ndarray:
    """Sorted legal action ids of an observation dict; a clear error when there are none."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise NotToMoveError("the observation's action mask is all zeros: this agent is not to move")
    return legal


def act_batch(agent: Agent, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Actions for a batch of observations ``(N, D)`` with masks ``(N, A)``: the agent's own
    vectorised ``act_batch`` when it has one, else one ``act`` call per row."""
    if hasattr(agent, "act_batch"):
        return agent.act_batch(observations, masks, rng)
    return np.array([agent.act({"observation": o, "action_mask": m}, rng) for o, m in zip(observations, masks)],
                    dtype=np.int64)


def needs_history(agents: Iterable[Any]) -> bool:
    """Whether any of ``agents`` reads the observation's ``history`` entry (its ``needs_history``
    attribute: a search agent with ``infer=policy``); the loops that feed them then make their env
    with ``history=True`` (or ask ``ObservationEncoder.observe`` for it)."""
    return any(getattr(agent, "needs_history", False) for agent in agents)
