"""Policy-based inference: how likely each opponent's plays this round are, given a world's hands.

A world dealt by the constraint sampler (:func:`agents.search.worlds.deal_hidden`) respects what
the opponents' failures to match rule out, but not what their choices say: a player who led a
heavy double while holding lighter tiles of the same value probably had no better play. As in
Skat (Rebstock, Solinas, Buro, Sturtevant: "Policy Based Inference in Trick-Taking Card Games",
IEEE CoG 2019), each sampled world is weighted by the probability of the opponents' observed
plays under an opponent model, given the hand that world assigns them at each play, and worlds
are resampled by that weight (:func:`deal_hidden` deals ``proposals`` candidates per world and
keeps one with probability proportional to its weight: sampling-importance-resampling).

**The opponent model** is a softmax over :func:`agents.baselines.score_plays` (the heuristic's
scores of the legal plays) at temperature ``temp``, fitted by maximum likelihood on recorded
games of several agents (``python -m lab.opponent_model``; the fit and its figures are in
lab/results/search.md). Draws and passes carry no weight: what they say (no legal play) is a constraint the
sampler already applies.

**The hand at an earlier play** is the world's hand now plus the tiles the opponent has placed
since. Tiles it drew since are not taken out (which of its tiles they are is not public), so
the hand at a play before a draw is a superset of the true one: an approximation that leaves
the likelihood of the plays after an opponent's last draw exact.

:func:`read_history` turns the observer's ``history`` entry (``raw_env(history=True)``) into
:class:`Decisions`: for each opponent play, the public state it faced (open ends, forced slots,
the failures seen so far); :func:`log_likelihood` scores one world in compiled code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.baselines import score_plays
from cf_env import ObservationEncoder, action_table
from cf_env.engine import EventKind

__all__ = ["Decisions", "log_likelihood", "no_decisions", "read_history"]

_START, _PLAY, _DRAW, _PASS = int(EventKind.START), int(EventKind.PLAY), int(EventKind.DRAW), int(EventKind.PASS)
TOES = 3  # R10


class Decisions(NamedTuple):
    """The opponents' plays this round with the public state each faced (seats observer-relative)."""

    seat: np.ndarray  #: (D,) int64 who played
    action: np.ndarray  #: (D,) int64 what it played
    ends: np.ndarray  #: (D, K) int64 free open ends per value before the play
    pend: np.ndarray  #: (D,) int64 forced slots then (0: free play)
    pend_val: np.ndarray  #: (D,) int64 the value they needed
    unmatched: np.ndarray  #: (D, n) int64 each seat's latest failed values then (bitmask)
    placed: np.ndarray  #: (D,) int64 tile index of the play
    tile_lo: np.ndarray  #: (T,) int64 each tile's low pip (the action table's)
    tile_hi: np.ndarray  #: (T,) int64 each tile's high pip


def no_decisions(n: int, max_pip: int) -> Decisions:
    """An empty :class:`Decisions` (inference off, or no opponent has played yet)."""
    z = np.zeros(0, np.int64)
    lo, hi = _pips(max_pip)
    return Decisions(z, z, np.zeros((0, max_pip + 1), np.int64), z, z, np.zeros((0, n), np.int64), z, lo, hi)


def _pips(max_pip: int) -> tuple[np.ndarray, np.ndarray]:
    table = action_table(max_pip)
    return np.array(table.tile_low, np.int64), np.array(table.tile_high, np.int64)


def read_history(history: np.ndarray, encoder: ObservationEncoder) -> Decisions:
    """The opponents' plays in ``history`` (an observation's ``history`` entry, rows ``[seat,
    kind, action, tile]``, observer-relative) replayed on the public state: the open ends, the
    forced slots and each seat's latest failure before every play. A play of a tile just drawn
    (R12) is left out: its choice was only to play or keep that tile."""
    config = encoder.config
    n, k = config.num_players, config.max_pip + 1
    table = action_table(config.max_pip)
    ends = np.zeros(k, np.int64)
    unm = np.zeros(n, np.int64)
    pend = pend_val = 0
    out: list[tuple] = []
    previous = (-1, -1)
    for seat, kind, action, tile in np.asarray(history, dtype=np.int64):
        if seat < 0:
            break
        if kind == _START:
            value = table.tile_low[tile]
            pend, pend_val = config.center_arms, value
            ends[:] = 0
            unm[:] = 0
        elif kind == _PLAY:
            m, x = divmod(int(action), k)
            if seat != 0 and previous != (seat, _DRAW):
                out.append((seat, action, ends.copy(), pend, pend_val, unm.copy(), table.action_tile[action]))
            if pend:
                pend -= 1
            else:
                ends[m] -= 1
                if m == x:
                    pend, pend_val = TOES, m
            if m != x:
                ends[x] += 1
        elif kind == _DRAW or (kind == _PASS and previous != (seat, _DRAW)):
            unm[seat] = (1 << pend_val) if pend else int(((ends > 0) * (1 << np.arange(k))).sum())
        previous = (int(seat), int(kind))
    if not out:
        return no_decisions(n, config.max_pip)
    cols = list(zip(*out))
    return Decisions(np.array(cols[0], np.int64), np.array(cols[1], np.int64), np.stack(cols[2]),
                     np.array(cols[3], np.int64), np.array(cols[4], np.int64), np.stack(cols[5]),
                     np.array(cols[6], np.int64), *_pips(config.max_pip))


@njit(cache=True)
def log_likelihood(hand, decisions, temp, tables, held, row, plays, scores):  # pragma: no cover - compiled
    """Log-probability of the opponents' plays in ``decisions`` under the softmax-of-heuristic
    model at temperature ``temp``, given the world's hands ``hand`` ((n, T) uint8, seat 0 the
    observer). ``held``, ``row``, ``plays`` and ``scores`` are working arrays."""
    n, t_count = hand.shape
    k = decisions.ends.shape[1]
    hand_at, unm_at, ends_at, pcount_at, pval_at, _ = tables.offsets
    tile_lo, tile_hi = decisions.tile_lo, decisions.tile_hi
    for p in range(n):
        for t in range(t_count):
            held[p, t] = hand[p, t]
    total = 0.0
    for d in range(decisions.seat.shape[0] - 1, -1, -1):  # backwards: each play puts its tile back in hand
        p = decisions.seat[d]
        held[p, decisions.placed[d]] = 1
        pend = decisions.pend[d]
        pval = decisions.pend_val[d]
        count = 0
        for t in range(t_count):
            if held[p, t]:
                lo, hi = tile_lo[t], tile_hi[t]
                for o in range(2):
                    m = lo if o == 0 else hi
                    x = hi if o == 0 else lo
                    if o == 1 and lo == hi:
                        break
                    if (pend > 0 and m == pval) or (pend == 0 and decisions.ends[d, m] > 0):
                        plays[count] = m * k + x
                        count += 1
        if count < 2:
            continue
        for t in range(t_count):
            row[hand_at + t] = held[p, t]
        for v in range(k):
            row[ends_at + v] = decisions.ends[d, v]
            row[pval_at + v] = 1.0 if (pend > 0 and v == pval) else 0.0
        row[pcount_at] = pend
        for i in range(1, n):
            bits = decisions.unmatched[d, (p + i) % n]
            for v in range(k):
                row[unm_at + (i - 1) * k + v] = (bits >> v) & 1
        score_plays(row, plays[:count], scores[:count], tables)
        best = scores[0]
        chosen = 0.0
        for i in range(count):
            if scores[i] > best:
                best = scores[i]
            if plays[i] == decisions.action[d]:
                chosen = scores[i]
        z = 0.0
        for i in range(count):
            z += np.exp((scores[i] - best) / temp)
        total += (chosen - best) / temp - np.log(z)
    return total
