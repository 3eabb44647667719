"""The Chicken Foot game, one decision at a time: :class:`Game`, a readable view over one game of
the compiled engine (:class:`cf_env.core.CoreGame`, the batched engine's rules at one game).

Usage::

    import numpy as np
    from cf_env import Game, RulesConfig

    game = Game(RulesConfig(num_players=4, max_pip=9), seed=7)
    rng = np.random.default_rng(0)
    while not game.is_over:
        legal = game.legal_actions()          # sorted action ids of game.current_player
        game.apply(legal[rng.integers(len(legal))])
    print(game.round_scores, game.totals, game.winners)

The rules run in compiled code, the env's and the batched engine's (docs/contributing.md says
where each of R1-R17 lives). What ``Game`` adds is what a reader wants and the arrays do not keep:
the whole game's event log (:meth:`events`, hidden draws included, R17 applied per observer), the
layout's geometry (which centre arm or toe each tile lies on: :meth:`layout`, for render, replay
and OpenSpiel), records and copies. It returns outcomes (scores, winners, round ends), never
rewards. Forced steps (dealing, the R6 search draws, placing the starting double) happen inside;
every :meth:`apply` is one decision of :attr:`current_player`, and rounds follow one another on
their own until the last one ends.

Every round is dealt when the game is made: scripted deals as given, the others one permutation a
round, drawn from ``seed``'s generator in round order (as the env's ``reset`` deals).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from functools import cache
from operator import index as as_index
from typing import Any

import numpy as np

from cf_env.core import SEAT_BITS, CoreGame
from cf_env.engine.actions import Tile, action_table, bit_set
from cf_env.engine.config import RulesConfig
from cf_env.engine.errors import ConfigError, DealError, GameOverError, IllegalActionError, RecordError
from cf_env.engine.records import RECORD_VERSION, Dealt, deal_to_json, split_deal
from cf_env.engine.state import (
    EV_PAYLOAD,
    EV_PLAYER,
    EV_ROUND,
    K_DRAW,
    K_PASS,
    K_PLAY,
    K_ROUND_END,
    K_SEARCH_DRAW,
    K_START,
    Event,
    EventKind,
    Pending,
    Placement,
    Role,
    RoundEnd,
)
from cf_env.observation import ObservationEncoder

__all__ = ["Game", "GameEncoder"]



@cache
def _layout_encoder(config: RulesConfig) -> ObservationEncoder:
    """The observation layout of ``config`` (the core writes into it), made once a process."""
    return ObservationEncoder(config)


class Game:
    """A whole Chicken Foot game (all rounds), stepped one decision at a time.

    Args:
        config: the rules; default :class:`RulesConfig()`.
        seed: an int, ``None`` or an ``np.random.Generator``; it shuffles every round that has no
            scripted deal (the only randomness in the game), all of them when the game is made.
        deals: optional scripted per-round deals (see :func:`~cf_env.engine.validate_deals`);
            rounds past the end of the list, or given as ``None``, are shuffled.

    Raises:
        DealError: a scripted deal is malformed (nothing is drawn from ``seed``).
    """

    __slots__ = ("config", "core", "_state", "_t", "_events", "_round_start", "_layout", "_end_nodes", "_parent",
                 "_finished")

    def __init__(self, config: RulesConfig | None = None, *, seed: int | np.random.Generator | None = None,
                 deals: Sequence[Any] | None = None) -> None:
        cfg = config if config is not None else RulesConfig()
        if not isinstance(cfg, RulesConfig):
            raise TypeError(f"config must be a RulesConfig, got {type(cfg).__name__}")
        self._bind(CoreGame(cfg, _layout_encoder(cfg)))
        status = self.core.reset(seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed), deals)
        self._open_round(0)
        self._log_round_ends(status >> SEAT_BITS)

    def _bind(self, core: CoreGame) -> None:
        self.config = core.config
        #: the compiled game this one views (its arrays are the state; read, do not write)
        self.core = core
        self._state = core.state
        self._t = action_table(core.config.max_pip)
        self._events = array("i")  # the whole game's event log, packed (unpack_event)
        self._round_start = 0  # index in _events of the round in play's first entry
        self._layout: list[Placement] = []  # this round's placements, in the order played
        self._end_nodes: list[list[int]] = []  # per pip value, the layout indices whose free end shows it, oldest first
        self._parent = 0  # the layout index the forced slots (R9 arms, R10 toes) grow from
        self._finished = 0  # rounds finished (logged)

    # ------------------------------------------------------------------ the event log, as the core goes

    def _log(self, kind: int, p: int, payload: int, r: int) -> None:
        self._events.append(kind | p << EV_PLAYER | payload << EV_PAYLOAD | r << EV_ROUND)

    def _open_round(self, r: int) -> None:
        """Log round ``r``'s R6 search draws and its starting double (what the core did to deal
        it), and start its layout."""
        s, cfg = self._state, self.config
        n, k = cfg.num_players, cfg.max_pip + 1
        self._round_start = len(self._events)
        holder = int(s.starter[0, r])
        searched = int(s.search_draws[0, r])
        dealt = n * cfg.hand_size
        for i in range(searched):  # the search ends with the holder drawing the double
            self._log(K_SEARCH_DRAW, (holder - searched + 1 + i) % n, int(s.deals[0, r, dealt + i]), r)
        start = cfg.max_pip - r
        self._log(K_START, holder, Tile(start, start).index, r)
        self._layout = [Placement(start, start, -1, -1, Role.CENTER, holder)]
        self._end_nodes = [[] for _ in range(k)]
        self._parent = 0

    def _log_round_ends(self, finished: int) -> None:
        """Log the rounds that ended before ``finished`` (rounds finished now) and were not logged
        yet, and open the ones dealt after them."""
        s = self._state
        for r in range(self._finished, finished):
            ended = s.end_hands[0, r].any(axis=1)
            out = int(np.argmin(ended)) if not ended.all() else -1  # who went out (R14), else blocked
            self._log(K_ROUND_END, out & 0xFF, int(RoundEnd.DOMINO if out >= 0 else RoundEnd.BLOCKED), r)
            if r + 1 < self.config.rounds:
                self._open_round(r + 1)
        self._finished = finished

    def _place(self, a: int, commit: bool) -> Placement:
        """Where play ``a`` lies (R8-R10: a forced slot first, else the open end of that value open
        longest); with ``commit``, put it there."""
        s, t, layout = self._state, self._t, self._layout
        m, x = t.match[a], t.expose[a]
        pend = int(s.pending[0])
        if pend:
            parent, role = self._parent, Role(int(s.pending_role[0]))
            arm = (self.config.center_arms - pend) if role == Role.ARM else layout[parent].arm
        else:
            parent = self._end_nodes[m][0]
            arm = layout[parent].arm
            role = Role.DOUBLE if m == x else Role.LINE
        placement = Placement(m, x, parent, arm, role, self.core.current_player)
        if commit:
            node = len(layout)
            if not pend:
                self._end_nodes[m].pop(0)
                if role == Role.DOUBLE:
                    self._parent = node
            if role != Role.DOUBLE:
                self._end_nodes[x].append(node)
            layout.append(placement)
        return placement

    # ------------------------------------------------------------------ the one mutating call

    def apply(self, action: int) -> int:
        """Apply one decision of :attr:`current_player`; returns how many rounds have ended so far
        (so a caller sees a round end as a change of the returned count).

        Raises:
            IllegalActionError: the action is not legal now (nothing changes).
            GameOverError: the game has ended.
        """
        a = action if type(action) is int else self._coerce(action)
        core = self.core
        if a < 0 or a >= self._t.num_actions or core.current_player < 0 or not core.legal_flags[a]:
            self._reject(a)
        s, p, r = self._state, core.current_player, self.round_index
        if a < self._t.draw:
            self._place(a, True)
            self._log(K_PLAY, p, a, r)
        elif a == self._t.draw:
            self._log(K_DRAW, p, int(s.bone[0, s.bone_pos[0]]), r)
        else:
            self._log(K_PASS, p, int(s.drawn[0] >= 0), r)  # 1: a playable drawn tile kept (R17: see events())
        self._log_round_ends(core.step(a) >> SEAT_BITS)
        return self._finished

    def _coerce(self, action: Any) -> int:
        try:
            return as_index(action)
        except TypeError:
            raise IllegalActionError(f"an action must be an int id, got {action!r}") from None

    def _reject(self, a: int) -> None:
        if self.is_over:
            raise GameOverError("the game is over; start a new Game")
        strings = self._t.strings
        name = strings[a] if 0 <= a < self._t.num_actions else "out of range"
        raise IllegalActionError(
            f"action {a} ({name}) is not legal for player {self.current_player}; legal: "
            f"{[strings[b] + f' ({b})' for b in self.legal_actions()]}"
        )

    def apply_all(self, actions: Iterable[int]) -> None:
        """Apply a sequence of actions; on an illegal one raises :class:`RecordError` naming its
        position (the actions before it stay applied)."""
        for i, a in enumerate(actions):
            try:
                self.apply(a)
            except (IllegalActionError, GameOverError) as exc:
                raise RecordError(f"action #{i} ({a!r}) does not replay: {exc}") from exc

    def set_next_draw(self, tile: int) -> None:
        """Put ``tile`` (a tile index; it must be in the boneyard) on top of the boneyard, so the
        next draw takes it: for frameworks that model each draw as a chance outcome (the OpenSpiel
        game). The round's deal in :meth:`to_record` is kept in step, so records still replay.

        Raises:
            DealError: the tile is not in the boneyard (nothing changes).
        """
        s = self._state
        top = int(s.bone_pos[0])
        try:
            j = top + s.bone[0, top:].tolist().index(as_index(tile))
        except (ValueError, TypeError):
            raise DealError(f"tile {tile!r} is not in the boneyard; it holds {self.boneyard_tiles()}") from None
        for order in (s.bone[0], s.deals[0, self.round_index]):
            order[j], order[top] = order[top], order[j]

    # ------------------------------------------------------------------ read-only views

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def current_player(self) -> int:
        """Seat that must decide now; -1 once the game is over."""
        return self.core.current_player

    @property
    def is_over(self) -> bool:
        return self.core.current_player < 0

    @property
    def legal_bits(self) -> int:
        """Legal actions as an int whose bit ``a`` is set when action ``a`` is legal: the fast path
        beside :meth:`legal_actions` (no list is built)."""
        return self.core.legal_bits

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of :attr:`current_player` (empty once the game is over)."""
        return self.core.legal_flags.nonzero()[0].tolist() if not self.is_over else []

    def is_legal(self, action: int) -> bool:
        return not self.is_over and bit_set(self.core.legal_bits, action)

    @property
    def round_index(self) -> int:
        """0-based index of the round being played (of the last round once the game is over)."""
        return int(self._state.round_index[0])

    @property
    def starting_double(self) -> int:
        """Pip value of this round's starting double (R5)."""
        return self.config.max_pip - self.round_index

    @property
    def dealer(self) -> int:
        """Dealer of this round (R6): ``round_index mod num_players``."""
        return self.round_index % self.num_players

    def hand(self, player: int) -> list[Tile]:
        """The tiles in ``player``'s hand, sorted."""
        return [Tile.from_index(t) for t in np.flatnonzero(self._state.hand[0, player]).tolist()]

    def hand_bits(self, player: int) -> int:
        """``player``'s hand as action bits (a tile {m, x} sets bits ``m*K+x`` and ``x*K+m``)."""
        return self._bits(self._state.hand[0, player])

    def _bits(self, flags: np.ndarray) -> int:
        bits, tile_bits = 0, self._t.tile_bits
        for t in np.flatnonzero(flags).tolist():
            bits |= tile_bits[t]
        return bits

    @property
    def hand_sizes(self) -> list[int]:
        return self._state.hand_sizes[0].tolist()

    @property
    def boneyard_size(self) -> int:
        return self.config.num_tiles - int(self._state.bone_pos[0])

    def boneyard_tiles(self) -> list[int]:
        """The tile indices left in the boneyard, sorted (hidden information; not their order)."""
        s = self._state
        return sorted(s.bone[0, s.bone_pos[0]:].tolist())

    def hidden_tiles(self, seat: int) -> np.ndarray:
        """What ``seat`` cannot see (hidden information, for a critic or a belief's labels, never
        for a policy): ``(n * T,)`` float32 flags, the opponents' hands in seat order from the
        seat's left (``n - 1`` rows of ``T``), then the boneyard's tiles; laid out as
        :meth:`cf_env.vector.VectorGame.hidden_tiles`."""
        return self.core.hidden_tiles(seat)

    @property
    def played_bits(self) -> int:
        """Tiles on the layout this round, as action bits: the fast path beside :meth:`layout`."""
        return self._bits(self._state.played[0])

    @property
    def open_ends(self) -> list[int]:
        """Open ends per pip value (the toes and centre arms still to fill are in :attr:`pending`)."""
        return self._state.open_ends[0].tolist()

    @property
    def open_values(self) -> int:
        """Bitmask of the pip values a play may match right now."""
        s = self._state
        if s.pending[0]:
            return 1 << int(s.pending_value[0])
        return sum(1 << v for v in np.flatnonzero(s.open_ends[0]).tolist())

    @property
    def pending(self) -> Pending | None:
        """The forced slots (R9 centre arms or R10 toes) that must be filled first, if any."""
        s = self._state
        if not s.pending[0]:
            return None
        return Pending(Role(int(s.pending_role[0])), int(s.pending_value[0]), int(s.pending[0]))

    @property
    def drawn_tile(self) -> Tile | None:
        """The tile just drawn by :attr:`current_player` that may be played or kept (R12)."""
        drawn = int(self._state.drawn[0])
        return Tile.from_index(drawn) if drawn >= 0 and not self.is_over else None

    def unmatched(self, player: int) -> int:
        """Bitmask of the pip values ``player`` could not match at its latest draw or forced pass
        this round (public information, R17)."""
        return int(self._state.unmatched[0, player])

    def played_by(self, player: int) -> list[Tile]:
        """The tiles ``player`` placed on this round's layout (the starting double included), sorted."""
        return [Tile.from_index(t) for t in np.flatnonzero(self._state.owner[0] == player).tolist()]

    def draws(self, player: int) -> int:
        """Tiles ``player`` drew from the boneyard this round (R6 search draws included; public)."""
        return int(self._state.draws[0, player])

    def void_draws(self, player: int) -> dict[int, int]:
        """For each pip value ``player`` has failed to match this round (a draw or a forced pass
        while it was open or forced), the tiles it has drawn since its latest such failure, the
        failure's own draw included: 0 means it surely holds no tile with that value (public, R17)."""
        d = self.draws(player) + 1
        return {v: d - at for v, at in enumerate(self._state.void_at[0, player].tolist()) if at}

    @property
    def rounds_finished(self) -> int:
        return self._finished

    @property
    def round_scores(self) -> list[list[int]]:
        """Points of each finished round, seat order (R15)."""
        return self.core.round_scores(self.rounds_finished)

    @property
    def round_end_hands(self) -> list[list[list[Tile]]]:
        """For each finished round, the tiles each seat held when it ended (what R15 scored),
        seat order: a tile drawn on the round's last action included."""
        ends = self._state.end_hands[0, :self.rounds_finished]
        return [[[Tile.from_index(t) for t in np.flatnonzero(hand).tolist()] for hand in hands] for hands in ends]

    @property
    def round_end_reasons(self) -> list[tuple[RoundEnd, int]]:
        """For each finished round: how it ended and who went out (-1 when blocked)."""
        out = []
        for code in self._events:
            if code & 7 == K_ROUND_END:
                player = code >> EV_PLAYER & 0xFF
                out.append((RoundEnd(code >> EV_PAYLOAD & 0x3FF), -1 if player == 0xFF else player))
        return out

    @property
    def totals(self) -> list[int]:
        return self.core.totals

    @property
    def winners(self) -> list[int]:
        """Seats that share the win (R16); empty until the game is over."""
        return self.core.winners if self.is_over else []

    # ------------------------------------------------------------------ the layout's geometry

    def placement_of(self, action: int) -> Placement:
        """Where the legal play ``action`` of :attr:`current_player` would lie, before it is made:
        the :class:`Placement` that :meth:`layout` will end with after ``apply(action)`` (R8-R10:
        a forced slot first, else the open end of that value that has been open longest). Raises
        :class:`IllegalActionError` for anything but a legal play."""
        a = self._coerce(action)
        if a < 0 or a >= self._t.draw or not self.is_legal(a):
            raise IllegalActionError(f"action {action!r} is not a legal play now: no tile to place")
        return self._place(a, False)

    def layout(self) -> list[Placement]:
        """Every tile on this round's layout, in the order played; index 0 is the centre double."""
        return list(self._layout)

    def open_end_nodes(self) -> list[list[int]]:
        """For each pip value, the layout indices whose free end shows it (oldest first)."""
        return [list(nodes) for nodes in self._end_nodes]

    # ------------------------------------------------------------------ the event log

    @property
    def event_count(self) -> int:
        """Entries in the whole game's event log so far (read the new ones with :meth:`event_codes`)."""
        return len(self._events)

    def event_codes(self, start: int = 0) -> np.ndarray:
        """The whole game's events from entry ``start`` on as packed int32 codes,
        ``kind | player << 3 | payload << 11 | round << 21`` (:func:`~cf_env.engine.unpack_event`
        reads one), the payload an action (PLAY), a tile (DRAW, SEARCH_DRAW, START), 1 for a PASS
        that keeps a drawn tile, or the RoundEnd reason; unfiltered: they hold hidden tiles, for
        callers with every hand in view (the lab's luck-corrected evaluation)."""
        return np.frombuffer(self._events, np.int32)[start:].copy()

    def round_events(self, observer: int | None = None) -> list[Event]:
        """:meth:`events` of the round in play (of the last round once the game is over)."""
        return self._decode_events(self._events[self._round_start:], observer)

    def events(self, observer: int | None = None) -> list[Event]:
        """The event log of the whole game as ``observer`` sees it (R17); ``observer=None`` shows
        everything, for replays and debugging.

        Hidden from everyone but the drawer: the tile drawn, and whether a drawn tile was playable.
        At the table a player who draws a playable tile and keeps it looks exactly like one whose
        drawn tile could not be played (both draw, then the turn moves on), so in another seat's
        view the keeping PASS is left out; in the drawer's view it stays, with ``detail`` 1."""
        return self._decode_events(self._events, observer)

    def _decode_events(self, raw: Iterable[int], observer: int | None) -> list[Event]:
        out = []
        for v in raw:
            kind = EventKind(v & 7)
            player = v >> EV_PLAYER & 0xFF
            payload = v >> EV_PAYLOAD & 0x3FF
            action = tile = None
            detail = 0
            if kind == EventKind.PLAY:
                action = payload
                tile = Tile.from_index(self._t.action_tile[payload])
            elif kind in (EventKind.DRAW, EventKind.SEARCH_DRAW):
                action = self._t.draw if kind == EventKind.DRAW else None
                if observer is None or observer == player:
                    tile = Tile.from_index(payload)
            elif kind == EventKind.START:
                tile = Tile.from_index(payload)
            elif kind == EventKind.PASS:
                if payload and observer is not None and observer != player:
                    continue
                action = self._t.pass_
                detail = payload
            else:
                detail = payload
                player = -1 if player == 0xFF else player
            out.append(Event(kind, v >> EV_ROUND, player, action, tile, detail))
        return out

    def actions(self) -> list[int]:
        """Every decision taken so far, in order."""
        return list(self.core.actions)

    # ------------------------------------------------------------------ records and copies

    def deal_tiles(self, r: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """Round ``r``'s deal (``r`` up to the round in play) as tile indices: ``(hands in seat
        order, boneyard top first)`` (hidden information, as :meth:`to_record` holds it)."""
        if not 0 <= r <= self.round_index:
            raise IndexError(f"round {r} has not been dealt (rounds dealt: 0..{self.round_index})")
        return split_deal(self._state.deals[0, r].tolist(), self.config)

    def all_deals(self) -> Dealt:
        """Every round's deal as tile indices, the rounds to come included (hidden information):
        ``Game(config, deals=game.all_deals())`` replayed through :meth:`actions` is this game."""
        return self.core.all_deals()

    def to_record(self) -> dict[str, Any]:
        """Plain-JSON record (config, the deals of the rounds dealt so far, actions) that
        :meth:`from_record` replays exactly."""
        return {
            "version": RECORD_VERSION,
            "config": self.config.to_dict(),
            "deals": [deal_to_json(*self.deal_tiles(r)) for r in range(self.round_index + 1)],
            "actions": self.actions(),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Game:
        """Replay a record made by :meth:`to_record`."""
        if not isinstance(record, dict) or not {"config", "deals", "actions"} <= set(record):
            raise RecordError("a game record is a dict with 'config', 'deals' and 'actions'")
        if record.get("version", RECORD_VERSION) != RECORD_VERSION:
            raise RecordError(f"record version {record.get('version')!r} is not {RECORD_VERSION}")
        return cls.replay(RulesConfig.from_dict(record["config"]), record["deals"], record["actions"])

    @classmethod
    def replay(cls, config: RulesConfig, deals: Sequence[Any], actions: Iterable[int]) -> Game:
        """A game of ``config`` dealt ``deals`` and stepped through ``actions``."""
        game = cls(config, deals=deals)
        game.apply_all(actions)
        return game

    def rewound(self) -> Game:
        """A new game of the same rules and deals at its start: applying :meth:`actions` to it
        plays this game again (for code that follows finished games with every hand in view)."""
        return Game(self.config, deals=self.all_deals())

    def clone(self) -> Game:
        """An independent copy (for search agents); the copy shares no mutable state."""
        new = Game.__new__(Game)
        new._bind(self.core.copy())
        new._events = array("i", self._events)
        new._round_start = self._round_start
        new._layout = list(self._layout)
        new._end_nodes = [list(nodes) for nodes in self._end_nodes]
        new._parent, new._finished = self._parent, self._finished
        return new

    def __copy__(self) -> Game:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self.clone()

    def __getstate__(self) -> dict[str, Any]:
        """Pickling: the rules, every round's deal and the actions (the game is replayed)."""
        return {"config": self.config.to_dict(), "deals": self._state.deals[0].tolist(), "actions": self.actions()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        cfg = RulesConfig.from_dict(state["config"])
        game = Game.replay(cfg, Dealt((split_deal(order, cfg) for order in state["deals"]), cfg), state["actions"])
        for name in Game.__slots__:
            setattr(self, name, getattr(game, name))

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"player {self.current_player} to move"
        return f"<Game round {self.round_index + 1}/{self.config.rounds}, {state}, totals {self.totals}>"


class GameEncoder(ObservationEncoder):
    """An :class:`~cf_env.observation.ObservationEncoder` that also reads a :class:`Game`: each
    seat's observation and history, as the compiled engine under the game writes them (the env's
    writers, the only ones). For loops that drive a :class:`Game` directly (a terminal or web game,
    the OpenSpiel adapter, tests): ``encoder.observe(game)`` is what the env gives the seat to move."""

    def _core(self, game: Game) -> CoreGame:
        if game.config != self.config:
            raise ConfigError(f"this encoder reads games of {self.config}, not {game.config}")
        return game.core

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation of ``seat`` (its own hand, everything public), a new array."""
        return self.select(self._core(game).observation(seat))

    def history(self, game: Game, seat: int) -> np.ndarray:
        """The round in play's public events as ``seat`` sees them (the env's ``history`` entry,
        :meth:`~cf_env.observation.ObservationEncoder.history_length` rows of ``[seat relative to
        the observer, EventKind, action id, tile index]`` int16, -1 padded), a new array."""
        return self._core(game).history(seat)

    def observe(self, game: Game, history: bool = False) -> dict[str, np.ndarray]:
        """What the seat to move acts on, as the env gives it: ``{"observation", "action_mask"}``,
        and ``"history"`` when asked."""
        seat = game.current_player
        out = {"observation": self.encode(game, seat), "action_mask": self.mask(game.legal_bits)}
        if history:
            out["history"] = self.history(game, seat)
        return out
