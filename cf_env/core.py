"""The AEC env's compiled core: one game held in the batched engine's arrays and stepped by
compiled calls that take the whole state as one object.

:class:`CoreGame` is one game of the batched engine (:mod:`cf_env.vector`: the rules, checked by the
tests against an independent Python implementation, tests/reference_engine.py); the deals are drawn
from one generator, one permutation per unscripted round in round order, and the observation, each
seat's history and the legal actions are written by compiled code in the encoder's layout. What it
adds over :class:`~cf_env.vector.VectorGame` at one game is the cost of a call: the state's two
dozen arrays sit in one numba structref, so a call unboxes one object instead of each array, and the
kernels are called through their compiled entry points rather than numba's dispatcher (what each
saves: the repository's lab/results/speed.md). The env (:mod:`cf_env.chicken_foot`) steps it, and
:class:`cf_env.Game` is a readable view over one (the event log and the layout's geometry beside its
arrays).

Its status word packs what the env's step reads: ``(current_player + 1) | rounds_finished << 10``
(``current_player`` -1 once the game is over).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.experimental import structref

from cf_env.engine import RulesConfig, validate_deals
from cf_env.engine.records import Dealt, deal_order, split_deal
from cf_env.engine.state import K_DRAW, K_PASS, K_PLAY, K_SEARCH_DRAW, K_START
from cf_env.engine.table import table_layout
from cf_env.observation import ObservationEncoder
from cf_env.vector import (
    GAME0,
    NOT_RESET,
    State,
    _advance_call,
    _apply,
    _clear_step,
    _start_round,
    _tile_index,
    _write_obs_seat,
    hidden_tiles,
    make_consts,
    new_state,
    njit_unrefcounted,
    observation_offsets,
)

__all__ = ["SEAT_BITS", "SEAT_MASK", "CoreGame"]

SEAT_BITS = 10  #: the status word's low bits hold ``current_player + 1``
SEAT_MASK = (1 << SEAT_BITS) - 1
_NO_DRAWS = np.random.default_rng(0)  # the generator of a reset whose every round is scripted (never drawn)


@structref.register
class _CoreType(types.StructRef):
    def preprocess_fields(self, fields: Any) -> tuple:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class _CoreRef(structref.StructRefProxy):
    """The core's arrays as one object (fields ``s`` the State, ``c`` the Consts, ``o`` the
    observation offsets, ``obs`` a (1, D) buffer, ``words`` the legal actions as uint64 words,
    ``hist`` each seat's history and ``rows`` its rows written)."""


structref.define_proxy(_CoreRef, _CoreType, ["s", "c", "o", "obs", "words", "hist", "rows"])


@njit(cache=True)
def _new_ref(s: Any, c: Any, o: Any, obs: Any, words: Any, hist: Any, rows: Any) -> Any:
    return _CoreRef(s, c, o, obs, words, hist, rows)


@njit(cache=True, inline="always")
def _status(s: Any, c: Any, words: Any) -> int:
    """Pack the legal actions into ``words`` and return the status word."""
    for w in range(words.shape[0]):
        words[w] = 0
    current = s.current_player[0]
    if current >= 0:
        legal = s.legal[0]
        for a in range(legal.shape[0]):
            if legal[a]:
                words[a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    rounds = c.rounds if s.done[0] else s.round_index[0]
    return (current + 1) | rounds << SEAT_BITS


@njit(cache=True, inline="always")
def _row(hist: Any, rows: Any, seat: int, rel: int, kind: int, action: int, tile: int) -> None:
    i = rows[seat]
    hist[seat, i, 0] = rel
    hist[seat, i, 1] = kind
    hist[seat, i, 2] = action
    hist[seat, i, 3] = tile
    rows[seat] = i + 1


@njit(cache=True, inline="always")
def _fill_history(s: Any, c: Any, hist: Any, rows: Any) -> None:
    """Each seat's view of the round just dealt: its R6 search draws (the tile shown to its
    drawer alone) and the starting double."""
    n = c.n
    for seat in range(n):
        for i in range(rows[seat]):  # the rows the last round wrote; the others are still -1
            for j in range(4):
                hist[seat, i, j] = -1
        rows[seat] = 0
    r = s.round_index[0]
    dealt = n * c.h
    start = c.max_pip - r
    start_tile = _tile_index(start, start)
    holder = s.starter[0, r]
    searched = s.search_draws[0, r]
    for i in range(searched):  # in turn, the holder's draw of the double last
        p = (holder - searched + 1 + i) % n
        tile = s.bone[0, dealt + i]
        for seat in range(n):
            _row(hist, rows, seat, (p - seat) % n, K_SEARCH_DRAW, -1, tile if p == seat else -1)
    for seat in range(n):
        _row(hist, rows, seat, (holder - seat) % n, K_START, -1, start_tile)


@njit(cache=True)
def _core_reset(ref: Any) -> int:
    """Start the game from ``s.deals[0]``: deal round 0 and play the forced steps up to the first decision."""
    s, c = ref.s, ref.c
    _clear_step(GAME0, s.done, s.need_deals, s.rewards, s.reset_rewards)
    s.round_index[0] = 0
    for p in range(c.n):
        s.totals[0, p] = 0
        for r in range(c.rounds):
            s.round_scores[0, r, p] = 0
    q = _start_round(GAME0, s, c)
    _fill_history(s, c, ref.hist, ref.rows)
    _advance_call(GAME0, q, s, c, NOT_RESET)
    if s.round_index[0] != 0:  # rounds that ended before anyone decided (1-tile hands)
        _fill_history(s, c, ref.hist, ref.rows)
    if s.current_player[0] >= 0:
        _write_obs_seat(GAME0, s, c, ref.o, ref.obs, s.current_player[0])
    return _status(s, c, ref.words)


@njit_unrefcounted(cache=True)
def _step_inner(s: Any, c: Any, o: Any, obs: Any, words: Any, hist: Any, rows: Any, a: int) -> int:
    """The current player takes action ``a`` (legal: the env checks it); returns the status word."""
    n, kk = c.n, c.k * c.k
    p = s.current_player[0]
    r = s.round_index[0]
    if a < kk:
        tile = c.tile_of_action[a]
        for seat in range(n):
            _row(hist, rows, seat, (p - seat) % n, K_PLAY, a, tile)
    elif a == kk:
        tile = s.bone[0, s.bone_pos[0]]
        for seat in range(n):
            _row(hist, rows, seat, (p - seat) % n, K_DRAW, a, tile if seat == p else -1)
    else:
        kept = s.drawn[0] >= 0
        for seat in range(n):
            if not kept or seat == p:  # a kept playable draw looks like any draw to the others (R17)
                _row(hist, rows, seat, (p - seat) % n, K_PASS, a, -1)
    _clear_step(GAME0, s.done, s.need_deals, s.rewards, s.reset_rewards)
    _apply(GAME0, a, s, c)
    if s.round_index[0] != r:  # a new round: its history starts over
        _fill_history(s, c, hist, rows)
    if s.current_player[0] >= 0:  # the observation the env's last() reads next
        _write_obs_seat(GAME0, s, c, o, obs, s.current_player[0])
    return _status(s, c, words)


@njit(cache=True)
def _core_step(ref: Any, a: int) -> int:
    """The current player takes action ``a`` (legal: the env checks it); returns the status word.
    The arrays are taken out of the structref once (each is a reference count), and the step runs
    without counting (:func:`~cf_env.vector.njit_unrefcounted`)."""
    return _step_inner(ref.s, ref.c, ref.o, ref.obs, ref.words, ref.hist, ref.rows, a)


@njit_unrefcounted(cache=True)
def _observe_inner(s: Any, c: Any, o: Any, obs: Any, seat: int) -> None:
    _write_obs_seat(GAME0, s, c, o, obs, seat)


@njit(cache=True)
def _core_observe(ref: Any, seat: int) -> None:
    _observe_inner(ref.s, ref.c, ref.o, ref.obs, seat)


_said: list[bool] = []


def _cached(dispatcher: Any) -> bool:
    """Whether numba's on-disk cache holds compiled code of ``dispatcher`` (its index file exists);
    True when that cannot be told."""
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None)
    return index is None or os.path.exists(index)


def _say_compiling() -> None:
    """Once a process: the first use on a machine compiles the kernels, which takes seconds."""
    if not _said:
        _said.append(True)
        print("chickenfoot-rl: compiling the engine's kernels for this machine (about 15 s, once: numba caches "
              "them); `chickenfoot precompile` compiles every kernel ahead of time", file=sys.stderr, flush=True)


def _entry(dispatcher: Any, *arg_types: Any) -> Any:
    """``dispatcher``'s compiled function for ``arg_types``, to be called without numba's type
    dispatch (which costs about 0.45 µs a call for a structref argument, more than a step's own
    work): its entry point, compiled or loaded from the cache once per process."""
    sig = tuple(arg_types)
    if not _cached(dispatcher):
        _say_compiling()
    dispatcher.compile(sig)
    entry = getattr(dispatcher.overloads.get(sig), "entry_point", None)
    return entry if callable(entry) else dispatcher  # pragma: no cover - a numba without it: the plain call


class CoreGame:
    """One game of ``config`` in compiled code (see the module docstring): :meth:`reset` deals it
    from a generator (and optional scripted deals), :meth:`step` takes a legal action, and
    :meth:`observation`, :meth:`history`, :attr:`legal_bits` read it. It does not check
    legality: the env does, from :attr:`legal_bits`."""

    def __init__(self, config: RulesConfig, encoder: ObservationEncoder) -> None:
        self.config = config
        self._consts = consts = make_consts(config, restart=False)
        self._offsets = observation_offsets(encoder)
        n = config.num_players
        self._bind(new_state(consts, 1), np.zeros((1, encoder.size), np.float32),
                   np.zeros((config.num_actions + 63) // 64, np.uint64),
                   np.full((n, table_layout(config).history_length, 4), -1, np.int16), np.zeros(n, np.int64))
        self.actions: list[int] = []
        self._obs_seat = -1  # the seat whose observation the buffer holds (-1: none)
        self.current_player = -1  #: the seat to decide; -1 once the game is over
        ref_type = numba.typeof(self.ref)
        self._reset_fn = _entry(_core_reset, ref_type)
        self._step_fn = _entry(_core_step, ref_type, types.int64)
        self._observe_fn = _entry(_core_observe, ref_type, types.int64)

    def _bind(self, state: State, obs: np.ndarray, words: np.ndarray, hist: np.ndarray, rows: np.ndarray) -> None:
        """Hold these arrays (the state, the observation buffer, the legal words, the histories and
        their row counts) and the structref over them."""
        self.state = state
        self._obs, self._obs_row, self._words, self._hist, self._rows = obs, obs[0], words, hist, rows
        #: the legal actions' bits as little-endian bytes (``int.from_bytes(legal_words, "little")``)
        self.legal_words = memoryview(words).cast("B")  # type: ignore[arg-type]  # numpy's stubs: not a Buffer
        #: the legal actions as int8 flags (the state's row, live: copy what you keep)
        self.legal_flags = state.legal[0].view(np.int8)
        self._hist_of = [hist[seat] for seat in range(hist.shape[0])]  # each seat's rows, as views made once
        self.ref = _new_ref(state, self._consts, self._offsets, obs, words, hist, rows)

    def copy(self) -> CoreGame:
        """An independent copy at the same point (every array copied; the compiled entry points shared)."""
        new = CoreGame.__new__(CoreGame)
        new.config, new._consts, new._offsets = self.config, self._consts, self._offsets
        new._bind(State(*(a.copy() for a in self.state)), self._obs.copy(), self._words.copy(), self._hist.copy(),
                  self._rows.copy())
        new.actions = list(self.actions)
        new._obs_seat, new.current_player = self._obs_seat, self.current_player
        new._reset_fn, new._step_fn, new._observe_fn = self._reset_fn, self._step_fn, self._observe_fn
        return new

    def reset(self, rng: np.random.Generator, deals: Sequence[Any] | None = None) -> int:
        """Deal a new game (``deals`` checked by :func:`~cf_env.engine.validate_deals`, before
        anything is drawn; unscripted rounds are shuffled by ``rng``, one permutation a round in
        round order); returns the status word."""
        cfg = self.config
        scripted = validate_deals(deals, cfg)
        out = self.state.deals[0]  # per round, the hands in seat order, then the boneyard top first
        for r in range(cfg.rounds):
            deal = scripted[r] if r < len(scripted) else None
            if deal is None:
                out[r] = rng.permutation(cfg.num_tiles)
            else:
                out[r] = deal_order(*deal)
        self.actions = []
        status = self._reset_fn(self.ref)
        self._obs_seat = self.current_player = (status & SEAT_MASK) - 1
        return status

    def load(self, deals: Sequence[Any], actions: Sequence[int]) -> int:
        """Start on a game dealt ``deals`` (every round scripted) and stepped through ``actions``
        (legal: not checked); returns the status word."""
        status = self.reset(_NO_DRAWS, deals)  # every round scripted: the generator is not drawn
        for action in actions:
            status = self.step(action)
        return status

    def step(self, action: int) -> int:
        """Take ``action`` (legal: not checked); returns the status word."""
        self.actions.append(action)
        status = self._step_fn(self.ref, action)
        self._obs_seat = self.current_player = (status & SEAT_MASK) - 1
        return status

    def all_deals(self) -> Dealt:
        """Every round's deal (the rounds to come included) as tile indices, as ``deals`` takes them."""
        return Dealt((split_deal(order, self.config) for order in self.state.deals[0].tolist()), self.config)

    @property
    def legal_bits(self) -> int:
        """The legal actions as an int of bits (:attr:`Game.legal_bits`)."""
        return int.from_bytes(self.legal_words, "little")

    def observation(self, seat: int) -> np.ndarray:
        """``seat``'s observation vector (a new array). The seat to move's is written by the step."""
        if seat != self._obs_seat:
            self._observe_fn(self.ref, seat)
            self._obs_seat = seat
        return self._obs_row.copy()

    def history(self, seat: int) -> np.ndarray:
        """``seat``'s view of the round's events (a new array; :meth:`ObservationEncoder.history`)."""
        return self._hist_of[seat].copy()

    def hidden_tiles(self, seat: int) -> np.ndarray:
        """What ``seat`` cannot see, ``(n * T,)`` float32 (:func:`cf_env.vector.hidden_tiles`)."""
        return hidden_tiles(self.state, np.zeros(1, np.int64), np.array([seat]))[0]

    def round_scores(self, rounds: int) -> list[list[int]]:
        """Points of the first ``rounds`` rounds (finished), seat order."""
        return self.state.round_scores[0, :rounds].tolist()

    @property
    def totals(self) -> list[int]:
        return self.state.totals[0].tolist()

    @property
    def winners(self) -> list[int]:
        """Seats that share the win (R16); valid once the game is over."""
        return np.flatnonzero(self.state.final_winners[0]).tolist()
