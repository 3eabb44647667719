"""The rollout policies, compiled: each plays every seat of a world to the end of its round.

PIMC rolls out every (world, action) pair with :func:`rollout`; ISMCTS plays its tree's actions
and then :func:`rollout`. ``random`` picks a legal action uniformly, ``greedy`` the heaviest
play, ``heuristic`` the play :func:`agents.baselines.score_plays` scores best (the heuristic
agent's choice, scored from the world's state by :func:`agents.baselines.score_plays_state`, the
same scores as from its observation without writing one). A checkpoint rollout plays outside compiled code
(:mod:`agents.search.pimc`'s batched kernels).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.baselines import HeuristicTables, score_plays_state
from agents.search.spec import ROLLOUTS
from agents.search.worlds import randint
from cf_env.vector import apply_action_inline, njit_unrefcounted

__all__ = ["GREEDY", "HEURISTIC", "RANDOM", "RolloutPolicy", "choose", "new_policy", "rollout"]

RANDOM, GREEDY, HEURISTIC = (ROLLOUTS.index(name) for name in ("random", "greedy", "heuristic"))


class RolloutPolicy(NamedTuple):
    """A compiled rollout policy and its working arrays."""

    kind: int  #: RANDOM, GREEDY or HEURISTIC
    plays: np.ndarray  #: (K*K,) int64 the legal plays
    scores: np.ndarray  #: (K*K,) float64 their scores
    tables: HeuristicTables  #: the heuristic's tables (its cost column is greedy's too)
    work: np.ndarray  #: (3, K) float64 the heuristic's working arrays (held, opponents' and next player's lacks)
    open_after: np.ndarray  #: (K,) bool the values open after a play (the heuristic's mobility)
    mine: np.ndarray  #: (T,) int64 the mover's tiles (the heuristic's working list)


def new_policy(kind: int, k: int, tables: HeuristicTables) -> RolloutPolicy:
    return RolloutPolicy(kind, np.zeros(k * k, np.int64), np.zeros(k * k, np.float64), tables,
                         np.zeros((3, k), np.float64), np.zeros(k, np.bool_),
                         np.zeros(tables.tile_values.shape[0], np.int64))


@njit(cache=True, inline="always")
def choose(s, c, b, policy, rs):
    """The rollout policy's action for game ``b``'s current player."""
    kk = c.k * c.k
    plays = policy.plays
    legal = s.legal[b]
    n = 0
    for a in range(kk):
        if legal[a]:
            plays[n] = a
            n += 1
    other = kk if legal[kk] else kk + 1  # draw or pass (never both)
    if policy.kind == RANDOM:
        extra = 1 if (legal[kk] or legal[kk + 1]) else 0
        r = randint(rs, n + extra)
        return plays[r] if r < n else other
    if n == 0:
        return other
    best = 0
    if policy.kind == GREEDY:
        cost = policy.tables.cost
        for i in range(1, n):
            if cost[plays[i]] > cost[plays[best]]:
                best = i
        return plays[best]
    scores = policy.scores
    work = policy.work
    score_plays_state(s, b, plays[:n], scores[:n], policy.tables, work[0], work[1], work[2], policy.open_after,
                      policy.mine)
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    return plays[best]


@njit_unrefcounted(cache=True)
def rollout(s, c, b, policy, rs):
    """Play game ``b`` to the end of its round (``rnd`` leaves 0) with the rollout policy; returns
    the decisions taken. Compiled without numba's reference counting
    (:func:`cf_env.vector.njit_unrefcounted`): about 2.5 times the decisions a second."""
    steps = 0
    for _ in range(1 << 20):  # bounded: every round ends (each draw empties the boneyard, each pass leads to a play)
        if s.round_index[b] != 0:
            break
        a = choose(s, c, b, policy, rs)
        apply_action_inline(b, a, s, c)
        steps += 1
    return steps
