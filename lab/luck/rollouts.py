"""Draw terms of the luck correction valued by compiled rollouts (:mod:`lab.luck.value`).

Before a draw (R12, ``draw_rule`` "one"), every tile the boneyard holds (or a sample of them) is
tried as the tile drawn, and the round is played out from there ``rollouts`` times by the seats'
rollout policies (the search agents' compiled policies: the heuristic, greedy, random), the rest
of the boneyard in an order shuffled afresh for each rollout and shared by every tile tried
(common random numbers: what differs between two tiles' rollouts is the tile). A draw's term is
the mean value of its own tile's rollouts less the mean over the tiles tried; the tile drawn is
uniform over the boneyard and the orders are drawn independently of it, so the term's
expectation is exactly zero.

:func:`replay_draw_rollouts` plays a finished game again from its deals on the batched engine's
kernels (:mod:`cf_env.vector`) and values each of its draws so; :func:`option_points` values the
draw about to be made in one game of a batch (the targets a draw-value network
fits a network to).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.search.rollout import choose
from agents.search.worlds import randint
from cf_env.vector import GAME0, GAME1, apply_action, apply_action_inline, copy_game

__all__ = ["option_points", "replay_draw_rollouts"]


@njit(cache=True)
def _shuffle(x, rs):
    for i in range(x.shape[0] - 1, 0, -1):
        j = randint(rs, i + 1)
        x[i], x[j] = x[j], x[i]


@njit(cache=True)
def option_points(src, b, dst, w, c, options, rollouts, kinds, policies, rs, points, wins):
    """The draw about to be made in game ``b`` of ``src``: each tile of ``options`` drawn, then
    the round played out ``rollouts`` times in game ``w`` of ``dst`` (``kinds[p]`` indexes
    ``policies`` for seat ``p``). Writes each seat's points in the round to ``points[j, k]`` and,
    when the round ends the game, the seats' win shares (R16) to ``wins[j, k]`` (else 0)."""
    kk = c.k * c.k
    n, t_count = c.n, c.t_count
    r = src.round_index[b]
    pos = src.bone_pos[b]
    m = t_count - pos
    order = np.empty(m, np.int64)
    rest = np.empty(m, np.int64)
    dst.deals[w] = src.deals[b]  # a round that ends deals the next one (and a game that ends, a new one)
    dst.next_deals[w] = src.deals[b]
    for k in range(rollouts):
        for j in range(m):
            order[j] = src.bone[b, pos + j]
        _shuffle(order, rs)
        for j in range(options.shape[0]):
            o = options[j]
            q = 0
            for x in range(m):
                if order[x] != o:
                    rest[q] = order[x]
                    q += 1
            copy_game(src, b, dst, w)
            dst.bone[w, pos] = o
            for x in range(m - 1):
                dst.bone[w, pos + 1 + x] = rest[x]
            apply_action(w, kk, dst, c)
            for _ in range(1 << 20):  # every round ends
                if dst.round_index[w] != r or dst.done[w]:
                    break
                apply_action_inline(w, choose(dst, c, w, policies[kinds[dst.current_player[w]]], rs), dst, c)
            if dst.done[w]:
                winners = 0
                for p in range(n):
                    winners += dst.final_winners[w, p]
                for p in range(n):
                    points[j, k, p] = dst.final_totals[w, p] - src.totals[b, p]
                    wins[j, k, p] = dst.final_winners[w, p] / winners
            else:
                for p in range(n):
                    points[j, k, p] = dst.totals[w, p] - src.totals[b, p]
                    wins[j, k, p] = 0.0


@njit(cache=True)
def replay_draw_rollouts(s, c, actions, rollouts, samples, kinds, policies, rs, out):
    """Replay ``actions`` in game 0 of ``s`` (set up at the game's start, game 1 with the same
    deals) and, before each draw, value tiles by :func:`option_points` in game 1: every tile of
    the boneyard in tile order (the drawn one among them), or with ``samples`` > 0 and more tiles
    than that, ``samples`` of them drawn uniformly with replacement and then the drawn one.

    ``out`` holds what is written per draw ``d``, six arrays ``(draw_round, draw_totals, mean_count,
    taken_at, points, wins)``: ``draw_round[d]``, the seats' totals before its round ``draw_totals[d]``, the
    rollouts' ``points[d]`` and ``wins[d]`` of each tile tried, how many of them (the first ones)
    the expectation averages over ``mean_count[d]``, and where the drawn tile's are
    ``taken_at[d]``. The tiles tried and the rollouts' random numbers depend on the boneyard's
    contents, never on its order, so a term's expectation over the tile drawn is zero: exactly
    when every tile is tried (the drawn tile's values are its own row's), and over the sampler's
    random numbers when tiles are sampled. Returns the number of draws."""
    draw_round, draw_totals, mean_count, taken_at, points, wins = out
    kk = c.k * c.k
    tried = np.empty(c.t_count + 1, np.int64)
    d = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        if a == kk:
            pos = s.bone_pos[0]
            m = c.t_count - pos
            pile = np.sort(s.bone[0, pos:])
            taken = s.bone[0, pos]
            if samples > 0 and m > samples:
                for j in range(samples):
                    tried[j] = pile[randint(rs, m)]
                tried[samples] = taken
                mean_count[d] = samples
                taken_at[d] = samples
                count = samples + 1
            else:
                tried[:m] = pile
                mean_count[d] = m
                count = m
                for j in range(m):
                    if pile[j] == taken:
                        taken_at[d] = j
            draw_round[d] = s.round_index[0]
            draw_totals[d] = s.totals[0]
            option_points(s, GAME0, s, GAME1, c, tried[:count], rollouts, kinds, policies, rs, points[d], wins[d])
            d += 1
        apply_action(GAME0, a, s, c)
    return d
