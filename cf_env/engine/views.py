"""What a game shows of itself as it goes: the event log, each seat's history and the state
table, kept current move by move (:class:`GameViews`, a part of :class:`cf_env.engine.Game`)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from cf_env.engine.actions import Tile
from cf_env.engine.state import (
    EV_PAYLOAD,
    EV_PLAYER,
    EV_ROUND,
    K_DRAW,
    K_PASS,
    K_PLAY,
    K_ROUND_END,
    K_START,
    R_ARM,
    Event,
    EventKind,
    FloatSlots,
    GameState,
    StateView,
    float_view,
    new_tuple,
)
from cf_env.engine.table import SCORE_FACTOR

_KEY_MASK = (1 << EV_ROUND) - 1  #: an event code's kind, player and payload, without its round


class GameViews(GameState):
    """The event log (:meth:`events`, :meth:`actions`, packed codes), each seat's view of the
    round's events (:meth:`history`), the state table (:meth:`table`) and the one-read
    :meth:`state_view`. The turn flow (:mod:`cf_env.engine.game`) appends to the log and writes
    the table's and history's entries a move touches; these fill them when first read."""

    __slots__ = ()

    def _table_failure(self, tab: FloatSlots, p: int, before: int, drew: bool) -> None:
        """Seat ``p``'s ``unmatched``, ``void`` and ``void_draws`` entries after a failure to match
        (``before``: its unmatched values until now; ``drew``: the failure was a draw, so every
        value it has failed on counts one more draw)."""
        tl = self._table_layout
        faced = self._unmatched[p]
        um, vo, vd = tl.unmatched_of[p], tl.void_of[p], tl.void_draws_of[p]
        changed = faced ^ before
        while changed:
            low = changed & -changed
            v = low.bit_length() - 1
            tab[um + v] = 1.0 if faced & low else 0.0
            changed ^= low
        at, d = self._void_at[p], self._draws[p] + 1
        if drew:
            for v, a in enumerate(at):
                if a:
                    tab[vd + v] = float(d - a)
        while faced:
            low = faced & -faced
            v = low.bit_length() - 1
            tab[vo + v] = 1.0
            if not drew:
                tab[vd + v] = float(d - at[v])
            faced ^= low

    def _fill_table(self) -> None:
        """Write the whole table from the state (when it is first read, and at each round's start)."""
        tl, n, w = self._table_layout, self._num_players, self._num_values * self._num_values
        tab = self._table
        assert tab is not None  # table() made it
        tab.fill(0.0)
        # the hands, the played-by sets and the layout as one int of action bits, unpacked in one go
        # into (2n + 1) rows of W flags, of which each tile's canonical bit is its 0/1 entry
        packed = self._played << (2 * n * w)
        for p in range(n):
            packed |= self._hands[p] << (p * w) | self._played_by[p] << ((n + p) * w)
        rows = 2 * n + 1
        flags = np.unpackbits(np.frombuffer(packed.to_bytes((rows * w + 7) // 8, "little"), np.uint8),
                              count=rows * w, bitorder="little").reshape(rows, w)[:, tl.tile_action]
        tab[tl.start["hand"]:tl.start["hand"] + n * tl.num_tiles] = flags[:n].ravel()
        tab[tl.start["played"]:tl.start["played"] + n * tl.num_tiles] = flags[n:2 * n].ravel()
        tab[tl.layout:tl.layout + tl.num_tiles] = flags[2 * n]
        on = []
        for p in range(n):
            tab[tl.hand_sizes + p] = self._hand_sizes[p]
            tab[tl.draws + p] = self._draws[p]
            tab[tl.scores + p] = self._totals[p] * SCORE_FACTOR
        if self._drawn >= 0 and not self._over:
            on.append(tl.drawn + self._drawn)
        if self._pending:
            on += [tl.pending_value + self._pending_value, tl.pending_kind + (self._pending_role != R_ARM)]
        for i in on:
            tab[i] = 1.0
        for p in range(self._num_players):
            at, d = self._void_at[p], self._draws[p] + 1
            faced = self._unmatched[p]
            v = 0
            while faced:
                if faced & 1:
                    tab[tl.unmatched_of[p] + v] = 1.0
                faced >>= 1
                v += 1
            for v, a in enumerate(at):
                if a:
                    tab[tl.void_of[p] + v] = 1.0
                    tab[tl.void_draws_of[p] + v] = d - a
        tab[tl.pending_count] = self._pending
        for v, e in enumerate(self._open_ends):
            if e:
                tab[tl.open_ends + v] = e
        tab[tl.boneyard] = len(self._boneyard)
        tab[tl.round] = self._round_index
        tab[tl.round + 1] = self.config.rounds - self._round_index - 1

    def _fill_history(self) -> None:
        """Every seat's view of the round's events so far (when first read, and at each round's start)."""
        assert self._history is not None  # history() made it
        self._history.fill(-1)
        self._history_bytes = [0] * self._num_players
        for code in self._events[self._round_start:]:
            kind = code & 7
            if kind != K_ROUND_END:
                self._history_append(code & _KEY_MASK)

    def _log(self, kind: int, p: int, payload: int, history: bool = True) -> None:
        """Append an event of the current round to the log and, for a move (``history``) once the
        history is kept, to each seat's view (a round's opening events reach the history through
        :meth:`_fill_history`, its end none)."""
        key = kind | p << EV_PLAYER | payload << EV_PAYLOAD
        self._events.append(key | self._round_tag)
        if history and self._history_view is not None:
            self._history_append(key)

    def _history_append(self, key: int) -> None:
        """One event (its code without the round) into each seat's view, as R17 lets it see it
        (see :meth:`history`): each seat's row as 8 bytes, worked out once per distinct event and
        config (``_history_rows``)."""
        tl = self._table_layout
        seen = tl.history_rows.get(key)
        if seen is None:
            seen = self._history_rows(key)
        h, rows = self._history_view, self._history_bytes
        assert h is not None  # only called once history() made it
        for s, base, row in seen:
            o = base + rows[s]
            h[o:o + 8] = row
            rows[s] += 8

    def _history_rows(self, key: int) -> tuple[tuple[int, int, bytes], ...]:
        """``(seat, where its view starts in bytes, its row as little-endian int16 bytes)`` for
        every seat that sees event ``key``."""
        kind, p, payload = key & 7, key >> EV_PLAYER & 0xFF, key >> EV_PAYLOAD & 0x3FF
        out = []
        for s in range(self._num_players):
            action = tile = -1
            if kind == K_PASS:
                if payload and p != s:  # a kept playable draw looks like any draw to the others
                    continue
                action = self._pass_action
            elif kind == K_PLAY:
                action, tile = payload, self._actions.action_tile[payload]
            else:  # DRAW, SEARCH_DRAW, START: the tile is seen by the drawer alone, a START's by all
                if kind == K_DRAW:
                    action = self._draw_action
                if p == s or kind == K_START:
                    tile = payload
            out.append((s, s * self._table_layout.history_length * 8, struct.pack("<4h", (p - s) % self._num_players, kind, action, tile)))
        rows = self._table_layout.history_rows[key] = tuple(out)
        return rows

    def state_view(self) -> StateView:
        """The live state in one read (see :class:`StateView`; built with ``tuple.__new__``, half
        the cost of the NamedTuple's keyword-checking constructor on this per-observation path)."""
        return new_tuple(StateView, (
            self._hands, self._played, self._current, -1 if self._over else self._drawn, self._pending, self._pending_value,
            self._pending_role, self._unmatched, self._open_ends, self._hand_sizes, len(self._boneyard), self._round_index, self._totals,
            self._played_by, self._draws, self._void_at))

    def table(self) -> np.ndarray:
        """The state as one float32 vector, kept current move by move from the first call on (the
        observation's fast path: :mod:`cf_env.engine.table` lists its blocks, ``table_layout(
        game.config)`` says where they are). It holds every hand: a reader picks what a seat may
        see. It is this game's live array, so it changes as the game goes on: do not write to it,
        and copy what you keep."""
        tab = self._table
        if tab is None:
            tab = self._table = np.zeros(self._table_layout.size, np.float32)
            self._table_view = float_view(tab)
            self._fill_table()
        return tab

    def history(self) -> np.ndarray:
        """Each seat's view of the round's events, kept current event by event from the first call
        on: an int16 array ``(num_players, L, 4)`` whose ``[seat]`` holds, in order, one row per
        event that seat may see, ``[seat relative to it (0 = itself, then clockwise), EventKind,
        action id, tile index]`` (the action -1 for SEARCH_DRAW and START; the tile -1 for DRAW and
        SEARCH_DRAW of other seats, for DRAW and PASS; another seat's PASS that keeps a drawn
        tile left out, R17 as in :meth:`events`), then rows of -1 up to ``L =
        table_layout(config).history_length``. The round in play's (the last round's once the
        game is over). This game's live array: do not write to it, copy what you keep."""
        hist = self._history
        if hist is None:
            hist = self._history = np.full((self._num_players, self._table_layout.history_length, 4), -1, np.int16)
            self._history_view = hist.reshape(-1).data.cast("B")
            self._fill_history()
        return hist

    def round_event_codes(self) -> np.ndarray:
        """The round in play's events (of the last round once the game is over) as packed int32
        codes, unfiltered, for compiled readers (:meth:`cf_env.ObservationEncoder.history`):
        ``kind | player << 3 | payload << 11 | round << 21``, the payload an action (PLAY), a tile
        (DRAW, SEARCH_DRAW, START), 1 for a PASS that keeps a drawn tile, or the RoundEnd reason.
        They hold hidden tiles: a reader must apply R17 as :meth:`events` does."""
        return self.event_codes(self._round_start)

    @property
    def event_count(self) -> int:
        """Entries in the whole game's event log so far (read the new ones with :meth:`event_codes`)."""
        return len(self._events)

    def event_codes(self, start: int = 0) -> np.ndarray:
        """The whole game's events from entry ``start`` on as packed int32 codes (the format of
        :meth:`round_event_codes`; :func:`unpack_event` reads one), unfiltered: for callers that follow a game as it goes with
        every hand in view (the lab's luck-corrected evaluation, ``lab.luck``)."""
        return np.frombuffer(self._events, dtype=np.int32)[start:].copy()

    def round_events(self, observer: int | None = None) -> list[Event]:
        """:meth:`events` of the round in play (of the last round once the game is over)."""
        start = self._round_start
        return self._decode_events(self._events[start:], observer)

    def events(self, observer: int | None = None) -> list[Event]:
        """The event log of the whole game as ``observer`` sees it (R17); ``observer=None`` shows
        everything, for replays and debugging.

        Hidden from everyone but the drawer: the tile drawn, and whether a drawn tile was playable.
        At the table a player who draws a playable tile and keeps it looks exactly like one whose
        drawn tile could not be played (both draw, then the turn moves on), so in another seat's
        view the keeping PASS is left out; in the drawer's view it stays, with ``detail`` 1."""
        return self._decode_events(self._events, observer)

    def _decode_events(self, raw: Any, observer: int | None) -> list[Event]:
        out = []
        for v in raw:
            kind = EventKind(v & 7)
            player = v >> EV_PLAYER & 0xFF
            payload = v >> EV_PAYLOAD & 0x3FF
            rnd = v >> EV_ROUND
            action = tile = None
            detail = 0
            if kind == EventKind.PLAY:
                action = payload
                tile = Tile.from_index(self._actions.action_tile[payload])
            elif kind in (EventKind.DRAW, EventKind.SEARCH_DRAW):
                action = self._draw_action if kind == EventKind.DRAW else None
                if observer is None or observer == player:
                    tile = Tile.from_index(payload)
            elif kind == EventKind.START:
                tile = Tile.from_index(payload)
            elif kind == EventKind.PASS:
                if payload and observer is not None and observer != player:
                    continue
                action = self._pass_action
                detail = payload
            else:
                detail = payload
                player = -1 if player == 0xFF else player
            out.append(Event(kind, rnd, player, action, tile, detail))
        return out

    def actions(self) -> list[int]:
        """Every decision taken so far, in order."""
        out = []
        play, draw = EventKind.PLAY, EventKind.DRAW
        for v in self._events:
            kind = v & 7
            if kind == play:
                out.append(v >> EV_PAYLOAD & 0x3FF)
            elif kind == draw:
                out.append(self._draw_action)
            elif kind == EventKind.PASS:
                out.append(self._pass_action)
        return out
