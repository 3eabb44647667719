"""Scoring (R15), the winner (R16) and the env's reward formulas, each written once.

Plain Python over ints, lists or arrays, in the subset numba compiles: the AEC env and the
records call these functions directly, and the compiled engine (:mod:`cf_env.vector`) compiles the
very same functions with ``numba.njit``. None calls another (a compiled function can only call
compiled ones), so each is whole on its own.

``round_scores`` arguments are indexed ``[round][seat]`` (a list of lists or a 2-D array).
"""

from __future__ import annotations

__all__ = [
    "NO_NONZERO_ROUND", "REWARD_MODES", "REWARD_POINTS", "REWARD_RELATIVE", "REWARD_WIN", "r16_keys", "round_reward",
    "tile_points", "win_reward", "win_share", "winner_flags",
]

REWARD_MODES = ("win", "points", "relative")  #: the env's ``reward=`` values; a mode's code is its index
REWARD_WIN, REWARD_POINTS, REWARD_RELATIVE = 0, 1, 2
NO_NONZERO_ROUND = 1 << 60  #: R16 key of a player who scored zero in every round


def tile_points(low, high, double_blank_points):
    """R15: what a tile left in hand scores (its pips; the 0-0 scores ``double_blank_points``)."""
    if low == 0 and high == 0:
        return double_blank_points
    return low + high


def r16_keys(round_scores, num_players, rounds, totals, zero_rounds, lowest):
    """R16's tie-break keys of every seat over the first ``rounds`` rounds, written into the three
    ``num_players``-long outputs: total points, rounds scored at zero, lowest non-zero round score
    (``NO_NONZERO_ROUND`` when there is none)."""
    for p in range(num_players):
        total = 0
        zeros = 0
        low = NO_NONZERO_ROUND
        for q in range(rounds):
            v = round_scores[q][p]
            total += v
            if v == 0:
                zeros += 1
            elif v < low:
                low = v
        totals[p] = total
        zero_rounds[p] = zeros
        lowest[p] = low


def winner_flags(totals, zero_rounds, lowest, num_players, out):
    """R16 from :func:`r16_keys`' outputs: the lowest total wins; ties go to the most zero rounds,
    then to the lowest non-zero round; players still tied share. Writes 1 for each winner (0
    otherwise) into ``out`` and returns how many there are."""
    best = 0
    for p in range(1, num_players):
        if totals[p] != totals[best]:
            better = totals[p] < totals[best]
        elif zero_rounds[p] != zero_rounds[best]:
            better = zero_rounds[p] > zero_rounds[best]
        else:
            better = lowest[p] < lowest[best]
        if better:
            best = p
    count = 0
    for p in range(num_players):
        tied = totals[p] == totals[best] and zero_rounds[p] == zero_rounds[best] and lowest[p] == lowest[best]
        out[p] = 1 if tied else 0
        count += out[p]
    return count


def round_reward(points, round_total, num_players, mode, scale):
    """One seat's reward for one finished round under reward mode code ``mode``: ``points``
    ``-points / scale``; ``relative`` ``(mean of the others' points - points) / scale`` (zero-sum);
    ``win`` 0 (it pays only at the end, :func:`win_reward`)."""
    if mode == REWARD_POINTS:
        return -points / scale
    if mode == REWARD_RELATIVE:
        return ((round_total - points) / (num_players - 1) - points) / scale
    return 0.0


def win_share(is_winner, num_winners):
    """R16: a seat's share of the game's win (winners who tie share it): ``1 / num_winners`` for a
    winner, 0 otherwise. Win rates (evaluation, training statistics) and the search's value of a
    game's last round count wins this way."""
    return 1.0 / num_winners if is_winner else 0.0


def win_reward(share, num_players):
    """The ``win`` mode's end-of-game reward from a seat's :func:`win_share`: the share minus
    ``1 / n`` (zero-sum)."""
    return share - 1.0 / num_players
