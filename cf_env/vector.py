"""Batched Chicken Foot: B independent games of one ``RulesConfig`` stepped together.

The rules (docs/RULES.md R1-R17) as arrays stepped by numba-compiled loops over the games: the one
rules engine, which the AEC env (:mod:`cf_env.core`, one game) and :class:`cf_env.Game` step too
(same action ids, same observation layout, :mod:`cf_env.observation`, same reward definitions). Each call to :meth:`VectorGame.step`
is one decision in every game, by that game's current player::

    vg = VectorGame(RulesConfig(), num_games=4096, reward="relative", seed=0)
    obs, mask, seat = vg.reset(seed=0)
    for _ in range(1000):
        actions = random_legal(mask, rng)                 # any policy over (obs, mask)
        obs, mask, seat, rewards, done = vg.step(actions)

``rewards`` is ``(B, num_players)`` float64 in absolute seat order: what every seat of every game
earned on this step (round ends and the game's end). A game that ends is recorded in
``vg.final_totals`` / ``vg.final_winners`` (valid where ``done``) and restarts at once with a new
deal; the ``obs``/``mask``/``seat`` returned for it are the first decision of the new game.
Rewards that arise while a new game is set up (a round that ends before anyone decides, possible
only in degenerate configurations) are reported separately in ``vg.reset_rewards``. A new game
that ends before anyone decides at all (1-tile hands: the holder of the starting double goes out
placing it) is void: nobody played it, it reports nothing, and it is dealt again from the
generator at once; ``vg.void_games`` counts them per game slot since :meth:`reset`. Every loop in
the kernels is bounded; rules under which no deal ever reaches a decision raise ``ConfigError``.

Randomness: one ``np.random.Generator`` (from ``seed``) shuffles every deal; each game keeps the
deals of its current and of its next game, drawn in game order, so results do not depend on
thread scheduling. Scripted deals (the engine's per-round format) are accepted per game by
:meth:`reset`. The layout's geometry (which arm or toe each tile lies on) is not kept here:
:class:`cf_env.Game`, one game of this engine, follows it for render and replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover - numba is a core dependency; keep a readable error
    numba = None  # type: ignore[assignment]  # numba's module object, or None without it

from cf_env.engine import IllegalActionError, Role, RulesConfig, action_table, scoring, tile_index, validate_deals
from cf_env.engine.errors import ConfigError, ResetNeededError
from cf_env.engine.records import deal_order
from cf_env.engine.scoring import REWARD_MODES, REWARD_WIN
from cf_env.engine.state import TOES_PER_DOUBLE
from cf_env.observation import SCORE_FACTOR, ObservationEncoder

__all__ = ["GAME0", "GAME1", "Consts", "Offsets", "State", "VectorGame", "apply_action", "apply_action_inline", "copy_game",
           "COUNTED_OPTIONS", "make_consts", "new_state", "njit_unrefcounted", "observation_offsets", "random_legal_actions",
           "write_observation"]

PARALLEL_MIN_GAMES = 64  # VectorGame steps this many games or more in numba's threads (smaller: one thread)
MAX_VOID_DEALS = 10_000  # deals in a row that may end before the first decision before the rules are refused
ROLE_ARM, ROLE_TOE = int(Role.ARM), int(Role.TOE)
# Arguments that compiled callers pass as constants, typed as numpy scalars: numba compiles a kernel
# once per argument signature, and a literal ``0``, ``1``, ``-1`` or ``True`` (or prange's unsigned
# index) is a signature of its own, each compiling the engine again (what that cost: the
# repository's lab/results/speed.md). Callers write ``apply_action(GAME1, a, s, c)``, not
# ``apply_action(1, a, s, c)``.
GAME0, GAME1 = np.int64(0), np.int64(1)  #: game slots 0 and 1 of a state, as the kernels' index type
NOBODY = np.int64(-1)  #: ``_advance``: no next player (the round ends)
IN_RESET, NOT_RESET = np.bool_(True), np.bool_(False)


_HAS_NRT_OPTION = numba is not None and hasattr(numba.core.cpu.CPUTargetOptions, "_nrt")
# numba compiles a function called from compiled code with its caller's ``_nrt`` unless the
# function sets it: the ones that allocate (or assign whole rows) and may be called from an
# :func:`njit_unrefcounted` kernel set it on, so that a fresh cache compiles them the same way.
COUNTED_OPTIONS: dict[str, Any] = {"_nrt": True} if _HAS_NRT_OPTION else {}


def njit_unrefcounted(**options: Any) -> Any:
    """``numba.njit`` without numba's reference counting (its ``_nrt`` option off), for a hot loop
    that allocates nothing. Each view or attribute of an array that compiled code takes (a row of a
    State's array, an array of a NamedTuple) is an ``NRT_incref``/``NRT_decref`` pair of calls with
    an atomic add each, and the refcount pruning pass cannot drop them across branches: a heuristic
    rollout compiled with them had 872 such call sites, and they were about 60% of its time per
    decision. Without them the code is the same (a compiled rollout plays the same decisions, to the
    bit); code that allocates an array fails to compile this way, loudly. numba compiles what such a
    kernel calls (unless inlined) without counting too, unless the callee sets ``_nrt`` itself: one
    that allocates must (``COUNTED_OPTIONS``), or a fresh cache fails to compile it ("NRT required
    but not enabled"). ``_nrt`` is numba's developer flag (in its target options since 0.19); a
    numba without it gets a plain ``njit``."""
    if _HAS_NRT_OPTION:
        return njit(_nrt=False, **options)  # type: ignore[call-overload]  # numba's stubs omit the developer flag
    return njit(**options)  # pragma: no cover - a numba without the flag


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of an int8 mask ``(B, A)``: the ``floor(u *
    legal)``-th legal action of each row for one uniform ``u`` per row (compiled: a random policy
    costs a tenth of a batched step, where numpy's noise-times-mask argmax cost half of one)."""
    mask = np.ascontiguousarray(mask, dtype=np.int8)
    if mask.ndim != 2:
        raise ValueError(f"expected a mask of shape (B, A), got {mask.shape}")
    out = np.empty(mask.shape[0], np.int64)
    _pick_legal(mask, rng.random((mask.shape[0],)), out)
    return out


@njit(cache=True)
def _pick_legal(mask: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    for b in range(mask.shape[0]):
        legal = 0
        for a in range(mask.shape[1]):
            legal += mask[b, a] != 0
        k = int(u[b] * legal)
        out[b] = -1  # a row with no legal action
        for a in range(mask.shape[1]):
            if mask[b, a] != 0:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


class State(NamedTuple):
    """The batched games' arrays, first axis the game ``b`` (``VectorGame`` keeps them as attributes)."""

    hand: np.ndarray  #: (B, n, T) uint8, 1 where seat p holds tile t
    hand_sizes: np.ndarray  #: (B, n) tiles in each hand
    bone: np.ndarray  #: (B, T) this round's deal: hands in seat order, then the boneyard top first
    bone_pos: np.ndarray  #: (B,) index in ``bone`` of the boneyard's top tile
    played: np.ndarray  #: (B, T) uint8, 1 where a tile is on this round's layout
    open_ends: np.ndarray  #: (B, K) free open ends showing each pip value
    pending: np.ndarray  #: (B,) forced slots still empty (R9 arms, R10 toes)
    pending_value: np.ndarray  #: (B,) the value they need
    pending_role: np.ndarray  #: (B,) ``Role.ARM`` or ``Role.TOE``
    current_player: np.ndarray  #: (B,) seat to decide; -1 while a void game waits for a new deal
    drawn: np.ndarray  #: (B,) tile just drawn and playable (R12), -1 if none
    unmatched: np.ndarray  #: (B, n) bitmask of values each seat could not match (R17)
    owner: np.ndarray  #: (B, T) seat that placed each tile on this round's layout, -1 if none
    draws: np.ndarray  #: (B, n) tiles each seat drew this round (R6 search draws included)
    void_at: np.ndarray  #: (B, n, K) 1 + draws before each seat's latest failure facing a value; 0 if none
    round_index: np.ndarray  #: (B,) round index
    totals: np.ndarray  #: (B, n) points so far
    round_scores: np.ndarray  #: (B, rounds, n)
    starter: np.ndarray  #: (B, rounds) seat that placed each round's starting double (R6)
    search_draws: np.ndarray  #: (B, rounds) tiles drawn in each round's R6 search for it
    end_hands: np.ndarray  #: (B, rounds, n, T) uint8, each seat's hand when each finished round ended
    legal: np.ndarray  #: (B, A) uint8 legal actions of ``current_player``
    deals: np.ndarray  #: (B, rounds, T) this game's deals
    next_deals: np.ndarray  #: (B, rounds, T) the next game's deals
    need_deals: np.ndarray  #: (B,) uint8, 1 once ``next_deals`` was used and must be refilled
    done: np.ndarray  #: (B,) uint8, 1 where a game ended on this step
    final_totals: np.ndarray  #: (B, n) totals of the game that ended
    final_winners: np.ndarray  #: (B, n) uint8 winners (R16) of the game that ended
    rewards: np.ndarray  #: (B, n) float64 rewards of this step
    reset_rewards: np.ndarray  #: (B, n) float64 rewards of rounds that ended while a new game was set up


class Consts(NamedTuple):
    """One rules configuration, as the kernels read it."""

    n: int  #: players
    k: int  #: max_pip + 1
    t_count: int  #: tiles in the set
    h: int  #: hand size
    rounds: int
    arms: int  #: centre arms (R9)
    until: bool  #: draw_rule == "until_playable" (R12)
    dbp: int  #: double_blank_points (R15)
    reward_code: int  #: index in ``scoring.REWARD_MODES``
    scale: float  #: points_scale
    max_pip: int
    tile_lo: np.ndarray  #: (T,) low pip of each tile (the action table's)
    tile_hi: np.ndarray  #: (T,) high pip of each tile
    tile_of_action: np.ndarray  #: (K*K,) tile index of each play
    restart: bool  #: a game that ends starts the next one from ``next_deals`` (else it stays over, ``current_player`` -1)


class Offsets(NamedTuple):
    """Where each observation block starts (:class:`cf_env.observation.ObservationEncoder`)."""

    hand: int
    layout: int
    drawn: int
    pending_value: int
    pending_kind: int
    unmatched: int
    played: int
    void: int
    open_ends: int
    pending_count: int
    hand_sizes: int
    boneyard: int
    round: int
    draws: int
    void_draws: int
    scores: int


if numba is not None:
    # the rules' formulas, compiled from the one plain-Python copy in cf_env.engine.scoring
    _tile_points = njit(cache=True, inline="always")(scoring.tile_points)
    _r16_keys = njit(cache=True)(scoring.r16_keys)
    _winner_flags = njit(cache=True)(scoring.winner_flags)
    _round_reward = njit(cache=True, inline="always")(scoring.round_reward)
    _win_share = njit(cache=True, inline="always")(scoring.win_share)
    _tile_index = njit(cache=True, inline="always")(tile_index)
    _win_reward = njit(cache=True, inline="always")(scoring.win_reward)

    @njit(cache=True, inline="always")
    def _open_values(s, b):
        if s.pending[b] > 0:
            return np.int64(1) << s.pending_value[b]
        vals = np.int64(0)
        for v in range(s.open_ends.shape[1]):
            if s.open_ends[b, v] > 0:
                vals |= np.int64(1) << v
        return vals

    @njit(cache=True, inline="always")
    def _plays_of(s, c, b, p, vals, write):
        """Mark in ``legal[b]`` (when ``write``) every play of ``p``'s hand on the values in
        ``vals``; return whether there is one."""
        found = False
        for t in range(c.t_count):
            if s.hand[b, p, t]:
                lo = c.tile_lo[t]
                hi = c.tile_hi[t]
                if (vals >> lo) & 1:
                    found = True
                    if write:
                        s.legal[b, lo * c.k + hi] = 1
                    else:
                        return True
                if lo != hi and (vals >> hi) & 1:
                    found = True
                    if write:
                        s.legal[b, hi * c.k + lo] = 1
                    else:
                        return True
        return found

    @njit(cache=True)
    def _start_round(b, s, c):
        """R4-R7 for game ``b``: deal round ``round_index[b]``, find and place the starting double.
        Returns the first player to decide, or -1 when the holder went out placing it."""
        n, h = c.n, c.h
        hand, count = s.hand, s.hand_sizes
        r = s.round_index[b]
        for p in range(n):
            for t in range(c.t_count):
                hand[b, p, t] = 0
            count[b, p] = h
            s.unmatched[b, p] = 0
            s.draws[b, p] = 0
            for v in range(c.k):
                s.void_at[b, p, v] = 0
        for t in range(c.t_count):
            s.played[b, t] = 0
            s.owner[b, t] = -1
            s.bone[b, t] = s.deals[b, r, t]
        for v in range(c.k):
            s.open_ends[b, v] = 0
        for i in range(n):
            for j in range(h):
                hand[b, i, s.deals[b, r, i * h + j]] = 1
        s.bone_pos[b] = n * h
        s.drawn[b] = -1
        start = c.max_pip - r
        st = _tile_index(start, start)
        holder = -1
        for p in range(n):
            if hand[b, p, st]:
                holder = p
                break
        if holder < 0:  # R6: draw in turn from the dealer's left until someone draws it
            p = (r % n + 1) % n
            while s.bone_pos[b] < c.t_count:  # the double is in the boneyard, so this ends by its last tile
                t = s.bone[b, s.bone_pos[b]]
                s.bone_pos[b] += 1
                hand[b, p, t] = 1
                count[b, p] += 1
                s.draws[b, p] += 1
                if t == st:
                    holder = p
                    break
                p = (p + 1) % n
        hand[b, holder, st] = 0
        count[b, holder] -= 1
        s.played[b, st] = 1
        s.owner[b, st] = holder
        s.starter[b, r] = holder
        s.search_draws[b, r] = s.bone_pos[b] - n * h
        s.pending[b] = c.arms  # R9
        s.pending_value[b] = start
        s.pending_role[b] = ROLE_ARM
        if count[b, holder] == 0:
            return -1
        return (holder + 1) % n

    @njit(cache=True, **COUNTED_OPTIONS)  # it allocates (R16's keys): counted even when a search kernel calls it
    def _finish_round(b, s, c, rew, record):
        """R14-R16: score the round into ``rew[b]``; return True when the game is over (its result
        goes to ``final_totals`` / ``final_winners`` only when ``record``)."""
        n = c.n
        r = s.round_index[b]
        total = 0
        for p in range(n):
            pts = 0
            for t in range(c.t_count):
                s.end_hands[b, r, p, t] = s.hand[b, p, t]
                if s.hand[b, p, t]:
                    pts += _tile_points(c.tile_lo[t], c.tile_hi[t], c.dbp)
            s.round_scores[b, r, p] = pts
            s.totals[b, p] += pts
            total += pts
        for p in range(n):
            rew[b, p] += _round_reward(s.round_scores[b, r, p], total, n, c.reward_code, c.scale)
        if r + 1 < c.rounds:
            s.round_index[b] = r + 1
            return False
        if not record:
            return True
        totals = np.zeros(n, np.int64)
        zeros = np.zeros(n, np.int64)
        lowest = np.zeros(n, np.int64)
        _r16_keys(s.round_scores[b], n, c.rounds, totals, zeros, lowest)
        nwin = _winner_flags(totals, zeros, lowest, n, s.final_winners[b])
        for p in range(n):
            s.final_totals[b, p] = s.totals[b, p]
            if c.reward_code == REWARD_WIN:
                rew[b, p] += _win_reward(_win_share(s.final_winners[b, p] == 1, nwin), n)
        return True

    @njit(cache=True)
    def _new_game(b, s, c):
        for r in range(c.rounds):
            for t in range(s.deals.shape[2]):
                s.deals[b, r, t] = s.next_deals[b, r, t]
            for p in range(c.n):
                s.round_scores[b, r, p] = 0
        for p in range(c.n):
            s.totals[b, p] = 0
        s.round_index[b] = 0
        s.need_deals[b] = 1

    @njit(cache=True, inline="always")
    def _advance(b, q, s, c, in_reset):
        """Hand the decision to ``q`` (or end the round when ``q`` is -1 / nobody can play),
        starting rounds and games as needed; fills ``legal[b]``. Inlined into :func:`_apply`;
        :func:`_advance_call` is the call."""
        legal = s.legal
        kk = c.k * c.k
        setting_up = in_reset
        # each pass ends a round or breaks; at most the rounds of this game and of one new game
        for _ in range(2 * c.rounds + 1):
            if q >= 0:
                for a in range(legal.shape[1]):
                    legal[b, a] = 0
                vals = _open_values(s, b)
                if _plays_of(s, c, b, q, vals, True):
                    break
                if s.bone_pos[b] < c.t_count:  # R12
                    legal[b, kk] = 1
                    break
                blocked = True  # R13 pass unless nobody can play (R14)
                for p in range(c.n):
                    if _plays_of(s, c, b, p, vals, False):
                        blocked = False
                        break
                if not blocked:
                    legal[b, kk + 1] = 1
                    break
            over = _finish_round(b, s, c, s.reset_rewards if setting_up else s.rewards, not setting_up)
            if over:
                if setting_up:  # a new game ended before its first decision: void, to be dealt again
                    for p in range(c.n):
                        s.reset_rewards[b, p] = 0.0
                    s.current_player[b] = -1
                    s.drawn[b] = -1
                    return
                s.done[b] = 1
                if not c.restart:  # the AEC env's core (cf_env.core): the game stays as it ended
                    s.current_player[b] = -1
                    s.drawn[b] = -1
                    return
                _new_game(b, s, c)
                setting_up = True
            q = _start_round(b, s, c)
        s.current_player[b] = q
        s.drawn[b] = -1

    @njit(cache=True, inline="always")
    def _apply(b, a, s, c):
        """Game ``b``'s current player takes action ``a`` (unchecked): R8-R13, then the turn moves
        on (:func:`_advance`) unless the player drew a tile it may play or must draw again (R12).
        Inlined into its callers (``apply_action_inline``; :func:`_apply_call` is the call): as a
        call, passing the State's two dozen arrays field by field was about half a heuristic
        rollout step's time."""
        k, n = c.k, c.n
        kk = k * k
        legal = s.legal
        p = s.current_player[b]
        q = (p + 1) % n  # who decides next; NOBODY ends the round
        if a < kk:  # R8-R10
            m = a // k
            x = a % k
            t = c.tile_of_action[a]
            s.hand[b, p, t] = 0
            s.played[b, t] = 1
            s.owner[b, t] = p
            if s.pending[b] > 0:
                s.pending[b] -= 1
            else:
                s.open_ends[b, m] -= 1
                if m == x:
                    s.pending[b] = TOES_PER_DOUBLE
                    s.pending_value[b] = m
                    s.pending_role[b] = ROLE_TOE
            if m != x:
                s.open_ends[b, x] += 1
            s.hand_sizes[b, p] -= 1
            if s.hand_sizes[b, p] == 0:
                q = NOBODY
        elif a == kk:  # R12 draw
            t = s.bone[b, s.bone_pos[b]]
            s.bone_pos[b] += 1
            s.hand[b, p, t] = 1
            s.hand_sizes[b, p] += 1
            vals = _open_values(s, b)
            s.unmatched[b, p] = vals
            _fail(b, p, vals, s, c)
            s.draws[b, p] += 1
            lo = c.tile_lo[t]
            hi = c.tile_hi[t]
            if ((vals >> lo) & 1) or ((vals >> hi) & 1):  # the drawn tile plays now, or is kept (pass)
                for i in range(legal.shape[1]):
                    legal[b, i] = 0
                if (vals >> lo) & 1:
                    legal[b, lo * k + hi] = 1
                if (vals >> hi) & 1:
                    legal[b, hi * k + lo] = 1
                legal[b, kk + 1] = 1
                s.drawn[b] = t
                return
            if c.until and s.bone_pos[b] < c.t_count:  # draw again
                for i in range(legal.shape[1]):
                    legal[b, i] = 0
                legal[b, kk] = 1
                return
        else:  # pass: keep the drawn tile (R12) or nothing to play (R13)
            if s.drawn[b] < 0:
                vals = _open_values(s, b)
                s.unmatched[b, p] = vals
                _fail(b, p, vals, s, c)
        _advance(b, q, s, c, NOT_RESET)

    @njit(cache=True)
    def _apply_call(b, a, s, c):
        """:func:`_apply` as a compiled call: for the VectorGame kernels (numba's parfor pass loses
        writes made through the State's attributes once they are inlined into a prange loop) and
        for callers that decide now and then (once per world)."""
        _apply(b, a, s, c)

    @njit(cache=True)
    def _advance_call(b, q, s, c, in_reset):
        """:func:`_advance` as a compiled call, for the resets (see :func:`_apply_call`)."""
        _advance(b, q, s, c, in_reset)

    @njit(cache=True, inline="always")
    def _fail(b, p, vals, s, c):
        """Seat ``p`` failed to match the values of ``vals`` (the engine's ``Game._fail``)."""
        for v in range(c.k):
            if (vals >> v) & 1:
                s.void_at[b, p, v] = s.draws[b, p] + 1

    def _write_obs_seat_py(b, s, c, o, obs, seat):
        """Game ``b``'s observation from ``seat`` into ``obs[b]``: every element written once (no
        zeroing pass first), the game's rows taken out of the arrays once. The drawn tile shows
        only to the seat to move."""
        n, k, tc = c.n, c.k, c.t_count
        row = obs[b]
        hand = s.hand[b, seat]
        played = s.played[b]
        owner = s.owner[b]
        for t in range(tc):
            row[o.hand + t] = hand[t]
            row[o.layout + t] = played[t]
            row[o.drawn + t] = 0.0
        if s.drawn[b] >= 0 and seat == s.current_player[b]:
            row[o.drawn + s.drawn[b]] = 1.0
        for v in range(k):
            row[o.pending_value + v] = 0.0
        row[o.pending_kind] = 0.0
        row[o.pending_kind + 1] = 0.0
        pend = s.pending[b]
        if pend > 0:
            row[o.pending_value + s.pending_value[b]] = 1.0
            row[o.pending_kind + (0 if s.pending_role[b] == ROLE_ARM else 1)] = 1.0
        row[o.pending_count] = pend
        for i in range(1, n):
            opp = (seat + i) % n
            um = s.unmatched[b, opp]
            d1 = s.draws[b, opp] + 1
            base = (i - 1) * k
            for v in range(k):
                row[o.unmatched + base + v] = (um >> v) & 1
                at = s.void_at[b, opp, v]
                if at:
                    row[o.void + base + v] = 1.0
                    row[o.void_draws + base + v] = d1 - at
                else:
                    row[o.void + base + v] = 0.0
                    row[o.void_draws + base + v] = 0.0
        for i in range(n):
            p = (seat + i) % n
            base = o.played + i * tc
            for t in range(tc):
                row[base + t] = 1.0 if owner[t] == p else 0.0
        for v in range(k):
            row[o.open_ends + v] = s.open_ends[b, v]
        for i in range(n):
            p = (seat + i) % n
            row[o.draws + i] = s.draws[b, p]
            row[o.hand_sizes + i] = s.hand_sizes[b, p]
            row[o.scores + i] = s.totals[b, p] * SCORE_FACTOR
        row[o.boneyard] = tc - s.bone_pos[b]
        row[o.round] = s.round_index[b]
        row[o.round + 1] = c.rounds - s.round_index[b] - 1

    _write_obs_seat = njit(cache=True, inline="always")(_write_obs_seat_py)

    def _write_obs_py(b, s, c, o, obs):
        """Game ``b``'s observation from its current player's seat into ``obs[b]``."""
        _write_obs_seat(b, s, c, o, obs, s.current_player[b])

    # the observation writer as a compiled call (write_observation, for other compiled code) and
    # inlined into the step: a call passes the State's arrays field by field, and the step's three
    # calls a decision (apply, publish, write) were a large part of its time
    _write_obs = njit(cache=True)(_write_obs_py)
    _write_obs_inline = njit(cache=True, inline="always")(_write_obs_py)

    @njit(cache=True, inline="always")
    def _publish(b, s, c, o, obs, mask, seat):
        """Write game ``b``'s observation, mask and seat (unless it waits for a new deal, current_player -1).
        Inlined into the kernels: it writes only ``obs``, ``mask`` and ``seat``, none of the
        State's arrays (see the kernels' note on prange)."""
        seat[b] = s.current_player[b]
        if s.current_player[b] >= 0:
            _write_obs_inline(b, s, c, o, obs)
            for a in range(s.legal.shape[1]):
                mask[b, a] = s.legal[b, a]

    @njit(cache=True, inline="always")
    def _clear_step(b, done, need_deals, rewards, reset_rewards):
        """Game ``b``'s step flags and rewards, cleared before its decision."""
        done[b] = 0
        need_deals[b] = 0
        for p in range(rewards.shape[1]):
            rewards[b, p] = 0.0
            reset_rewards[b, p] = 0.0

    @njit(cache=True, inline="always")
    def _step_game(b, a, s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards):
        """Game ``b``'s decision ``a``, its step's flags and rewards cleared first."""
        _clear_step(b, done, need_deals, rewards, reset_rewards)
        _apply_call(b, a, s, c)
        _publish(b, s, c, o, obs, mask, seat)

    @njit(cache=True, inline="always")
    def _reset_game(b, s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards, scores):
        """Game ``b`` from its first round (its deals are in place); ``scores`` = (rnd, totals)."""
        _clear_step(b, done, need_deals, rewards, reset_rewards)
        rnd, totals = scores
        rnd[b] = 0
        for p in range(totals.shape[1]):
            totals[b, p] = 0
        q = _start_round(b, s, c)
        _advance_call(b, q, s, c, IN_RESET)
        _publish(b, s, c, o, obs, mask, seat)

    @njit(cache=True, inline="always")
    def _redeal_game(b, s, c, o, obs, mask, seat):
        """A new game in slot ``b`` (a void one), from its fresh ``next_deals``."""
        _new_game(b, s, c)
        q = _start_round(b, s, c)
        _advance_call(b, q, s, c, IN_RESET)
        _publish(b, s, c, o, obs, mask, seat)

    # Each kernel comes twice: over the games in numba's threads (prange), and in one thread for
    # small batches (VectorGame's ``parallel``): the threaded ones take longer to compile, and a
    # few games step faster in one thread (benchmarks/vector.py --compare-threads measures both).
    # The per-game work is inlined into both. Arrays are taken out of the NamedTuple before a parallel
    # loop: numba's parfor pass lost writes made through the tuple's attributes inside prange
    # (rewards were left unzeroed).
    @njit_unrefcounted(cache=True, parallel=True)
    def _step_kernel(actions, s, c, o, obs, mask, seat):
        done, need_deals, rewards, reset_rewards = s.done, s.need_deals, s.rewards, s.reset_rewards
        for i in prange(actions.shape[0]):
            # prange's index is unsigned: one signature for the callees (see GAME0)
            _step_game(np.int64(i), actions[i], s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards)

    @njit_unrefcounted(cache=True)
    def _step_serial(actions, s, c, o, obs, mask, seat):
        # _step_game with the decision inlined too (no prange here, so no lost writes): a call would
        # pass the State's arrays field by field at every decision
        done, need_deals, rewards, reset_rewards = s.done, s.need_deals, s.rewards, s.reset_rewards
        for b in range(actions.shape[0]):
            _clear_step(b, done, need_deals, rewards, reset_rewards)
            _apply(b, actions[b], s, c)
            _publish(b, s, c, o, obs, mask, seat)

    @njit_unrefcounted(cache=True, parallel=True)
    def _step_games_kernel(games, actions, s, c, o, obs, mask, seat):
        """One decision ``actions[i]`` in each game ``games[i]``; the other games are not touched."""
        done, need_deals, rewards, reset_rewards = s.done, s.need_deals, s.rewards, s.reset_rewards
        for i in prange(games.shape[0]):
            _step_game(games[i], actions[i], s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards)

    @njit_unrefcounted(cache=True)
    def _step_games_serial(games, actions, s, c, o, obs, mask, seat):
        done, need_deals, rewards, reset_rewards = s.done, s.need_deals, s.rewards, s.reset_rewards
        for i in range(games.shape[0]):
            b = games[i]
            _clear_step(b, done, need_deals, rewards, reset_rewards)
            _apply(b, actions[i], s, c)
            _publish(b, s, c, o, obs, mask, seat)

    @njit(cache=True)
    def _observe_seats(games, seats, s, c, o, obs):
        """Game ``games[i]``'s observation from ``seats[i]`` into ``obs[games[i]]`` (a finished
        game's last view, or any seat's: the drawn tile shows only to the seat to move)."""
        for i in range(games.shape[0]):
            _write_obs_seat(games[i], s, c, o, obs, seats[i])

    @njit(cache=True, parallel=True)
    def _redeal_kernel(games, s, c, o, obs, mask, seat):
        """Start a new game in each of ``games`` (void games, from their fresh ``next_deals``)."""
        for i in prange(games.shape[0]):
            _redeal_game(games[i], s, c, o, obs, mask, seat)

    @njit(cache=True)
    def _redeal_serial(games, s, c, o, obs, mask, seat):
        for i in range(games.shape[0]):
            _redeal_game(games[i], s, c, o, obs, mask, seat)

    @njit(cache=True, parallel=True)
    def _reset_kernel(s, c, o, obs, mask, seat):
        done, need_deals, rnd, totals = s.done, s.need_deals, s.round_index, s.totals
        rewards, reset_rewards = s.rewards, s.reset_rewards
        scores = (rnd, totals)
        for i in prange(obs.shape[0]):
            _reset_game(np.int64(i), s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards, scores)

    @njit(cache=True)
    def _reset_serial(s, c, o, obs, mask, seat):
        done, need_deals, rnd, totals = s.done, s.need_deals, s.round_index, s.totals
        rewards, reset_rewards = s.rewards, s.reset_rewards
        scores = (rnd, totals)
        for b in range(obs.shape[0]):
            _reset_game(b, s, c, o, obs, mask, seat, done, need_deals, rewards, reset_rewards, scores)


if numba is not None:
    # the kernels other compiled code may call (the search agents' rollouts): one decision of
    # game ``b`` by its current player, ``apply_action(b, action, state, consts)``, and game ``b``'s
    # observation from its current player's seat into row ``b`` of ``obs``,
    # ``write_observation(b, state, consts, offsets, obs)``. Neither checks legality.
    # ``apply_action_inline`` is the same decision inlined into its caller, for a loop that does
    # little else (a rollout): a compiled call passes the State's arrays field by field, and that
    # was half of a heuristic rollout's time; each caller compiles its own copy, so calls made now
    # and then (once per world) use ``apply_action``.
    apply_action = _apply_call
    apply_action_inline = _apply
    write_observation = _write_obs

    @njit(cache=True, **COUNTED_OPTIONS)  # whole-row assignments need the counting
    def copy_game(src, i, dst, j):
        """Game ``i`` of state ``src`` into game ``j`` of ``dst``: the fields a round in play reads
        and writes (not the deals, nor the finished game's results), ``done`` cleared. The search
        agents copy a world's public state this way before dealing its hidden tiles."""
        dst.hand[j] = src.hand[i]
        dst.hand_sizes[j] = src.hand_sizes[i]
        dst.bone[j] = src.bone[i]
        dst.bone_pos[j] = src.bone_pos[i]
        dst.played[j] = src.played[i]
        dst.open_ends[j] = src.open_ends[i]
        dst.pending[j] = src.pending[i]
        dst.pending_value[j] = src.pending_value[i]
        dst.pending_role[j] = src.pending_role[i]
        dst.current_player[j] = src.current_player[i]
        dst.drawn[j] = src.drawn[i]
        dst.unmatched[j] = src.unmatched[i]
        dst.owner[j] = src.owner[i]
        dst.draws[j] = src.draws[i]
        dst.void_at[j] = src.void_at[i]
        dst.round_index[j] = src.round_index[i]
        dst.totals[j] = src.totals[i]
        dst.round_scores[j] = src.round_scores[i]
        dst.legal[j] = src.legal[i]
        dst.done[j] = 0


def make_consts(config: RulesConfig, reward: str = "win", points_scale: float = 100.0, restart: bool = True) -> Consts:
    """The kernels' constants for ``config`` (``reward`` one of ``REWARD_MODES``; ``restart``: a
    game that ends starts the next at once, as :class:`VectorGame`'s do)."""
    table = action_table(config.max_pip)
    return Consts(
        n=config.num_players, k=table.k, t_count=config.num_tiles, h=config.hand_size, rounds=config.rounds,
        arms=config.center_arms, until=config.draw_rule == "until_playable", dbp=config.double_blank_points,
        reward_code=REWARD_MODES.index(reward), scale=float(points_scale), max_pip=config.max_pip,
        tile_lo=np.array(table.tile_low, dtype=np.int64), tile_hi=np.array(table.tile_high, dtype=np.int64),
        tile_of_action=np.array(table.action_tile, dtype=np.int64), restart=bool(restart),
    )


def observation_offsets(encoder: ObservationEncoder) -> Offsets:
    """Where each block of ``encoder``'s observation starts, as the kernels read it."""
    return Offsets(**{name: encoder.slices[name].start for name in Offsets._fields})


def new_state(c: Consts, num_games: int) -> State:
    """Zeroed arrays for ``num_games`` games under constants ``c`` (``drawn`` -1: no tile drawn)."""
    b, n, t, r, a = num_games, c.n, c.t_count, c.rounds, c.k * c.k + 2
    return State(
        hand=np.zeros((b, n, t), np.uint8), hand_sizes=np.zeros((b, n), np.int64), bone=np.zeros((b, t), np.int64),
        bone_pos=np.zeros(b, np.int64), played=np.zeros((b, t), np.uint8), open_ends=np.zeros((b, c.k), np.int64),
        pending=np.zeros(b, np.int64), pending_value=np.zeros(b, np.int64), pending_role=np.zeros(b, np.int64),
        current_player=np.zeros(b, np.int64), drawn=np.full(b, -1, np.int64), unmatched=np.zeros((b, n), np.int64),
        owner=np.full((b, t), -1, np.int64), draws=np.zeros((b, n), np.int64), void_at=np.zeros((b, n, c.k), np.int64),
        round_index=np.zeros(b, np.int64), totals=np.zeros((b, n), np.int64), round_scores=np.zeros((b, r, n), np.int64),
        starter=np.zeros((b, r), np.int64), search_draws=np.zeros((b, r), np.int64),
        end_hands=np.zeros((b, r, n, t), np.uint8),
        legal=np.zeros((b, a), np.uint8), deals=np.zeros((b, r, t), np.int64), next_deals=np.zeros((b, r, t), np.int64),
        need_deals=np.zeros(b, np.uint8), done=np.zeros(b, np.uint8), final_totals=np.zeros((b, n), np.int64),
        final_winners=np.zeros((b, n), np.uint8), rewards=np.zeros((b, n), np.float64),
        reset_rewards=np.zeros((b, n), np.float64),
    )


class VectorGame:
    """``num_games`` games of ``config`` in lockstep (see the module docstring). Each field of
    :class:`State` is an attribute, ``(num_games, ...)`` arrays updated in place.

    ``parallel``: step the games in numba's threads (``True``) or in one (``False``); by default
    threads from :data:`PARALLEL_MIN_GAMES` games. Both play the same games bit for bit. Below
    that one thread is faster, and a process that steps a few games (a label collection's 8-16)
    never compiles the threaded kernels (benchmarks/vector.py --compare-threads measures both).

    ``restart``: a game that ends starts the next at once (the default); ``False`` leaves it as
    it ended (``current_player`` -1, ``done`` 1, its last state readable) until :meth:`new_games`,
    and :meth:`step_games` steps the games that are still live (the vector env's way)."""

    hand: np.ndarray
    hand_sizes: np.ndarray
    bone: np.ndarray
    bone_pos: np.ndarray
    played: np.ndarray
    open_ends: np.ndarray
    pending: np.ndarray
    pending_value: np.ndarray
    pending_role: np.ndarray
    current_player: np.ndarray
    drawn: np.ndarray
    unmatched: np.ndarray
    owner: np.ndarray
    draws: np.ndarray
    void_at: np.ndarray
    round_index: np.ndarray
    totals: np.ndarray
    round_scores: np.ndarray
    starter: np.ndarray
    search_draws: np.ndarray
    end_hands: np.ndarray
    legal: np.ndarray
    deals: np.ndarray
    next_deals: np.ndarray
    need_deals: np.ndarray
    done: np.ndarray
    final_totals: np.ndarray
    final_winners: np.ndarray
    rewards: np.ndarray
    reset_rewards: np.ndarray


    def __init__(self, config: RulesConfig | None = None, num_games: int = 1024, reward: str = "win",
                 points_scale: float = 100.0, seed: int | np.random.Generator | None = None,
                 parallel: bool | None = None, restart: bool = True) -> None:
        if numba is None:
            raise ImportError("cf_env.vector needs numba: pip install numba")
        cfg = config if config is not None else RulesConfig()
        if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1:
            raise ConfigError(f"num_games must be a positive int, got {num_games!r}")
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if isinstance(points_scale, bool) or not isinstance(points_scale, (int, float)) or points_scale <= 0:
            raise ConfigError(f"points_scale must be a positive number, got {points_scale!r}")
        if parallel is not None and not isinstance(parallel, bool):
            raise ConfigError(f"parallel must be True, False or None (by the number of games), got {parallel!r}")
        self.config = cfg
        #: whether the games are stepped in numba's threads; by default from PARALLEL_MIN_GAMES games
        self.parallel = num_games >= PARALLEL_MIN_GAMES if parallel is None else parallel
        self._step_k, self._reset_k, self._redeal_k, self._step_games_k = (
            (_step_kernel, _reset_kernel, _redeal_kernel, _step_games_kernel) if self.parallel
            else (_step_serial, _reset_serial, _redeal_serial, _step_games_serial))
        #: whether a game that ends starts the next at once (else it waits, ``current_player`` -1 and
        #: ``done`` 1, until :meth:`new_games`)
        self.restart = bool(restart)
        self.num_games = b = num_games
        self.reward_mode = reward
        self.points_scale = float(points_scale)
        self.encoder = ObservationEncoder(cfg)
        table = action_table(cfg.max_pip)
        self.num_actions = table.num_actions
        self.obs_size = self.encoder.size
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._consts = make_consts(cfg, reward, self.points_scale, restart=self.restart)
        self._offsets = observation_offsets(self.encoder)
        self._state = new_state(self._consts, b)
        for name, array in zip(State._fields, self._state):  # the same arrays, as attributes
            setattr(self, name, array)
        self._obs = np.zeros((b, self.obs_size), np.float32)
        self._mask = np.zeros((b, self.num_actions), np.int8)
        self._seat = np.zeros(b, np.int64)
        self._view = np.zeros((b, self.obs_size), np.float32)  # observe()'s rows
        self.void_games = np.zeros(b, np.int64)
        self._ready = False

    @property
    def nbytes(self) -> int:
        """Bytes held by the games' arrays (state, observations, masks, seats): memory per game is
        ``nbytes / num_games``."""
        arrays = [a for a in self._state if isinstance(a, np.ndarray)] + [self._obs, self._mask, self._seat]
        return sum(a.nbytes for a in arrays)

    def _shuffled(self, count: int) -> np.ndarray:
        t = self.config.num_tiles
        base = np.broadcast_to(np.arange(t, dtype=np.int64), (count, self.config.rounds, t))
        return self._rng.permuted(base, axis=2)

    def reset(self, seed: int | np.random.Generator | None = None,
              deals: Sequence[Sequence[Any] | None] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every game; ``deals[b]`` optionally scripts game ``b``'s rounds (the engine's
        format; unscripted rounds are shuffled). Returns ``(obs, mask, seat)``."""
        if seed is not None:
            self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        b = self.num_games
        self.deals[:] = self._shuffled(b)
        self.next_deals[:] = self._shuffled(b)
        if deals is not None:
            if isinstance(deals, (str, bytes)) or not isinstance(deals, Sequence) or len(deals) != b:
                raise ConfigError(f"deals must list one entry (or None) per game: {b}, got {deals!r:.80}")
            for g, game_deals in enumerate(deals):
                if game_deals is None:
                    continue
                for r, parsed in enumerate(validate_deals(game_deals, self.config)):
                    if parsed is not None:
                        hands, bone = parsed
                        self.deals[g, r] = deal_order(hands, bone)
        self.void_games[:] = 0
        self._reset_k(self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()
        self._ready = True
        return self._obs, self._mask, self._seat

    def _refill_deals(self) -> None:
        idx = np.flatnonzero(self.need_deals)
        if idx.size:
            self.next_deals[idx] = self._shuffled(idx.size)
            self.need_deals[idx] = 0  # refilled once, even when later steps leave this game alone

    def _redeal_void(self) -> None:
        """Deal again every game that ended before its first decision (``current_player`` -1; only degenerate
        configurations, e.g. 1-tile hands, do that), until each has a decision to make."""
        for _ in range(MAX_VOID_DEALS):
            # without restart a game that ended waits (current_player -1, done 1): not void
            void = np.flatnonzero((self.current_player < 0) & ((self.done == 0) | self.restart))
            if not void.size:
                return
            self.void_games[void] += 1
            self._redeal_k(void, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
            self._refill_deals()
        raise ConfigError(f"{MAX_VOID_DEALS} deals in a row ended before anyone could decide; these rules "
                          f"({self.config}) leave nothing to play")

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One decision per game. Returns ``(obs, mask, seat, rewards, done)``; the arrays are
        reused by the next call (copy what you keep)."""
        if not self._ready:
            raise ResetNeededError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be {self.num_games} integer action ids, got {actions.dtype} {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        self._refuse_illegal(np.arange(self.num_games), actions)
        self._step_k(actions, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()
        return self._obs, self._mask, self._seat, self.rewards, self.done.astype(bool)

    def step_games(self, games: np.ndarray, actions: np.ndarray) -> None:
        """One decision in each of ``games`` (distinct game indices), ``actions[i]`` in game
        ``games[i]``; the other games are left as they are. The stepped games' rows of the arrays
        :meth:`step` returns (``observations``, ``masks``, ``seats``, ``rewards``, ``done``) are
        updated in place; the others keep what their last step left there. Illegal actions raise
        :class:`IllegalActionError` and change nothing."""
        if not self._ready:
            raise ResetNeededError("call reset() before step_games()")
        games = np.asarray(games)
        actions = np.asarray(actions)
        if (games.ndim != 1 or actions.shape != games.shape or not np.issubdtype(games.dtype, np.integer)
                or not np.issubdtype(actions.dtype, np.integer)):
            raise IllegalActionError(f"games and actions must be two 1-d integer arrays of one length, got "
                                     f"{games.dtype} {games.shape} and {actions.dtype} {actions.shape}")
        games = games.astype(np.int64, copy=False)
        actions = actions.astype(np.int64, copy=False)
        if games.size and (games.min() < 0 or games.max() >= self.num_games or np.unique(games).size != games.size):
            raise IllegalActionError(f"games must be distinct indices in [0, {self.num_games}), got {games[:8].tolist()}")
        self._refuse_illegal(games, actions)
        self._step_games_k(games, actions, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()

    def illegal(self, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Where ``actions[i]`` (int64) is not a legal action of game ``games[i]``'s current player
        (out of range, or not in its mask), as a bool array."""
        ok = (actions >= 0) & (actions < self.num_actions)
        ok[ok] = self.legal[games[ok], actions[ok]] == 1
        return ~ok

    def _refuse_illegal(self, games: np.ndarray, actions: np.ndarray) -> None:
        bad = np.flatnonzero(self.illegal(games, actions))[:5]
        if bad.size:
            raise IllegalActionError(f"illegal actions in games {games[bad].tolist()} (actions "
                                     f"{actions[bad].tolist()}); nothing was changed")

    def new_games(self, games: np.ndarray) -> None:
        """Start the next game (from the generator's deals) in each of ``games``: for a
        ``restart=False`` engine, whose finished games wait for this. Rewards of rounds that end
        before anyone decides go to ``reset_rewards`` (cleared first)."""
        if not self._ready:
            raise ResetNeededError("call reset() before new_games()")
        games = np.asarray(games, dtype=np.int64)
        if not games.size:
            return
        self.done[games] = 0
        self.rewards[games] = 0.0
        self.reset_rewards[games] = 0.0
        self._redeal_k(games, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()

    def observe(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Game ``games[i]``'s observation from seat ``seats[i]``, ``(len(games), obs_size)``
        float32, a new array (a finished game's last view, as the AEC env shows it)."""
        games = np.asarray(games, dtype=np.int64)
        seats = np.asarray(seats, dtype=np.int64)
        _observe_seats(games, seats, self._state, self._consts, self._offsets, self._view)
        return self._view[games]

    @property
    def state(self) -> State:
        """The games' arrays as one :class:`State` (what compiled callers such as
        :func:`agents.baselines.score_plays_state` read); the same arrays as the attributes."""
        return self._state

    @property
    def consts(self) -> Consts:
        """The rules as the kernels read them (what compiled callers pass with :attr:`state`)."""
        return self._consts

    @property
    def offsets(self) -> Offsets:
        """Where each observation block starts, as the kernels read it."""
        return self._offsets

    @property
    def observations(self) -> np.ndarray:
        return self._obs

    @property
    def masks(self) -> np.ndarray:
        return self._mask

    @property
    def seats(self) -> np.ndarray:
        return self._seat

    def hidden_tiles(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """What ``seats[i]`` of game ``games[i]`` cannot see (:func:`hidden_tiles`)."""
        return hidden_tiles(self._state, games, seats)


def hidden_tiles(s: State, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """What ``seats[i]`` of game ``games[i]`` of the state ``s`` cannot see, for a critic or a
    belief's labels (never for a policy): ``(len(games), n * T)`` float32, the opponents' hands in
    seat order from the seat's left (``n - 1`` rows of ``T`` flags), then the boneyard's tiles
    (``T`` flags)."""
    n, t = s.hand.shape[1], s.hand.shape[2]
    games, seats = np.asarray(games, np.int64), np.asarray(seats, np.int64)
    out = np.zeros((len(games), n, t), np.float32)
    others = (seats[:, None] + np.arange(1, n)) % n
    out[:, : n - 1] = s.hand[games[:, None], others]
    in_bone = np.arange(t)[None, :] >= s.bone_pos[games][:, None]
    rows, where = np.nonzero(in_bone)
    out[rows, n - 1, s.bone[games][rows, where]] = 1.0
    return out.reshape(len(games), n * t)
