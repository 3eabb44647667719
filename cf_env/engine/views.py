"""What a game shows of itself as it goes: the event log and the state view (:class:`GameViews`,
a part of :class:`cf_env.engine.Game`). Each seat's observation and history are the compiled
engine's to write (:class:`cf_env.core.GameEncoder` reads them for a ``Game``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cf_env.engine.actions import Tile
from cf_env.engine.state import (
    EV_PAYLOAD,
    EV_PLAYER,
    EV_ROUND,
    Event,
    EventKind,
    GameState,
    StateView,
    new_tuple,
)

_KEY_MASK = (1 << EV_ROUND) - 1  #: an event code's kind, player and payload, without its round


class GameViews(GameState):
    """The event log (:meth:`events`, :meth:`actions`, packed codes) and the one-read
    :meth:`state_view`. The turn flow (:mod:`cf_env.engine.game`) appends to the log."""

    __slots__ = ()

    def _log(self, kind: int, p: int, payload: int) -> None:
        """Append an event of the current round to the log."""
        self._events.append(kind | p << EV_PLAYER | payload << EV_PAYLOAD | self._round_tag)

    def state_view(self) -> StateView:
        """The live state in one read (see :class:`StateView`; built with ``tuple.__new__``, half
        the cost of the NamedTuple's keyword-checking constructor on this per-observation path)."""
        return new_tuple(StateView, (
            self._hands, self._played, self._current, -1 if self._over else self._drawn, self._pending, self._pending_value,
            self._pending_role, self._unmatched, self._open_ends, self._hand_sizes, len(self._boneyard), self._round_index, self._totals,
            self._played_by, self._draws, self._void_at))

    def round_event_codes(self) -> np.ndarray:
        """The round in play's events (of the last round once the game is over) as packed int32
        codes, unfiltered, for compiled readers:
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
