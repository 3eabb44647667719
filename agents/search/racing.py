"""Racing PIMC: stop spending worlds on actions that are clearly worse (``search:race=Z``).

Plain PIMC tries every legal action in every one of ``sims`` worlds. Most decisions are settled
long before that: one action's value leads the others' by much more than the worlds' noise. A
racing search plays the worlds in blocks of :data:`BLOCK` (the first block :data:`FIRST`) and,
after each block, compares the leader with every other action still running on the worlds both
have seen (the same worlds for every action, so the comparison is paired and its noise small):

* an action is **dropped as worse** when the leader's mean advantage over it exceeds ``z``
  standard errors of the paired differences;
* it is **dropped as tied** when the advantage is below ``tie`` (in the value's units, see
  :mod:`agents.search.values`) with the same confidence: the two are equally good to within
  ``tie`` and further worlds would only decide noise.

The search ends when one action is left or ``sims`` worlds are spent. A dropped action keeps the
mean of the worlds it saw, so the per-action values (``last_search["scores"]``, the soft targets
of expert iteration) stay unbiased, each over its own number of worlds
(``last_search["worlds"]``). This is successive elimination for best-arm identification
(Even-Dar, Mannor & Mansour, JMLR 2006) with a paired t-statistic and an indifference zone.
Measured (lab/results/distillation.md): at ``sims=256``, ``race=2`` agrees with plain ``sims=256``
as often as plain ``sims=256`` agrees with itself, with about a third of the rollouts.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["BLOCK", "FIRST", "drop_settled"]

FIRST = 16  #: worlds before the first comparison
BLOCK = 8  #: worlds between comparisons


@njit(cache=True)
def drop_settled(values, worlds, active, z, tie):
    """Drop (``active[i] = False``) every running action that the leader beats by more than ``z``
    standard errors, or that it beats by less than ``tie`` with that confidence, from
    ``values[:worlds]`` (each running action's value in each world so far). Returns the leader's index."""
    num = active.shape[0]
    leader = -1
    best = -math.inf
    for i in range(num):
        if active[i]:
            mean = 0.0
            for w in range(worlds):
                mean += values[w, i]
            mean /= max(worlds, 1)
            if mean > best:
                best = mean
                leader = i
    if worlds < 2:
        return leader
    for i in range(num):
        if i == leader or not active[i]:
            continue
        total = 0.0
        for w in range(worlds):
            total += values[w, leader] - values[w, i]
        gap = total / worlds
        square = 0.0
        for w in range(worlds):
            d = values[w, leader] - values[w, i] - gap
            square += d * d
        margin = z * math.sqrt(square / (worlds - 1)) / math.sqrt(worlds)
        if gap - margin > 0.0 or gap + margin < tie:
            active[i] = False
    return leader
