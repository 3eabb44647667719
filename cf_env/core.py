"""The AEC env's compiled core: one game held in the batched engine's arrays and stepped by
compiled calls that take the whole state as one object.

:class:`CoreGame` plays the same game as :class:`cf_env.engine.Game`, to the bit: the rules are
the batched engine's (:mod:`cf_env.vector`, whose parity with the engine its tests check), the
deals are drawn from the same generator in the same order (one permutation per unscripted
round), and the observation, each seat's history and the legal actions are written by compiled
code in the encoder's layout. What it adds over :class:`~cf_env.vector.VectorGame` at one game
is the cost of a call: the state's two dozen arrays sit in one numba structref, so a call
unboxes one object instead of each array, and the kernels are called through their compiled
entry points rather than numba's dispatcher (what each saves: the repository's
lab/results/speed.md). The env (:mod:`cf_env.chicken_foot`) steps it, and only it; a caller that
asks the env for its :class:`~cf_env.engine.Game` gets a copy replayed from the deals and actions
(:meth:`CoreGame.to_game`), and a ``Game`` given to the env is loaded into it (:meth:`CoreGame.load`).

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

from cf_env.engine import ConfigError, Game, RulesConfig, validate_deals
from cf_env.engine.records import Dealt, deal_order, split_deal
from cf_env.engine.state import EV_PAYLOAD, EV_ROUND, K_DRAW, K_PASS, K_PLAY, K_START, EventKind
from cf_env.engine.table import table_layout
from cf_env.observation import OBSERVATION_VERSION, ObservationEncoder
from cf_env.vector import (
    GAME0,
    NOT_RESET,
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

__all__ = ["SEAT_BITS", "SEAT_MASK", "CoreGame", "GameEncoder"]

SEAT_BITS = 10  #: the status word's low bits hold ``current_player + 1``
SEAT_MASK = (1 << SEAT_BITS) - 1
_NO_DRAWS = np.random.default_rng(0)  # the generator of a reset whose every round is scripted (never drawn)
K_SEARCH_DRAW = int(EventKind.SEARCH_DRAW)


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
    first = (r % n + 1) % n
    dealt = n * c.h
    start = c.max_pip - r
    start_tile = _tile_index(start, start)
    searched = s.bone_pos[0] - dealt  # called before the round's first decision: every draw so far was R6's
    for i in range(searched):
        p = (first + i) % n
        tile = s.bone[0, dealt + i]
        for seat in range(n):
            _row(hist, rows, seat, (p - seat) % n, K_SEARCH_DRAW, -1, tile if p == seat else -1)
    holder = s.owner[0, start_tile]
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
        consts = make_consts(config, restart=False)
        self.state = new_state(consts, 1)
        self._obs = np.zeros((1, encoder.size), np.float32)
        self._obs_row = self._obs[0]
        self._words = np.zeros((config.num_actions + 63) // 64, np.uint64)
        #: the legal actions' bits as little-endian bytes (``int.from_bytes(legal_words, "little")``)
        self.legal_words = memoryview(self._words).cast("B")  # type: ignore[arg-type]  # numpy's stubs: not a Buffer
        #: the legal actions as int8 flags (the state's row, live: copy what you keep)
        self.legal_flags = self.state.legal[0].view(np.int8)
        n = config.num_players
        self._hist = np.full((n, table_layout(config).history_length, 4), -1, np.int16)
        self._rows = np.zeros(n, np.int64)
        self._hist_of = [self._hist[seat] for seat in range(n)]  # each seat's rows, as views made once
        self.ref = _new_ref(self.state, consts, observation_offsets(encoder), self._obs, self._words, self._hist,
                            self._rows)
        self.actions: list[int] = []
        self._obs_seat = -1  # the seat whose observation the buffer holds (-1: none)
        self.current_player = -1  #: the seat to decide; -1 once the game is over
        ref_type = numba.typeof(self.ref)
        self._reset_fn = _entry(_core_reset, ref_type)
        self._step_fn = _entry(_core_step, ref_type, types.int64)
        self._observe_fn = _entry(_core_observe, ref_type, types.int64)

    def reset(self, rng: np.random.Generator, deals: Sequence[Any] | None = None) -> int:
        """Deal a new game (``deals`` as :class:`Game` takes them; unscripted rounds are shuffled by
        ``rng`` in round order, as :class:`Game` would); returns the status word."""
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

    def load(self, game: Game) -> int:
        """Start on ``game`` (of this core's rules) where it stands: dealt every round it has dealt
        and will deal (:meth:`Game.all_deals`), then stepped through its actions; returns the
        status word."""
        status = self.reset(_NO_DRAWS, game.all_deals())  # every round scripted: the generator is not drawn
        for action in game.actions():
            status = self.step(action)
        return status

    def step(self, action: int) -> int:
        """Take ``action`` (legal: not checked); returns the status word."""
        self.actions.append(action)
        status = self._step_fn(self.ref, action)
        self._obs_seat = self.current_player = (status & SEAT_MASK) - 1
        return status

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

    def to_game(self) -> Game:
        """The same game as a :class:`Game` at the same point: dealt the same deals (every round's,
        so it deals on as this one would) and replayed through the actions so far."""
        cfg = self.config
        game = Game(cfg, deals=Dealt((split_deal(order, cfg) for order in self.state.deals[0].tolist()), cfg))
        game.apply_all(self.actions)
        return game


class GameEncoder(ObservationEncoder):
    """An :class:`~cf_env.observation.ObservationEncoder` that also reads a :class:`Game`: each
    seat's observation and history, written by the compiled engine's writers (the env's, the only
    ones). The game's deals and actions are replayed into a :class:`CoreGame`, step by step while
    the same game object goes on, from its start when another game (a copy, a rewound one) is
    read, the game's boneyard was reordered (:meth:`Game.set_next_draw`) or a round was dealt
    otherwise than :meth:`Game.all_deals` foresaw (a generator the caller draws from too).

    For loops that drive a :class:`Game` directly (a terminal or web game, the OpenSpiel adapter,
    tests): ``encoder.observe(game)`` is what the env gives the seat to move."""

    def __init__(self, config: RulesConfig, version: int = OBSERVATION_VERSION) -> None:
        super().__init__(config, version)
        self._latest = self if version == OBSERVATION_VERSION else ObservationEncoder(self.config)
        self._core: CoreGame | None = None  # made on the first read (it compiles the core's entry points)
        self._game: Game | None = None  # the game the core follows
        self._seen = 0  # its events replayed
        self._dealt = 0  # its rounds whose deal the core holds as the game dealt it

    def _follow(self, game: Game) -> CoreGame:
        """The core at ``game``'s state: the new events replayed, or the whole game loaded."""
        if game.config != self.config:
            raise ConfigError(f"this encoder reads games of {self.config}, not {game.config}")
        core = self._core
        if core is None:
            core = self._core = CoreGame(self.config, self._latest)
        count = game.event_count
        if game is not self._game or count < self._seen:
            return self._load(core, game)
        draw, pass_ = self.num_actions - 2, self.num_actions - 1
        state = core.state
        for code in game.event_codes(self._seen).tolist():
            kind = code & 7
            if kind == K_PLAY:
                core.step(code >> EV_PAYLOAD & 0x3FF)
            elif kind == K_DRAW:
                at = state.bone_pos[0]
                if at >= self.config.num_tiles or state.bone[0, at] != code >> EV_PAYLOAD & 0x3FF:  # reordered
                    return self._load(core, game)
                core.step(draw)
            elif kind == K_PASS:
                core.step(pass_)
            elif kind == K_START and code >> EV_ROUND >= self._dealt:  # a round the game dealt after the load
                r = code >> EV_ROUND
                if state.deals[0, r].tolist() != deal_order(*game.deal_tiles(r)):
                    return self._load(core, game)
                self._dealt = r + 1
        self._seen = count
        return core

    def _load(self, core: CoreGame, game: Game) -> CoreGame:
        core.load(game)
        self._game, self._seen, self._dealt = game, game.event_count, game.round_index + 1
        return core

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation of ``seat`` (its own hand, everything public), a new array."""
        return self.select(self._follow(game).observation(seat))

    def history(self, game: Game, seat: int) -> np.ndarray:
        """The round in play's public events as ``seat`` sees them (the env's ``history`` entry,
        :meth:`~cf_env.observation.ObservationEncoder.history_length` rows of ``[seat relative to
        the observer, EventKind, action id, tile index]`` int16, -1 padded), a new array."""
        return self._follow(game).history(seat)

    def observe(self, game: Game, history: bool = False) -> dict[str, np.ndarray]:
        """What the seat to move acts on, as the env gives it: ``{"observation", "action_mask"}``,
        and ``"history"`` when asked."""
        seat = game.current_player
        out = {"observation": self.encode(game, seat), "action_mask": self.mask(game.legal_bits)}
        if history:
            out["history"] = self.history(game, seat)
        return out

