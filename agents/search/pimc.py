"""PIMC (Perfect-Information Monte Carlo), compiled: every legal action is tried in every sampled
world (the same worlds for every action); the searcher plays the action with the best mean value.

:func:`pimc` rolls out with a compiled policy. With a checkpoint as the rollout policy, the
worlds of a chunk are laid out by :func:`prepare_worlds` (game ``w * L + i``: world ``w`` after
action ``i``) and stepped in lockstep outside compiled code, one batched forward pass per step
(:func:`observe_rows`, :func:`apply_rows`), then scored by :func:`score_rows`; with ``others``
a compiled policy plays the opponents' seats between the network's steps (:func:`play_others`).
"""

from __future__ import annotations

from numba import njit

from agents.search.racing import BLOCK, FIRST, drop_settled
from agents.search.rollout import choose, rollout
from agents.search.values import round_value
from agents.search.worlds import deal_hidden
from cf_env.vector import GAME0, GAME1, apply_action, copy_game, njit_unrefcounted, write_observation

__all__ = ["apply_rows", "observe_rows", "pimc", "pimc_block", "pimc_race", "play_others", "prepare_worlds",
           "score_rows"]


@njit_unrefcounted(cache=True)
def pimc(tmpl, s, c, actions, worlds, sums, counts, world, scratch, policy, valuation):
    """``worlds`` worlds sampled from ``world`` (the public state is game 0 of ``tmpl``); in each,
    every action of ``actions`` played and rolled out, its value for seat 0 added to ``sums`` and
    ``counts``. Returns the decisions taken in the rollouts."""
    steps = 0
    for _ in range(worlds):
        copy_game(tmpl, GAME0, s, GAME0)
        deal_hidden(s, GAME0, world, scratch)
        for i in range(actions.shape[0]):
            copy_game(s, GAME0, s, GAME1)
            apply_action(GAME1, actions[i], s, c)
            steps += 1 + rollout(s, c, GAME1, policy, scratch.rs)
            sums[i] += round_value(s, GAME1, c.n, valuation, 0)
            counts[i] += 1
    return steps


@njit(cache=True)
def prepare_worlds(tmpl, s, c, actions, worlds, world, scratch):
    """Games ``w * L + i`` of ``s`` (``L`` actions): world ``w`` after action ``i``, for rollouts
    played in lockstep by a policy outside the compiled code."""
    num = actions.shape[0]
    for w in range(worlds):
        base = w * num
        copy_game(tmpl, GAME0, s, base)
        deal_hidden(s, base, world, scratch)
        for i in range(num - 1, -1, -1):  # the world's own game last: it is the others' source
            if i:
                copy_game(s, base, s, base + i)
            apply_action(base + i, actions[i], s, c)


@njit(cache=True)
def observe_rows(s, c, o, rows, obs, mask):
    """The observation and legal mask of each game in ``rows`` into its row of ``obs``/``mask``."""
    for j in range(rows.shape[0]):
        b = rows[j]
        write_observation(b, s, c, o, obs)
        for a in range(mask.shape[1]):
            mask[b, a] = s.legal[b, a]


@njit(cache=True)
def apply_rows(s, c, rows, actions):
    """``actions[j]`` in game ``rows[j]``."""
    for j in range(rows.shape[0]):
        apply_action(rows[j], actions[j], s, c)


@njit(cache=True)
def play_others(s, c, rows, policy, rs):
    """Each game of ``rows`` played on by the compiled ``policy`` while a seat other than 0 (the
    searcher's) is to move and its round goes on; returns the decisions taken. Seat 0's moves are
    the caller's (a network's, batched)."""
    steps = 0
    for j in range(rows.shape[0]):
        b = rows[j]
        for _ in range(1 << 20):  # bounded: every round ends
            if s.round_index[b] != 0 or s.current_player[b] <= 0:
                break
            apply_action(b, choose(s, c, b, policy, rs), s, c)
            steps += 1
    return steps


@njit(cache=True)
def score_rows(s, c, count, num, sums, counts, valuation):
    """Seat 0's value of each of the first ``count`` games (laid out by :func:`prepare_worlds`)
    added to its action's ``sums`` and ``counts``."""
    for b in range(count):
        sums[b % num] += round_value(s, b, c.n, valuation, 0)
        counts[b % num] += 1


@njit_unrefcounted(cache=True)
def pimc_block(tmpl, s, c, actions, active, first, count, values, world, scratch, policy, valuation):
    """Worlds ``first .. first + count - 1``, each sampled from ``world`` (the public state is game 0
    of ``tmpl``): in each, every action ``i`` of ``actions`` with ``active[i]`` played and rolled
    out, its value for seat 0 written to ``values[w, i]`` (the others left as they are). The
    racing teacher (:mod:`agents.search.teacher`) calls it block by block, dropping actions that
    are clearly worse. Returns the decisions taken in the rollouts."""
    steps = 0
    for w in range(first, first + count):
        copy_game(tmpl, GAME0, s, GAME0)
        deal_hidden(s, GAME0, world, scratch)
        for i in range(actions.shape[0]):
            if not active[i]:
                continue
            copy_game(s, GAME0, s, GAME1)
            apply_action(GAME1, actions[i], s, c)
            steps += 1 + rollout(s, c, GAME1, policy, scratch.rs)
            values[w, i] = round_value(s, GAME1, c.n, valuation, 0)
    return steps


@njit_unrefcounted(cache=True)
def pimc_race(tmpl, s, c, actions, first, limit, race, board, world, scratch, policy, valuation):
    """Racing PIMC (:mod:`agents.search.racing`, ``race`` = (z, tie)) from ``first`` worlds played
    to at most ``limit``: blocks of worlds (:func:`pimc_block`), each followed by dropping the
    settled actions. ``board`` is the race's state, updated in place: ``(values, active, tried)``,
    each world's value of each action, the actions still running, and how many worlds each was
    tried in. Returns (worlds played in all, rollout decisions of this call); the race is over
    when one action is left."""
    values, active, tried = board
    done = first
    steps = 0
    while done < limit:
        running = 0
        for i in range(active.shape[0]):
            running += active[i]
        if running <= 1:
            break
        block = min(FIRST if done == 0 else BLOCK, limit - done)
        steps += pimc_block(tmpl, s, c, actions, active, done, block, values, world, scratch, policy, valuation)
        for i in range(active.shape[0]):
            if active[i]:
                tried[i] += block
        done += block
        drop_settled(values, done, active, race[0], race[1])
    return done, steps
