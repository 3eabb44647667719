"""A game's state: the value types it hands out, how it packs events and placements into ints,
and :class:`GameState`, the slots every part of :class:`cf_env.engine.Game` reads and writes.

Names follow the engine's one vocabulary (see :mod:`cf_env.engine`). A set of tiles is an int
whose bits are action ids (:mod:`cf_env.engine.actions`); "the plays a player has" is
``hand & open_plays``, where ``open_plays`` has the rows of the pip values that may be matched now.
"""

from __future__ import annotations

from array import array
from enum import IntEnum
from typing import NamedTuple

import numpy as np

from cf_env.engine.actions import ActionTable, Tile
from cf_env.engine.config import RulesConfig

__all__ = ["Event", "EventKind", "GameState", "Pending", "Placement", "Role", "RoundEnd", "StateView", "unpack_event"]


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


class StateView(NamedTuple):
    """Read-only references to a game's live state, handed over in one call for the observation
    encoder's hot path (:meth:`Game.state_view`). It holds hidden information (every hand, the
    boneyard size): the encoder picks what a seat may see. Do not mutate the lists."""

    hands: list  #: per seat, the hand as action bits
    played: int  #: tiles on this round's layout, as action bits
    current_player: int  #: the seat to decide; -1 once the game is over
    drawn: int  #: tile index the current player just drew and may play or keep (R12); -1 if none
    pending: int  #: forced slots still empty (R9 arms, R10 toes); 0 when play is free
    pending_value: int  #: the pip value the forced slots need
    pending_role: int  #: ``Role.ARM`` or ``Role.TOE`` while ``pending``
    unmatched: list  #: per seat, bitmask of the values it could not match (R17)
    open_ends: list  #: per pip value, free open ends showing it
    hand_sizes: list  #: per seat
    boneyard_size: int
    round_index: int
    totals: list  #: per seat, points so far
    played_by: list  #: per seat, the tiles it placed this round as action bits (the starting double too)
    draws: list  #: per seat, tiles it drew from the boneyard this round (R6 search draws included)
    void_at: list  #: per seat, a bytearray over pip values: 1 + ``draws`` just before its latest failure
    #: facing that value this round (a draw or a forced pass while it was open or forced, R12/R13); 0 if none


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


# A layout entry packs one Placement into an int: match, expose, parent + 1, arm + 1, role, player,
# each at its offset (parent and arm are stored + 1 so that the centre's -1 packs as 0).
L_EXPOSE, L_PARENT, L_ARM, L_ROLE, L_PLAYER = 5, 10, 18, 22, 25
PIP_MASK, PARENT_MASK, ARM_MASK, ROLE_MASK = 31, 255, 15, 7


def pack_placement(match: int, expose: int, parent: int, arm: int, role: int, player: int) -> int:
    return (match | expose << L_EXPOSE | (parent + 1) << L_PARENT | (arm + 1) << L_ARM | role << L_ROLE
            | player << L_PLAYER)


def unpack_placement(entry: int) -> Placement:
    return Placement(entry & PIP_MASK, entry >> L_EXPOSE & PIP_MASK, (entry >> L_PARENT & PARENT_MASK) - 1,
                     (entry >> L_ARM & ARM_MASK) - 1, Role(entry >> L_ROLE & ROLE_MASK), entry >> L_PLAYER)


NO_CURRENT = -1
new_tuple = tuple.__new__
TOES_PER_DOUBLE = 3  #: R10: the toe slots a double opens
R_ARM, R_LINE, R_DOUBLE, R_TOE = int(Role.ARM), int(Role.LINE), int(Role.DOUBLE), int(Role.TOE)
K_PLAY, K_DRAW, K_PASS = int(EventKind.PLAY), int(EventKind.DRAW), int(EventKind.PASS)
K_START, K_ROUND_END = int(EventKind.START), int(EventKind.ROUND_END)


class GameState:
    """The slots of a :class:`~cf_env.engine.Game`, declared once for the parts it is made of
    (turn flow in ``game``, the event log and state view in ``views``, records in
    ``records``, the layout's geometry in ``geometry``), each of which only adds methods."""

    __slots__ = (
        "config", "_actions", "_rng", "_scripted", "_deals", "_events", "_num_players", "_num_values",
        "_draw_action", "_pass_action", "_draw_bit", "_pass_bit", "_until_playable", "_hands", "_hand_sizes",
        "_boneyard", "_open_ends", "_end_nodes", "_free_open", "_open_values", "_open_plays", "_pending",
        "_pending_value", "_pending_parent", "_pending_role", "_layout", "_played", "_unmatched", "_current",
        "_legal", "_drawn", "_round_index", "_round_scores", "_totals", "_over", "_winners", "_round_ends",
        "_round_tag", "_arms", "_points", "_round_hands", "_played_by", "_draws", "_void_at", "_round_start",
    )

    config: RulesConfig
    _actions: ActionTable  # the action table of these rules
    _rng: np.random.Generator  # shuffles every round that has no scripted deal
    _scripted: list  # validate_deals's per-round deals (None: shuffle)
    _deals: list[bytes]  # per round: the hands in seat order, then the boneyard top first
    _events: array  # the event log, packed ints (unpack_event)
    _num_players: int
    _num_values: int  # max_pip + 1
    _draw_action: int
    _pass_action: int
    _draw_bit: int
    _pass_bit: int
    _until_playable: bool  # draw_rule == "until_playable" (R12)
    _hands: list[int]  # per seat, the hand as action bits
    _hand_sizes: list[int]
    _boneyard: list[int]  # tile indices, the top last (pop() draws)
    _open_ends: list[int]  # per pip value, free open ends showing it
    _end_nodes: list[list[int]]  # per pip value, the layout indices whose free end shows it, oldest first
    _free_open: int  # action bits of the plays onto free open ends
    _open_values: int  # bitmask of the values a free open end shows
    _open_plays: int  # action bits of the plays allowed now (the forced slots' only while pending)
    _pending: int  # forced slots still empty (R9 arms, R10 toes)
    _pending_value: int
    _pending_parent: int  # the layout index the forced slots grow from
    _pending_role: int  # R_ARM or R_TOE
    _layout: list[int]  # packed placements (pack_placement), in the order played
    _played: int  # action bits of the tiles on this round's layout
    _unmatched: list[int]  # per seat, bitmask of the values it could not match (R17)
    _current: int  # the seat to decide; NO_CURRENT once the game is over
    _legal: int  # action bits of its legal actions
    _drawn: int  # tile just drawn that may be played or kept (R12), -1 if none
    _round_index: int
    _round_scores: list[list[int]]
    _totals: list[int]
    _over: bool
    _winners: list[int]
    _round_ends: list[tuple[int, int]]  # (RoundEnd, who went out or -1)
    _round_tag: int  # the round's bits of an event code
    _arms: int  # centre arms (R9)
    _points: tuple[int, ...]  # R15 per tile
    _round_hands: list[tuple[int, ...]]  # per finished round, each seat's hand bits at its end
    _played_by: list[int]  # per seat, action bits of the tiles it placed this round
    _draws: list[int]  # per seat, tiles drawn this round (R6 search draws included)
    _void_at: list[bytearray]  # per seat and value: 1 + draws before its latest failure facing it
    _round_start: int  # index in _events of the round's first entry
