"""A game's state as :class:`cf_env.Game` hands it out: the value types, and how events and
events pack into ints.

Names follow the engine's one vocabulary (see :mod:`cf_env.engine`).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from cf_env.engine.actions import Tile

__all__ = ["Event", "EventKind", "Pending", "Placement", "Role", "RoundEnd", "unpack_event"]


class EventKind(IntEnum):
    """Kinds of entry in the public event log."""

    SEARCH_DRAW = 0  #: R6: a forced draw while nobody holds the starting double
    START = 1  #: R6: the starting double is placed in the centre
    PLAY = 2  #: a decision: a tile played
    DRAW = 3  #: a decision: a tile drawn (the tile is shown only to its drawer)
    PASS = 4  #: a decision: keep a drawn tile (R12; ``detail`` 1 in the drawer's view) or skip with an empty boneyard (R13)
    ROUND_END = 5  #: R14: ``player`` went out (domino), or -1 when the layout is blocked


class RoundEnd(IntEnum):
    """How a round ended (R14)."""

    DOMINO = 0  #: a player played their last tile
    BLOCKED = 1  #: the boneyard is empty and no hand holds a legal play


class Role(IntEnum):
    """Where a tile sits on the layout."""

    CENTER = 0  #: the round's starting double
    ARM = 1  #: first tile of a centre arm (R9)
    LINE = 2  #: an ordinary tile played on an open end
    DOUBLE = 3  #: a double laid crosswise, the heel of a chicken foot (R10)
    TOE = 4  #: one of the three tiles played against a double (R10)


class Event(NamedTuple):
    """One entry of the event log. ``tile`` is ``None`` where the observer may not see it."""

    kind: EventKind
    round: int
    player: int
    action: int | None
    tile: Tile | None
    detail: int = 0  #: ROUND_END: the :class:`RoundEnd` reason; PASS: 1 when a playable drawn tile was kept


class Placement(NamedTuple):
    """A tile on the layout: ``match`` touches ``parent``'s open end, ``expose`` is its free end."""

    match: int
    expose: int
    parent: int  #: index of the tile it is played against; -1 for the centre double
    arm: int  #: centre arm it grows from (0-based); -1 for the centre double
    role: Role
    player: int



class Pending(NamedTuple):
    """Forced slots that must be filled before anything else (R9 centre arms, R10 toes)."""

    role: Role  #: ``Role.ARM`` or ``Role.TOE``
    value: int  #: the pip value every forced play must match
    #: slots still empty
    count: int  # type: ignore[assignment]  # the field shadows tuple.count


# Event packing: kind | player << 3 | payload << 11 | round << 21 (payload: action, tile or reason).
EV_PLAYER, EV_PAYLOAD, EV_ROUND = 3, 11, 21


def unpack_event(code: int) -> tuple[int, int, int, int]:
    """``(kind, player, payload, round)`` of one packed event code (:meth:`Game.event_codes`);
    ``player`` is 255 for a blocked round's end."""
    return code & 7, code >> EV_PLAYER & 0xFF, code >> EV_PAYLOAD & 0x3FF, code >> EV_ROUND


TOES_PER_DOUBLE = 3  #: R10: the toe slots a double opens
K_SEARCH_DRAW, K_START, K_PLAY, K_DRAW, K_PASS, K_ROUND_END = (int(k) for k in EventKind)  #: the kinds as plain ints
