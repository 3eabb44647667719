"""Worlds: the hidden tiles dealt to the opponents and the boneyard, consistent with an observation.

A searcher knows what its seat may know (docs/RULES.md R17): the own hand, the layout, the open
ends, the forced slots, the drawn tile, hand sizes, the boneyard's size, the pip values each
opponent failed to match, the round and the scores. :func:`read_observation` turns one
observation into the public state (game 0 of a batched-engine :class:`~cf_env.vector.State`,
the observer as seat 0, then clockwise) and the sampler's inputs (a :class:`World`); the compiled
:func:`deal_hidden` deals one world into a state; :func:`sample_worlds` does both for a test or a
notebook and returns the hands and boneyards it dealt.

**Constraints** (``infer=constraints``, and the proposals of ``infer=policy``). The observation's
``void`` and ``void_draws`` blocks say, per opponent and pip value, whether it has failed to match
that value this round and how many tiles it has drawn since its latest such failure, that
failure's own draw included. At the failure its hand held no tile with the value; every tile it
holds with it now was drawn since. The failure's own draw, if it carried the value, was playable
(the value was open or forced), so it was played or kept (R12). So while ``void_draws`` is 0 (a
forced pass) the hand holds no such tile, and while it is 1 at most the one kept tile. Worlds
forbid those values (a sampler may let a hand keep one such tile with probability
:attr:`World.keep`; the shipped agents never keep a playable tile). Values with more draws since
are left free.

**Policy inference** (``infer=policy``): each world is the likeliest-weighted of ``proposals``
constraint-respecting candidates under the opponent model, see :mod:`agents.search.inference`.
Hands are dealt from one shuffle, most constrained opponent first, each taking the first tiles it
may hold; a shuffle that leaves an opponent short is dealt again (``DEAL_TRIES`` tries), and when
the constraints cannot all hold (an opponent that did keep a tile, with ``keep`` 0) they are relaxed.

**Samplers of your own** (``infer=module:Class``, a :class:`WorldSampler`): the observation is
read with one of the shipped inferences first (the sampler's ``reads``), then the sampler changes
the :class:`World` before its worlds are dealt: which tiles each seat may hold (``forbid``), a
kept tile's chance (``keep``), and log-probabilities of where each hidden tile lies (``belief``),
by which each world is the likeliest-weighted of ``proposals`` candidates. The lab's learned
belief, its oracle and its shown-hands study are such samplers (``lab/samplers.py``).

Randomness in compiled code comes from a small xorshift64* generator whose state (one uint64 in
``Scratch.rs``) is seeded per decision from the caller's ``np.random.Generator``: no global random
state, and the same seed gives the same worlds.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
from numba import njit

from agents.baselines import HeuristicAgent, HeuristicTables, randint, uniform
from agents.search.inference import Decisions, log_likelihood, no_decisions, read_history
from agents.search.spec import INFER_MODES
from cf_env import ConfigError, ObservationEncoder, action_table
from cf_env.engine import Role
from cf_env.vector import State, copy_game

__all__ = ["DEAL_TRIES", "INFER_MODES", "Scratch", "SampledWorlds", "World", "WorldSampler", "belief_log_likelihood",
           "deal_hidden", "deal_once", "deal_pool", "dealing_order", "new_scratch", "randint", "read_observation",
           "sample_worlds", "uniform"]

DEAL_TRIES = 16  #: shuffles a world may take to meet every opponent's inferred constraints


class World(NamedTuple):
    """The sampler's inputs, read from one observation (seats observer-relative)."""

    pool: np.ndarray  #: (H,) int64 the hidden tiles: not in the own hand, not on the layout
    sizes: np.ndarray  #: (n,) int64 hand sizes, the observer first
    bone_n: int  #: tiles in the boneyard
    forbid: np.ndarray  #: (n, T) uint8 tiles each seat cannot hold (the inference; row 0 unused)
    order: np.ndarray  #: (n-1,) int64 the opponents in dealing order, most constrained first
    keep: float  #: chance an opponent holds one tile it is forbidden (a kept playable draw; 0 as read)
    decisions: Decisions  #: the opponents' plays this round (empty: no policy inference)
    temp: float  #: the opponent model's softmax temperature
    proposals: int  #: candidates dealt per world when worlds are weighed (by the plays or ``belief``)
    tables: HeuristicTables  #: the opponent model's scores (the heuristic's)
    #: a sampler's (n+1, T) float64 log-probabilities of each hidden tile's location (row p 1 .. n-1
    #: the opponent p, row n the boneyard), by which candidate worlds are weighed; (0, 0): none
    belief: np.ndarray


class WorldSampler(Protocol):
    """A world sampler of your own: ``search:infer=module:Class[:option=value...]`` makes it as
    ``Class(config, **options)`` (the spec's pairs that are not search parameters, values read as
    Python literals where they are one). Each decision the observation is read with the shipped
    inference named by the class attribute ``reads`` (``constraints``, ``policy`` or ``none``; by
    default ``constraints``), and the sampler returns the :class:`World` to deal from. A class
    attribute ``needs_hands = True`` marks a sampler that reads the observation's ``hands`` entry,
    the opponents' true hands: label collection shows them to such a teacher, and no player may
    use one (R17)."""

    def __call__(self, world: World, observation: dict) -> World: ...


class Scratch(NamedTuple):
    """Working arrays the compiled search reuses from decision to decision."""

    rs: np.ndarray  #: (1,) uint64 the xorshift64* state
    perm: np.ndarray  #: (T,) int64 the shuffle
    taken: np.ndarray  #: (T,) int64 which seat took each shuffled tile (1 + seat; 0: the boneyard)
    vals: np.ndarray  #: (n,) float64 each seat's value of a finished round
    held: np.ndarray  #: (n, T) uint8 hands walked back through the round (policy inference)
    row: np.ndarray  #: (D,) float32 an opponent's observation at an earlier play
    plays: np.ndarray  #: (K*K,) int64 its legal plays then
    scores: np.ndarray  #: (K*K,) float64 their scores
    best_hand: np.ndarray  #: (n, T) uint8 the candidate world kept so far
    best_bone: np.ndarray  #: (T,) int64 its boneyard


def new_scratch(num_players: int, num_tiles: int, obs_size: int = 1, k: int = 1) -> Scratch:
    n, t = num_players, num_tiles
    return Scratch(np.ones(1, np.uint64), np.zeros(t, np.int64), np.zeros(t, np.int64), np.zeros(n, np.float64),
                   np.zeros((n, t), np.uint8), np.zeros(obs_size, np.float32), np.zeros(k * k, np.int64),
                   np.zeros(k * k, np.float64), np.zeros((n, t), np.uint8), np.zeros(t, np.int64))


@njit(cache=True)
def deal_hidden(s, b, world, scratch):
    """One world into game ``b`` of state ``s``: one constraint-respecting deal (:func:`deal_once`),
    or under policy inference (``world.proposals`` > 1 and opponent plays to explain) the one of
    ``proposals`` such deals drawn with probability proportional to the likelihood of the
    opponents' plays (Gumbel-max over the log-likelihoods: sampling-importance-resampling); with a
    sampler's ``world.belief`` its log-probabilities join the likelihood (:func:`belief_log_likelihood`)."""
    use_belief = world.belief.shape[0] > 0
    if world.proposals <= 1 or (world.decisions.seat.shape[0] == 0 and not use_belief):
        deal_once(s, b, world, scratch)
        return
    best = -np.inf
    n, t_count = s.hand.shape[1], s.hand.shape[2]
    for _ in range(world.proposals):
        deal_once(s, b, world, scratch)
        ll = 0.0
        if world.decisions.seat.shape[0] > 0:
            ll = log_likelihood(s.hand[b], world.decisions, world.temp, world.tables, scratch.held, scratch.row,
                                scratch.plays, scratch.scores)
        if use_belief:
            ll += belief_log_likelihood(s, b, world)
        key = ll - np.log(-np.log(uniform(scratch.rs) * (1.0 - 2e-16) + 1e-16))
        if key > best:
            best = key
            for p in range(n):
                for t in range(t_count):
                    scratch.best_hand[p, t] = s.hand[b, p, t]
            for t in range(t_count):
                scratch.best_bone[t] = s.bone[b, t]
    for p in range(n):
        for t in range(t_count):
            s.hand[b, p, t] = scratch.best_hand[p, t]
    for t in range(t_count):
        s.bone[b, t] = scratch.best_bone[t]


@njit(cache=True)
def belief_log_likelihood(s, b, world):
    """``world.belief``'s log-probability of the world dealt into game ``b``: where it put each
    hidden tile, in an opponent's hand or the boneyard, as if the tiles were independent."""
    n, t_count = s.hand.shape[1], s.hand.shape[2]
    ll = 0.0
    for p in range(1, n):
        for t in range(t_count):
            if s.hand[b, p, t]:
                ll += world.belief[p, t]
    for i in range(t_count - world.bone_n, t_count):
        ll += world.belief[n, s.bone[b, i]]
    return ll


@njit(cache=True)
def deal_once(s, b, world, scratch):
    """One world into game ``b`` of state ``s``: ``world.pool`` dealt by :func:`deal_pool` into the
    hands of the seats in ``world.order`` (``world.sizes`` tiles each, avoiding their ``forbid``
    tiles except for one kept tile with probability ``world.keep``), the rest into the boneyard
    (its last ``bone_n`` positions)."""
    deal_pool(world.pool, world.sizes, world.forbid, world.order, world.keep, scratch.rs, scratch.perm, scratch.taken)
    for idx in range(world.order.shape[0]):
        s.hand[b, world.order[idx]] = 0
    pos = s.hand.shape[2] - world.bone_n
    for i in range(world.pool.shape[0]):
        if scratch.taken[i]:
            s.hand[b, scratch.taken[i] - 1, scratch.perm[i]] = 1
        else:
            s.bone[b, pos] = scratch.perm[i]
            pos += 1


@njit(cache=True)
def deal_pool(pool, sizes, forbid, order, keep, rs, perm, taken):
    """Deal the hidden tiles ``pool`` to groups under constraints, the one dealing every world
    sampler here uses (the search's worlds, :func:`deal_once`; OpenSpiel's resampler,
    :func:`agents.spiel.resampler`). ``pool`` is shuffled into ``perm`` (xorshift state ``rs``),
    then each group ``g`` in ``order`` takes the first ``sizes[g]`` shuffled tiles that are not
    ``forbid[g]`` (with probability ``keep``, first one forbidden tile: a kept playable draw).
    ``taken[i]`` is ``1 + g`` for the group that took ``perm[i]``, 0 for a tile left over. When a
    group runs out of allowed tiles the deal starts again with a new shuffle; after
    ``DEAL_TRIES`` tries the last one stands with the constraints relaxed where they fail, and
    the function returns True (False: every constraint holds)."""
    m = pool.shape[0]
    relaxed = False
    for _attempt in range(DEAL_TRIES):
        for i in range(m):
            perm[i] = pool[i]
            taken[i] = 0
        for i in range(m - 1, 0, -1):
            j = randint(rs, i + 1)
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
        relaxed = False
        for idx in range(order.shape[0]):
            g = order[idx]
            need = sizes[g]
            if keep > 0.0 and uniform(rs) < keep:
                for i in range(m):
                    if not taken[i] and forbid[g, perm[i]]:
                        taken[i] = g + 1
                        need -= 1
                        break
            for i in range(m):
                if need == 0:
                    break
                if not taken[i] and not forbid[g, perm[i]]:
                    taken[i] = g + 1
                    need -= 1
            for i in range(m):  # the constraints do not all hold in this deal: relax them for this group
                if need == 0:
                    break
                if not taken[i]:
                    relaxed = True
                    taken[i] = g + 1
                    need -= 1
        if not relaxed:
            break
    return relaxed


def read_observation(obs: np.ndarray, mask: np.ndarray, encoder: ObservationEncoder, state: State,
                     infer: str | bool = "constraints", history: np.ndarray | None = None, temp: float = 1.0,
                     proposals: int = 1, tables: HeuristicTables | None = None) -> World:
    """Write the public state of ``obs`` into game 0 of ``state`` (the observer is seat 0, then
    clockwise; the hidden hands empty) and return the sampler's inputs. ``infer``: ``none``
    ignores the opponents' failures to match (no tile forbidden); ``constraints`` forbids what
    they rule out; ``policy`` also weights worlds by the opponents' plays in ``history`` (the
    observation's history entry) under the heuristic softmax at ``temp`` with ``proposals``
    candidates per world (``tables``: the heuristic's kernel tables)."""
    sl, config = encoder.slices, encoder.config
    n, t, k = config.num_players, config.num_tiles, config.max_pip + 1
    hand = obs[sl["hand"]] > 0
    layout = obs[sl["layout"]] > 0
    state.hand[0] = 0
    state.hand[0, 0] = hand
    sizes = np.rint(obs[sl["hand_sizes"]]).astype(np.int64)
    state.hand_sizes[0] = sizes
    bone_n = int(round(float(obs[sl["boneyard"]][0])))
    state.bone_pos[0] = t - bone_n
    state.played[0] = layout
    state.open_ends[0] = np.rint(obs[sl["open_ends"]]).astype(np.int64)
    pend = int(round(float(obs[sl["pending_count"]][0])))
    state.pending[0] = pend
    state.pending_value[0] = int(np.argmax(obs[sl["pending_value"]])) if pend else 0
    state.pending_role[0] = int(Role.ARM) if obs[sl["pending_kind"]][0] > 0 else int(Role.TOE)
    state.current_player[0] = 0
    drawn = obs[sl["drawn"]]
    state.drawn[0] = int(np.argmax(drawn)) if drawn.any() else -1
    unmatched = obs[sl["unmatched"]].reshape(n - 1, k) > 0
    bits = (unmatched * (1 << np.arange(k))).sum(axis=1)
    state.unmatched[0, 0] = 0
    state.unmatched[0, 1:] = bits
    # the memory blocks, so that rollouts' observations (a network's, the heuristic's) match the env's
    played = obs[sl["played"]].reshape(n, t) > 0
    state.owner[0] = -1
    for p in range(n):
        state.owner[0, played[p]] = p
    state.draws[0] = np.rint(obs[sl["draws"]]).astype(np.int64)
    void = obs[sl["void"]].reshape(n - 1, k) > 0
    void_draws = np.rint(obs[sl["void_draws"]].reshape(n - 1, k)).astype(np.int64)
    state.void_at[0] = 0
    state.void_at[0, 1:] = np.where(void, state.draws[0, 1:, None] + 1 - void_draws, 0)
    state.legal[0] = mask != 0
    pool = np.flatnonzero(~hand & ~layout).astype(np.int64)
    if pool.size != sizes[1:].sum() + bone_n:
        raise ConfigError(f"the observation's hidden tiles ({pool.size}) do not match the opponents' hands and the "
                         f"boneyard ({sizes[1:].sum()} + {bone_n}): is it an observation of {config}?")
    if isinstance(infer, bool):  # the earlier flag: True was the constraints, False none
        infer = "constraints" if infer else "none"
    if infer not in INFER_MODES:
        raise ConfigError(f"infer must be one of {INFER_MODES}, got {infer!r}")
    forbid = np.zeros((n, t), np.uint8)
    if infer != "none":
        table = action_table(config.max_pip)
        tile_lo, tile_hi = np.asarray(table.tile_low), np.asarray(table.tile_high)
        for i in range(1, n):
            values = np.flatnonzero(void[i - 1] & (void_draws[i - 1] <= 1))
            if values.size:
                forbid[i] = np.isin(tile_lo, values) | np.isin(tile_hi, values)
    order = dealing_order(forbid, pool)
    if tables is None:
        tables = HeuristicAgent(config).kernel_tables
    policy = infer == "policy" and history is not None and proposals > 1
    decisions = read_history(history, encoder) if policy and history is not None else no_decisions(n, config.max_pip)
    return World(pool, sizes, bone_n, forbid, order, 0.0, decisions, float(temp), int(proposals), tables,
                 np.zeros((0, 0)))


def dealing_order(forbid: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The opponents (rows ``1 .. n-1`` of ``forbid``) in the order their hands are dealt: most
    hidden tiles (``pool``) forbidden first, so the tightest constraints are met before the pool
    thins."""
    constrained = forbid[:, pool].sum(axis=1)
    return np.array(sorted(range(1, forbid.shape[0]), key=lambda p: -int(constrained[p])), dtype=np.int64)


class SampledWorlds(NamedTuple):
    """What :func:`sample_worlds` dealt, seats observer-relative (0 = the observer)."""

    hands: np.ndarray  #: (N, n, T) bool: row 0 the observer's own hand in every world
    boneyards: np.ndarray  #: (N, bone_n) int64 tile indices, the next draw first
    world: World  #: the sampler's inputs (the hidden pool, the forbidden tiles, ...)


def sample_worlds(observation: dict, n: int, rng: np.random.Generator, encoder: ObservationEncoder,
                  infer: str = "constraints", temp: float = 1.0, proposals: int = 1,
                  sampler: WorldSampler | None = None) -> SampledWorlds:
    """``n`` worlds consistent with ``observation`` (an observation dict of ``encoder``'s rules;
    its ``history`` entry for ``infer="policy"``), dealt as the search agents deal them, from
    ``rng``; with ``sampler`` (a :class:`WorldSampler`) the world it makes of the one read."""
    from cf_env.vector import make_consts, new_state

    config = encoder.config
    state = new_state(make_consts(config), 1)
    obs = np.asarray(observation["observation"], dtype=np.float32)
    world = read_observation(obs, np.asarray(observation["action_mask"]), encoder, state, infer,
                             observation.get("history"), temp, proposals)
    if sampler is not None:
        world = sampler(world, observation)
    scratch = new_scratch(config.num_players, config.num_tiles, encoder.size, config.max_pip + 1)
    scratch.rs[0] = np.uint64(rng.integers(1, 2**63))
    work = new_state(make_consts(config), 1)
    hands = np.zeros((n, config.num_players, config.num_tiles), bool)
    boneyards = np.zeros((n, world.bone_n), np.int64)
    for i in range(n):
        copy_game(state, 0, work, 0)
        deal_hidden(work, 0, world, scratch)
        hands[i] = work.hand[0] > 0
        boneyards[i] = work.bone[0, config.num_tiles - world.bone_n:]
    return SampledWorlds(hands, boneyards, world)
