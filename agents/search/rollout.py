"""The rollout policies, compiled: each plays every seat of a world to the end of its round.

PIMC rolls out every (world, action) pair with :func:`rollout`; ISMCTS plays its tree's actions
and then :func:`rollout`. ``random`` picks a legal action uniformly, ``greedy`` the heaviest
play, ``heuristic`` the play :func:`agents.baselines.score_plays` scores best (the heuristic
agent's choice, from the world's observation). A checkpoint rollout plays outside compiled code
(:mod:`agents.search.pimc`'s batched kernels).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.baselines import HeuristicTables, score_plays
from agents.search.spec import ROLLOUTS
from agents.search.worlds import randint
from cf_env.vector import apply_action, write_observation

__all__ = ["GREEDY", "HEURISTIC", "RANDOM", "RolloutPolicy", "choose", "new_policy", "rollout"]

RANDOM, GREEDY, HEURISTIC = (ROLLOUTS.index(name) for name in ("random", "greedy", "heuristic"))


class RolloutPolicy(NamedTuple):
    """A compiled rollout policy and its working arrays."""

    kind: int  #: RANDOM, GREEDY or HEURISTIC
    obs: np.ndarray  #: (B, D) float32 observation rows the heuristic reads (row ``b`` for game ``b``)
    plays: np.ndarray  #: (K*K,) int64 the legal plays
    scores: np.ndarray  #: (K*K,) float64 their scores
    tables: HeuristicTables  #: the heuristic's tables (its cost column is greedy's too)


def new_policy(kind: int, obs_size: int, games: int, k: int, tables: HeuristicTables) -> RolloutPolicy:
    return RolloutPolicy(kind, np.zeros((games, obs_size), np.float32), np.zeros(k * k, np.int64),
                         np.zeros(k * k, np.float64), tables)


@njit(cache=True)
def choose(s, c, o, b, policy, rs):
    """The rollout policy's action for game ``b``'s current player."""
    kk = c.k * c.k
    plays = policy.plays
    n = 0
    for a in range(kk):
        if s.legal[b, a]:
            plays[n] = a
            n += 1
    other = kk if s.legal[b, kk] else kk + 1  # draw or pass (never both)
    if policy.kind == RANDOM:
        extra = 1 if (s.legal[b, kk] or s.legal[b, kk + 1]) else 0
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
    write_observation(b, s, c, o, policy.obs)
    score_plays(policy.obs[b], plays[:n], scores[:n], policy.tables)
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    return plays[best]


@njit(cache=True)
def rollout(s, c, o, b, policy, rs):
    """Play game ``b`` to the end of its round (``rnd`` leaves 0) with the rollout policy; returns
    the decisions taken."""
    steps = 0
    for _ in range(1 << 20):  # bounded: every round ends (each draw empties the boneyard, each pass leads to a play)
        if s.rnd[b] != 0:
            break
        a = choose(s, c, o, b, policy, rs)
        apply_action(b, a, s, c)
        steps += 1
    return steps
