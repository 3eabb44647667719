"""The value of a finished round to each seat: what the search agents maximise.

``value=points`` (the default): the seat's round result relative to the others, the env's
``relative`` reward (:func:`cf_env.engine.scoring.round_reward`) over ``max_pip * hand_size``; in
the last round of the game, the seat's share of the game's win (lowest total,
:func:`cf_env.engine.scoring.win_share`; R16's tie-breaks aside, since the observation keeps totals
and not each round) plus a twentieth of the relative result.

``value=win``: in every round, an estimate of the chance to win the game from the totals after
the round: each other seat's lead, over a normal spread of ``SIGMA_PER_HAND_PIP * max_pip *
hand_size`` points per remaining round (the measured spread of two seats' round points),
multiplied over the opponents, plus a twentieth of the relative result; with the heuristic's
rollouts it measured weaker than ``points`` (lab/results/search.md), with a network in the
searcher's seat and the heuristic in the others' level or ahead (lab/results/search-network.md).

``value=joint``: ``win``'s estimate with the seats' remaining rounds as independent normal totals
(each seat's spread ``SIGMA_PER_HAND_PIP / sqrt(2)`` of the unit a round), so that the seat's own
luck is shared by its comparisons with every opponent: the chance that its total ends lowest,
``E_z[prod_q Phi(lead_q / s - z)]`` over a standard normal ``z`` (Gauss-Hermite, ``HERMITE_NODES``
nodes). ``win``'s product of the pairwise chances treats the comparisons as independent and so
undervalues a seat level with the others (4 players level: 1/8 in place of 1/4) and flattens a
trailing seat's chance toward 0 (lab/results/search-network.md, "The win chance of the seats
together").
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from cf_env import ObservationEncoder
from cf_env.engine import scoring
from cf_env.observation import SCORE_SCALE

__all__ = ["HERMITE_NODES", "SIGMA_PER_HAND_PIP", "Valuation", "round_value", "round_values", "valuation", "win_chance"]

SIGMA_PER_HAND_PIP = 0.33  # a round's std of the difference of two seats' points, per max_pip * hand_size
# (measured: 20.7 points in 4-player and 20.3 in 2-player double-nine heuristic play, where the unit is 63)
RELATIVE_WEIGHT = 0.05  # the relative result's weight beside a win share or a win chance
HERMITE_NODES = 24  # value=joint: quadrature nodes over the seat's own luck
_HERMITE_X, _HERMITE_W = np.polynomial.hermite.hermgauss(HERMITE_NODES)
_NODES = np.sqrt(2.0) * _HERMITE_X  # E[f(z)], z standard normal = sum(_WEIGHTS * f(_NODES))
_WEIGHTS = _HERMITE_W / np.sqrt(np.pi)

_round_reward = njit(cache=True, inline="always")(scoring.round_reward)
_win_share = njit(cache=True, inline="always")(scoring.win_share)


class Valuation(NamedTuple):
    """How a finished round is valued at one decision."""

    totals: np.ndarray  #: (n,) int64 the totals before this round, the searcher first
    left: int  #: rounds after this one (0: the game ends with it)
    norm: float  #: max_pip * hand_size: the relative result's unit
    sigma: float  #: value=win or joint: one round's spread of a points difference; 0 for value=points
    joint: bool  #: value=joint: the seats' futures as independent totals, not independent differences


def valuation(obs: np.ndarray, encoder: ObservationEncoder, value: str) -> Valuation:
    """The :class:`Valuation` of a decision from its observation (``value``: one of :data:`agents.search.spec.VALUES`)."""
    sl, config = encoder.slices, encoder.config
    norm = float(config.max_pip * config.hand_size)
    totals = np.rint(obs[sl["scores"]] * SCORE_SCALE).astype(np.int64)
    left = int(round(float(obs[sl["round"]][1])))
    sigma = SIGMA_PER_HAND_PIP * norm if value in ("win", "joint") else 0.0
    return Valuation(totals, left, norm, sigma, value == "joint")


@njit(cache=True)
def win_chance(totals, pts, n, p, spread, joint):
    """The chance that seat ``p`` of ``n``'s total ends lowest, from the seats' totals before this
    round (``totals``), their points in it (``pts``) and ``spread``, the standard deviation of two
    seats' difference over the rounds left: the product of the pairwise chances, or with ``joint``
    the chance with each seat's future an independent normal total (see the module docstring)."""
    if not joint:
        chance = 1.0
        for q in range(n):
            if q != p:
                lead = (totals[q] + pts[q]) - (totals[p] + pts[p])
                chance *= 0.5 * (1.0 + math.erf(lead / (spread * math.sqrt(2.0))))
        return chance
    s = spread / math.sqrt(2.0)  # one seat's own spread
    chance = 0.0
    for k in range(_NODES.shape[0]):
        term = _WEIGHTS[k]
        for q in range(n):
            if q != p:
                lead = (totals[q] + pts[q]) - (totals[p] + pts[p])
                term *= 0.5 * (1.0 + math.erf((lead / s - _NODES[k]) / math.sqrt(2.0)))
        chance += term
    return chance


@njit(cache=True)
def round_value(s, b, n, v, p):
    """Seat ``p``'s value of game ``b``'s finished round under valuation ``v`` (see the module
    docstring). PIMC reads the searcher's alone (``p`` 0): with ``value=joint`` a seat's win chance
    is a quadrature over its own luck, which the other seats' values would repeat for nothing."""
    pts = s.round_scores[b, 0]
    total = 0
    for q in range(n):
        total += pts[q]
    relative = _round_reward(pts[p], total, n, scoring.REWARD_RELATIVE, v.norm)
    if v.sigma <= 0.0 and v.left > 0:
        return relative
    totals = v.totals
    if v.left == 0:  # the game ends with this round: the share of the win
        best = totals[0] + pts[0]
        for q in range(1, n):
            best = min(best, totals[q] + pts[q])
        winners = 0
        for q in range(n):
            if totals[q] + pts[q] == best:
                winners += 1
        return _win_share(totals[p] + pts[p] == best, winners) + RELATIVE_WEIGHT * relative
    return win_chance(totals, pts, n, p, v.sigma * math.sqrt(v.left), v.joint) + RELATIVE_WEIGHT * relative


@njit(cache=True)
def round_values(s, b, n, v, out):
    """Every seat's :func:`round_value` of game ``b``'s finished round, written into ``out`` (ISMCTS
    backs each tree node's value up for the seat that moved there)."""
    for p in range(n):
        out[p] = round_value(s, b, n, v, p)
