"""The Chicken Foot game: a whole multi-round game as a pure-Python state machine.

Usage::

    import numpy as np
    from cf_env.engine import Game, RulesConfig

    game = Game(RulesConfig(num_players=4, max_pip=9), seed=7)
    rng = np.random.default_rng(0)
    while not game.is_over:
        legal = game.legal_actions()          # sorted action ids of game.current_player
        game.apply(legal[rng.integers(len(legal))])
    print(game.round_scores, game.totals, game.winners)

The engine returns outcomes (scores, winners, round ends), never rewards. Forced steps — dealing,
the R6 search draws and placing the starting double — happen inside it; every call to
:meth:`Game.apply` is one decision of :attr:`Game.current_player`, and rounds follow one another
on their own until the last one ends.

State is kept as ints: a set of tiles is an int whose bits are action ids (see
:mod:`cf_env.engine.actions`), and "the plays a player has" is ``hand & open`` where ``open`` has
the rows of the pip values that may be matched now (the open ends, or only the pending centre
arms / toes of R9 and R10).
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable, Sequence
from enum import IntEnum
from operator import index as _as_index
from typing import Any, NamedTuple, Protocol, cast

import numpy as np

from cf_env.engine.actions import Tile, action_table
from cf_env.engine.config import RulesConfig
from cf_env.engine.errors import DealError, GameOverError, IllegalActionError, RecordError
from cf_env.engine.scoring import r16_keys, tile_points, winner_flags
from cf_env.engine.table import SCORE_FACTOR, table_layout

__all__ = [
    "Event",
    "EventKind",
    "Game",
    "Pending",
    "Placement",
    "Role",
    "RoundEnd",
    "RECORD_VERSION",
    "StateView",
    "unpack_event",
    "validate_deals",
    "winners_of",
]

RECORD_VERSION = 1


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
_EV_PLAYER, _EV_PAYLOAD, _EV_ROUND = 3, 11, 21


def unpack_event(code: int) -> tuple[int, int, int, int]:
    """``(kind, player, payload, round)`` of one packed event code (:meth:`Game.event_codes`);
    ``player`` is 255 for a blocked round's end."""
    return code & 7, code >> _EV_PLAYER & 0xFF, code >> _EV_PAYLOAD & 0x3FF, code >> _EV_ROUND


# A layout entry packs one Placement into an int: match, expose, parent + 1, arm + 1, role, player,
# each at its offset (parent and arm are stored + 1 so that the centre's -1 packs as 0).
_L_EXPOSE, _L_PARENT, _L_ARM, _L_ROLE, _L_PLAYER = 5, 10, 18, 22, 25
_PIP_MASK, _PARENT_MASK, _ARM_MASK, _ROLE_MASK = 31, 255, 15, 7


def _pack_placement(match: int, expose: int, parent: int, arm: int, role: int, player: int) -> int:
    return (match | expose << _L_EXPOSE | (parent + 1) << _L_PARENT | (arm + 1) << _L_ARM | role << _L_ROLE
            | player << _L_PLAYER)


def _unpack_placement(entry: int) -> Placement:
    return Placement(entry & _PIP_MASK, entry >> _L_EXPOSE & _PIP_MASK, (entry >> _L_PARENT & _PARENT_MASK) - 1,
                     (entry >> _L_ARM & _ARM_MASK) - 1, Role(entry >> _L_ROLE & _ROLE_MASK), entry >> _L_PLAYER)


_NO_CUR = -1
_new_tuple = tuple.__new__
TOES_PER_DOUBLE = 3  #: R10: the toe slots a double opens
_ARM, _LINE, _DOUBLE, _TOE = int(Role.ARM), int(Role.LINE), int(Role.DOUBLE), int(Role.TOE)
_PLAY, _DRAW, _PASS = int(EventKind.PLAY), int(EventKind.DRAW), int(EventKind.PASS)
_START, _ROUND_END = int(EventKind.START), int(EventKind.ROUND_END)


def _parse_tile_pair(item: Any, where: str, max_pip: int) -> int:
    if (
        not isinstance(item, (list, tuple))
        or len(item) != 2
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in item)
    ):
        raise DealError(f"{where}: a tile must be a pair of ints like [3, 5], got {item!r}")
    a, b = int(item[0]), int(item[1])
    if not (0 <= a <= max_pip and 0 <= b <= max_pip):
        raise DealError(f"{where}: tile {item!r} has pips outside 0..{max_pip}")
    return Tile.of(a, b).index


class _Dealt(list):
    """Deals already checked against ``config``, as :func:`validate_deals` returns them: passed
    again (to another :class:`Game` of the same rules, as an evaluation's seat rotations do, or
    by :meth:`Game.rewound`) they are not checked again."""

    def __init__(self, deals: Iterable[Any], config: RulesConfig) -> None:
        super().__init__(deals)
        self.config = config


def validate_deals(deals: Sequence[Any] | None, config: RulesConfig) -> list[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]] | None]:
    """Check scripted per-round deals and return them as tile indices (``None`` = shuffle).

    Each deal is ``{"hands": [[[a, b], ...], ...], "boneyard": [[a, b], ...]}`` with the boneyard
    top first; every tile of the set appears exactly once and every hand has ``hand_size`` tiles.
    What it returns may be given as ``deals`` again (to :class:`Game` or the env's ``reset``) for
    the same rules, and is not checked again: check once, play the same deals many times.
    """
    if deals is None:
        return []
    if isinstance(deals, _Dealt) and deals.config == config:  # checked already, for these rules
        return list(deals)
    if isinstance(deals, (str, bytes)) or not isinstance(deals, Sequence):
        raise DealError(f"deals must be a list of per-round deals, got {type(deals).__name__}")
    if len(deals) > config.rounds:
        raise DealError(f"{len(deals)} deals given for a game of {config.rounds} rounds")
    out: list[Any] = []
    n_tiles = config.num_tiles
    for r, deal in enumerate(deals):
        if deal is None:
            out.append(None)
            continue
        where = f"deal of round {r}"
        if not isinstance(deal, dict) or set(deal) != {"hands", "boneyard"}:
            raise DealError(f"{where}: expected a dict with exactly the keys 'hands' and 'boneyard', got {deal!r:.200}")
        hands_in, bone_in = deal["hands"], deal["boneyard"]
        if not isinstance(hands_in, (list, tuple)) or len(hands_in) != config.num_players:
            raise DealError(f"{where}: 'hands' must list {config.num_players} hands (one per player)")
        hands = []
        for p, hand in enumerate(hands_in):
            if not isinstance(hand, (list, tuple)) or len(hand) != config.hand_size:
                raise DealError(f"{where}: hand {p} must hold hand_size={config.hand_size} tiles as dealt")
            hands.append(tuple(_parse_tile_pair(t, f"{where}, hand {p}", config.max_pip) for t in hand))
        if not isinstance(bone_in, (list, tuple)):
            raise DealError(f"{where}: 'boneyard' must be a list of tiles, top first")
        bone = tuple(_parse_tile_pair(t, f"{where}, boneyard", config.max_pip) for t in bone_in)
        seen = [t for h in hands for t in h] + list(bone)
        if len(seen) != n_tiles or len(set(seen)) != n_tiles:
            counts: dict[int, int] = {}
            for t in seen:
                counts[t] = counts.get(t, 0) + 1
            dup = sorted(str(Tile.from_index(t)) for t, c in counts.items() if c > 1)
            missing = sorted(str(Tile.from_index(t)) for t in range(n_tiles) if t not in counts)
            raise DealError(
                f"{where}: every tile of the double-{config.max_pip} set must appear exactly once; "
                f"duplicated: {dup}, missing: {missing}"
            )
        out.append((tuple(hands), bone))
    return _Dealt(out, config)


def winners_of(round_scores: Sequence[Sequence[int]]) -> list[int]:
    """R16 (:func:`cf_env.engine.scoring.winner_flags`) over every round given: sorted seats."""
    n = len(round_scores[0])
    totals, zeros, lowest, flags = [0] * n, [0] * n, [0] * n, [0] * n
    r16_keys(round_scores, n, len(round_scores), totals, zeros, lowest)
    winner_flags(totals, zeros, lowest, n, flags)
    return [p for p in range(n) if flags[p]]


def _deal_to_json(hands: Sequence[Sequence[int]], bone_top_first: Sequence[int]) -> dict[str, Any]:
    def pair(t: int) -> list[int]:
        tile = Tile.from_index(t)
        return [tile.low, tile.high]

    return {"hands": [[pair(t) for t in h] for h in hands], "boneyard": [pair(t) for t in bone_top_first]}


class Game:
    """A whole Chicken Foot game (all rounds), stepped one decision at a time.

    Args:
        config: the rules; default :class:`RulesConfig()`.
        seed: an int, ``None`` or an ``np.random.Generator``; it shuffles every round that has no
            scripted deal (the only randomness in the game).
        deals: optional scripted per-round deals (see :func:`validate_deals`); rounds past the end
            of the list, or given as ``None``, are shuffled.
    """

    __slots__ = (
        "config", "_actions", "_rng", "_scripted", "_deals", "_events", "_num_players", "_num_values",
        "_draw_action", "_pass_action", "_draw_bit", "_pass_bit", "_until_playable", "_hands", "_hand_sizes",
        "_boneyard", "_open_ends", "_end_nodes", "_free_open", "_open_values", "_open_plays", "_pending",
        "_pending_value", "_pending_parent", "_pending_role", "_layout", "_played", "_unmatched", "_current",
        "_legal", "_drawn", "_round_index", "_round_scores", "_totals", "_over", "_winners", "_round_ends",
        "_round_tag", "_arms", "_points", "_round_hands", "_played_by", "_draws", "_void_at", "_round_start",
        "_table", "_table_view", "_table_layout", "_history", "_history_view", "_history_bytes",
    )

    def __init__(self, config: RulesConfig | None = None, *, seed: int | np.random.Generator | None = None,
                 deals: Sequence[Any] | None = None) -> None:
        cfg = config if config is not None else RulesConfig()
        if not isinstance(cfg, RulesConfig):
            raise TypeError(f"config must be a RulesConfig, got {type(cfg).__name__}")
        self.config = cfg
        self._scripted = validate_deals(deals, cfg)
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        t = self._actions = action_table(cfg.max_pip)
        self._num_players = cfg.num_players
        self._num_values = t.k
        self._draw_action, self._pass_action = t.draw, t.pass_
        self._draw_bit, self._pass_bit = t.draw_bit, t.pass_bit
        self._until_playable = cfg.draw_rule == "until_playable"
        self._deals: list[bytes] = []  # per round: the hands in seat order, then the boneyard top first
        self._events = array("i")
        self._round_index = -1
        self._round_scores: list[list[int]] = []
        self._round_ends: list[tuple[int, int]] = []  # (RoundEnd, player who went out or -1)
        self._round_hands: list[tuple[int, ...]] = []  # per finished round: each seat's hand bits at its end
        self._totals = [0] * self._num_players
        self._over = False
        self._winners: list[int] = []
        self._arms = cfg.center_arms
        # R15 per tile, from the one scoring rule (the batched engine compiles the same function)
        self._points = tuple(tile_points(lo, hi, cfg.double_blank_points) for lo, hi in zip(t.tile_low, t.tile_high))
        self._round_tag = 0
        self._current = _NO_CUR
        self._legal = 0
        self._table: np.ndarray | None = None  # the state table, once someone reads it (table())
        self._table_view: _FloatSlots | None = None  # the same memory, for the per-move writes (a third of numpy's cost)
        self._table_layout = table_layout(cfg)
        self._history: np.ndarray | None = None  # each seat's view of the round's events, once read (history())
        self._history_view: memoryview | None = None  # the same memory, flat, for the per-event writes
        self._history_bytes: list[int] = []  # bytes of each seat's view written so far (8 a row)
        self._advance(self._start_round())

    # ------------------------------------------------------------------ round set-up (R4-R7)

    def _start_round(self) -> int:
        """Deal, find and place the starting double; return the first player to decide,
        or -1 if the holder went out by placing it (a 1-tile hand)."""
        cfg, t, n = self.config, self._actions, self._num_players
        r = self._round_index = self._round_index + 1
        scripted = self._scripted[r] if r < len(self._scripted) else None
        if scripted is None:
            perm = self._rng.permutation(t.num_tiles).tolist()
            h = cfg.hand_size
            hands = tuple(tuple(perm[i * h:(i + 1) * h]) for i in range(n))
            bone_top_first = tuple(perm[n * h:])
        else:
            hands, bone_top_first = scripted
        self._deals.append(bytes([tile for hand in hands for tile in hand]) + bytes(bone_top_first))
        tile_bits = t.tile_bits
        self._hands = [0] * n
        for p, hand in enumerate(hands):
            bits = 0
            for tile in hand:
                bits |= tile_bits[tile]
            self._hands[p] = bits
        self._hand_sizes = [len(h) for h in hands]
        self._boneyard = list(reversed(bone_top_first))  # pop() takes the top
        k = self._num_values
        self._open_ends = [0] * k
        self._end_nodes: list[list[int]] = [[] for _ in range(k)]
        self._free_open = 0
        self._open_values = 0
        self._layout = []
        self._played = 0
        self._unmatched = [0] * n
        self._played_by = [0] * n
        self._draws = [0] * n
        self._void_at = [bytearray(k) for _ in range(n)]
        self._drawn = -1
        ev = self._events
        self._round_start = len(ev)
        rtag = self._round_tag = r << _EV_ROUND
        # R5/R6: round r starts with the double (max_pip - r); its holder places it.
        start = cfg.max_pip - r
        start_tile = Tile(start, start).index
        sbits = tile_bits[start_tile]
        holder = -1
        for p in range(n):
            if self._hands[p] & sbits:
                holder = p
                break
        if holder < 0:  # R6 search: from the dealer's left, one tile each in turn until found
            p = (r % n + 1) % n
            while True:
                tile = self._boneyard.pop()
                self._hands[p] |= tile_bits[tile]
                self._hand_sizes[p] += 1
                self._draws[p] += 1
                ev.append(EventKind.SEARCH_DRAW | p << _EV_PLAYER | tile << _EV_PAYLOAD | rtag)
                if tile == start_tile:
                    holder = p
                    break
                p = (p + 1) % n
        self._hands[holder] &= ~sbits
        self._hand_sizes[holder] -= 1
        self._played = sbits
        self._played_by[holder] = sbits
        self._layout.append(_pack_placement(start, start, -1, -1, Role.CENTER, holder))
        ev.append(EventKind.START | holder << _EV_PLAYER | start_tile << _EV_PAYLOAD | rtag)
        # R9: every play goes onto an empty centre arm until all of them hold a tile.
        self._pending = cfg.center_arms
        self._pending_value = start
        self._pending_parent = 0
        self._pending_role = _ARM
        self._open_plays = t.row_bits[start]
        if self._hand_sizes[holder] == 0:
            self._round_ends.append((RoundEnd.DOMINO, holder))
            return -1
        return (holder + 1) % n  # R7

    # ------------------------------------------------------------------ turn flow

    def _advance(self, q: int) -> None:
        """Hand the decision to player ``q`` (or end the round when ``q`` is -1 / the layout is
        blocked), starting later rounds as needed."""
        while True:
            if q >= 0:
                op = self._open_plays
                legal = self._hands[q] & op
                if legal:
                    break
                if self._boneyard:  # R12: no play, must draw
                    legal = self._draw_bit
                    break
                for h in self._hands:  # R13 pass, unless nobody can play (R14 blocked)
                    if h & op:
                        legal = self._pass_bit
                        break
                if legal:
                    break
                self._round_ends.append((RoundEnd.BLOCKED, -1))
            self._finish_round()
            if self._over:
                self._current = _NO_CUR
                self._legal = 0
                return
            q = self._start_round()
            if self._table is not None:
                self._fill_table()
            if self._history is not None:
                self._fill_history()
        self._current = q
        self._legal = legal
        self._drawn = -1

    def _finish_round(self) -> None:
        """R14/R15: score the hands, log the end, and decide the game after the last round."""
        t = self._actions
        reason, out = self._round_ends[-1]
        points = self._points
        scores = [sum([points[tile] for tile in t.bits_to_tiles(h)]) for h in self._hands]
        self._round_scores.append(scores)
        self._round_hands.append(tuple(self._hands))
        for p, s in enumerate(scores):
            self._totals[p] += s
        tab = self._table_view
        if tab is not None:
            at = self._table_layout.scores
            for p, total in enumerate(self._totals):
                tab[at + p] = total * SCORE_FACTOR  # a float64 product, rounded once to float32
        self._events.append(
            EventKind.ROUND_END | (out & 0xFF) << _EV_PLAYER | int(reason) << _EV_PAYLOAD | self._round_index << _EV_ROUND
        )
        if self._round_index + 1 >= self.config.rounds:
            self._over = True
            self._winners = winners_of(self._round_scores)

    # ------------------------------------------------------------------ the one mutating call

    def apply(self, action: int) -> int:
        """Apply one decision of :attr:`current_player`; returns how many rounds have ended so far
        (so a caller sees a round end as a change of the returned count).

        Raises:
            IllegalActionError: the action is not legal now (nothing changes).
            GameOverError: the game has ended.
        """
        a = action if type(action) is int else self._coerce(action)
        if a < 0 or not (self._legal >> a) & 1:
            self._reject(a)
        if a < self._draw_action:
            self._play(self._current, a)
        elif a == self._draw_action:
            self._draw_one(self._current)
        else:
            self._pass_turn(self._current)
        return len(self._round_scores)

    def _play(self, p: int, a: int) -> None:
        """R8-R10: player ``p`` plays action ``a``'s tile; then the next player's turn (R14 if out)."""
        t = self._actions
        bits = t.action_tile_bits[a]
        hands = self._hands
        hands[p] &= ~bits
        self._played |= bits
        self._played_by[p] |= bits
        m = t.match[a]
        x = t.expose[a]
        layout = self._layout
        node = len(layout)
        ends = self._open_ends
        pend = self._pending
        if pend:  # a forced centre arm (R9) or toe (R10)
            parent = self._pending_parent
            role = self._pending_role
            arm = (self._arms - pend) if role == _ARM else (layout[parent] >> _L_ARM & _ARM_MASK) - 1
            pend -= 1
            self._pending = pend
        else:  # any open end showing m; the canonical one is the one open longest
            parent = self._end_nodes[m].pop(0)
            arm = (layout[parent] >> _L_ARM & _ARM_MASK) - 1
            ends[m] -= 1
            if not ends[m]:
                self._free_open ^= t.row_bits[m]
                self._open_values ^= 1 << m
            role = _LINE
            if m == x:  # R10: a double closes the end and opens three toes
                role = _DOUBLE
                pend = self._pending = TOES_PER_DOUBLE
                self._pending_value = m
                self._pending_parent = node
                self._pending_role = _TOE
        # _pack_placement, inlined: a call costs more than the rest of this line on the per-play path
        layout.append(m | x << _L_EXPOSE | (parent + 1) << _L_PARENT | (arm + 1) << _L_ARM | role << _L_ROLE
                      | p << _L_PLAYER)
        if role != _DOUBLE:
            if not ends[x]:
                self._free_open |= t.row_bits[x]
                self._open_values |= 1 << x
            ends[x] += 1
            self._end_nodes[x].append(node)
        op = self._open_plays = t.row_bits[self._pending_value] if pend else self._free_open
        self._events.append(_PLAY | p << _EV_PLAYER | a << _EV_PAYLOAD | self._round_tag)
        if self._history_view is not None:
            self._history_append(_PLAY, p, a)
        counts = self._hand_sizes
        counts[p] -= 1
        tab = self._table_view
        if tab is not None:  # the few entries this play changes (see table())
            tl = self._table_layout
            tile = t.action_tile[a]
            tab[tl.hand_of[p] + tile] = 0.0
            tab[tl.layout + tile] = 1.0
            tab[tl.played_of[p] + tile] = 1.0
            tab[tl.hand_sizes + p] = float(counts[p])
            if self._drawn >= 0:
                tab[tl.drawn + self._drawn] = 0.0
            if role != _DOUBLE:
                tab[tl.open_ends + x] = float(ends[x])
            if role in (_ARM, _TOE):
                tab[tl.pending_count] = float(pend)
                if not pend:
                    tab[tl.pending_value + m] = 0.0
                    tab[tl.pending_kind + (role != _ARM)] = 0.0
            else:
                tab[tl.open_ends + m] = float(ends[m])
                if role == _DOUBLE:
                    tab[tl.pending_value + m] = 1.0
                    tab[tl.pending_kind + 1] = 1.0
                    tab[tl.pending_count] = float(pend)
        if not counts[p]:
            self._round_ends.append((RoundEnd.DOMINO, p))
            self._advance(-1)
            return
        q = p + 1
        if q == self._num_players:
            q = 0
        legal = hands[q] & op
        if legal:  # the common case, inlined
            self._current = q
            self._legal = legal
            self._drawn = -1
        else:
            self._advance(q)

    def _draw_one(self, p: int) -> None:
        """R12: player ``p`` draws; a playable tile may be played or kept, else the turn ends (or,
        under ``until_playable``, ``p`` draws again while the boneyard lasts)."""
        t = self._actions
        tile = self._boneyard.pop()
        tbits = t.tile_bits[tile]
        self._hands[p] |= tbits
        self._hand_sizes[p] += 1
        before = self._unmatched[p]
        faced = self._unmatched[p] = (1 << self._pending_value) if self._pending else self._open_values
        self._fail(p, faced)
        self._draws[p] += 1
        self._events.append(_DRAW | p << _EV_PLAYER | tile << _EV_PAYLOAD | self._round_tag)
        if self._history_view is not None:
            self._history_append(_DRAW, p, tile)
        plays = tbits & self._open_plays
        tab = self._table_view
        if tab is not None:
            tl = self._table_layout
            tab[tl.hand_of[p] + tile] = 1.0
            tab[tl.hand_sizes + p] = float(self._hand_sizes[p])
            tab[tl.boneyard] = float(len(self._boneyard))
            tab[tl.draws + p] = float(self._draws[p])
            self._table_failure(tab, p, before, True)
            if plays:
                tab[tl.drawn + tile] = 1.0
        if plays:  # play it now, or keep it (PASS)
            self._legal = plays | self._pass_bit
            self._drawn = tile
        elif self._until_playable and self._boneyard:  # house rule: keep drawing
            self._legal = self._draw_bit
        else:
            self._advance((p + 1) % self._num_players)

    def _pass_turn(self, p: int) -> None:
        """PASS: ``p`` keeps the tile just drawn (R12) or has nothing to play with an empty boneyard (R13)."""
        kept = self._drawn >= 0
        before = self._unmatched[p]
        if not kept:
            faced = self._unmatched[p] = (1 << self._pending_value) if self._pending else self._open_values
            self._fail(p, faced)
        tab = self._table_view
        if tab is not None:
            if kept:
                tab[self._table_layout.drawn + self._drawn] = 0.0
            else:
                self._table_failure(tab, p, before, False)
        self._events.append(_PASS | p << _EV_PLAYER | kept << _EV_PAYLOAD | self._round_tag)  # R17: see events()
        if self._history_view is not None:
            self._history_append(_PASS, p, kept)
        self._advance((p + 1) % self._num_players)

    def _fail(self, p: int, faced: int) -> None:
        """Player ``p`` shows it holds no tile with the values of ``faced`` (a bitmask): record the
        draw count at that moment for each of them (the v2 observation's ``void_draws``)."""
        at, d, v = self._void_at[p], self._draws[p] + 1, 0
        while faced:
            if faced & 1:
                at[v] = d
            faced >>= 1
            v += 1

    def _table_failure(self, tab: _FloatSlots, p: int, before: int, drew: bool) -> None:
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
            on += [tl.pending_value + self._pending_value, tl.pending_kind + (self._pending_role != _ARM)]
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
            if kind != _ROUND_END:
                self._history_append(kind, code >> _EV_PLAYER & 0xFF, code >> _EV_PAYLOAD & 0x3FF)

    def _history_append(self, kind: int, p: int, payload: int) -> None:
        """One event into each seat's view, as R17 lets it see it (see :meth:`history`): each
        seat's row as 8 bytes, worked out once per distinct event and config (``_history_rows``)."""
        key = kind | p << _EV_PLAYER | payload << _EV_PAYLOAD
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
        kind, p, payload = key & 7, key >> _EV_PLAYER & 0xFF, key >> _EV_PAYLOAD & 0x3FF
        out = []
        for s in range(self._num_players):
            action = tile = -1
            if kind == _PASS:
                if payload and p != s:  # a kept playable draw looks like any draw to the others
                    continue
                action = self._pass_action
            elif kind == _PLAY:
                action, tile = payload, self._actions.action_tile[payload]
            else:  # DRAW, SEARCH_DRAW, START: the tile is seen by the drawer alone, a START's by all
                if kind == _DRAW:
                    action = self._draw_action
                if p == s or kind == _START:
                    tile = payload
            out.append((s, s * self._table_layout.history_length * 8, struct.pack("<4h", (p - s) % self._num_players, kind, action, tile)))
        rows = self._table_layout.history_rows[key] = tuple(out)
        return rows

    def _coerce(self, action: Any) -> int:
        try:
            return _as_index(action)
        except TypeError:
            raise IllegalActionError(f"an action must be an int id, got {action!r}") from None

    def _reject(self, a: int) -> None:
        if self._over:
            raise GameOverError("the game is over; start a new Game")
        name = self._actions.strings[a] if 0 <= a < self._actions.num_actions else "out of range"
        raise IllegalActionError(
            f"action {a} ({name}) is not legal for player {self._current}; legal: "
            f"{[self._actions.strings[b] + f' ({b})' for b in self.legal_actions()]}"
        )

    # ------------------------------------------------------------------ read-only views

    @property
    def num_players(self) -> int:
        return self._num_players

    @property
    def current_player(self) -> int:
        """Seat that must decide now; -1 once the game is over."""
        return self._current

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def legal_bits(self) -> int:
        """Legal actions as an int whose bit ``a`` is set when action ``a`` is legal: the fast path
        beside :meth:`legal_actions` (no list is built)."""
        return self._legal

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of :attr:`current_player` (empty once the game is over)."""
        return self._actions.bits_to_actions(self._legal)

    def legal_mask(self) -> list[int]:
        """0/1 list of length ``NUM_ACTIONS``."""
        legal = self._legal
        return [(legal >> a) & 1 for a in range(self._actions.num_actions)]

    def is_legal(self, action: int) -> bool:
        try:
            a = _as_index(action)
        except TypeError:
            return False
        return a >= 0 and bool((self._legal >> a) & 1)

    @property
    def round_index(self) -> int:
        """0-based index of the round being played (of the last round once the game is over)."""
        return self._round_index

    @property
    def starting_double(self) -> int:
        """Pip value of this round's starting double (R5)."""
        return self.config.max_pip - self._round_index

    @property
    def dealer(self) -> int:
        """Dealer of this round (R6): ``round_index mod num_players``."""
        return self._round_index % self._num_players

    def state_view(self) -> StateView:
        """The live state in one read (see :class:`StateView`; built with ``tuple.__new__``, half
        the cost of the NamedTuple's keyword-checking constructor on this per-observation path)."""
        return _new_tuple(StateView, (
            self._hands, self._played, self._current, -1 if self._over else self._drawn, self._pending, self._pending_value,
            self._pending_role, self._unmatched, self._open_ends, self._hand_sizes, len(self._boneyard), self._round_index, self._totals,
            self._played_by, self._draws, self._void_at))

    def turn(self) -> tuple[int, int]:
        """``(current_player, legal_bits)`` in one call, for a caller's per-step path (the AEC env);
        ``(-1, 0)`` once the game is over."""
        return self._current, self._legal

    def table(self) -> np.ndarray:
        """The state as one float32 vector, kept current move by move from the first call on (the
        observation's fast path: :mod:`cf_env.engine.table` lists its blocks, ``table_layout(
        game.config)`` says where they are). It holds every hand: a reader picks what a seat may
        see. It is this game's live array, so it changes as the game goes on: do not write to it,
        and copy what you keep."""
        tab = self._table
        if tab is None:
            tab = self._table = np.zeros(self._table_layout.size, np.float32)
            self._table_view = _float_view(tab)
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

    def hand(self, player: int) -> list[Tile]:
        """The tiles in ``player``'s hand, sorted."""
        return [Tile.from_index(t) for t in self._actions.bits_to_tiles(self._hands[player])]

    def hand_bits(self, player: int) -> int:
        """``player``'s hand as action bits (a tile {m, x} sets bits ``m*K+x`` and ``x*K+m``): the
        fast path beside :meth:`hand`."""
        return self._hands[player]

    @property
    def hand_sizes(self) -> list[int]:
        return list(self._hand_sizes)

    @property
    def boneyard_size(self) -> int:
        return len(self._boneyard)

    def boneyard_tiles(self) -> list[int]:
        """The tile indices left in the boneyard, sorted (hidden information; not their order)."""
        return sorted(self._boneyard)

    def set_next_draw(self, tile: int) -> None:
        """Put ``tile`` (a tile index; it must be in the boneyard) on top of the boneyard, so the
        next draw takes it: for frameworks that model each draw as a chance outcome (the OpenSpiel
        game). The round's deal in :meth:`to_record` is kept in step, so records still replay.

        Raises:
            DealError: the tile is not in the boneyard (nothing changes).
        """
        bone = self._boneyard
        try:
            j = bone.index(_as_index(tile))
        except (ValueError, TypeError):
            raise DealError(f"tile {tile!r} is not in the boneyard; it holds {sorted(bone)}") from None
        top = len(bone) - 1
        if j != top:
            # the record lists the boneyard top first after the hands: _bone[i] sits at base + (size - 1 - i)
            deal = bytearray(self._deals[-1])
            size = len(deal) - self._num_players * self.config.hand_size
            base = self._num_players * self.config.hand_size
            a, b = base + size - 1 - j, base + size - 1 - top
            deal[a], deal[b] = deal[b], deal[a]
            self._deals[-1] = bytes(deal)
            bone[j], bone[top] = bone[top], bone[j]

    @property
    def played_bits(self) -> int:
        """Tiles on the layout this round, as action bits: the fast path beside :meth:`layout`."""
        return self._played

    @property
    def open_ends(self) -> list[int]:
        """Open ends per pip value (the toes and centre arms still to fill are in :attr:`pending`)."""
        return list(self._open_ends)

    @property
    def open_values(self) -> int:
        """Bitmask of the pip values a play may match right now."""
        return (1 << self._pending_value) if self._pending else self._open_values

    @property
    def pending(self) -> Pending | None:
        """The forced slots (R9 centre arms or R10 toes) that must be filled first, if any."""
        if not self._pending:
            return None
        return Pending(Role(self._pending_role), self._pending_value, self._pending)

    @property
    def drawn_tile(self) -> Tile | None:
        """The tile just drawn by :attr:`current_player` that may be played or kept (R12)."""
        return Tile.from_index(self._drawn) if self._drawn >= 0 and not self._over else None

    def unmatched(self, player: int) -> int:
        """Bitmask of the pip values ``player`` could not match at its latest draw or forced pass
        this round (public information, R17)."""
        return self._unmatched[player]

    def played_by(self, player: int) -> list[Tile]:
        """The tiles ``player`` placed on this round's layout (the starting double included), sorted."""
        return [Tile.from_index(t) for t in self._actions.bits_to_tiles(self._played_by[player])]

    def draws(self, player: int) -> int:
        """Tiles ``player`` drew from the boneyard this round (R6 search draws included; public)."""
        return self._draws[player]

    def void_draws(self, player: int) -> dict[int, int]:
        """For each pip value ``player`` has failed to match this round (a draw or a forced pass
        while it was open or forced), the tiles it has drawn since its latest such failure, the
        failure's own draw included: 0 means it surely holds no tile with that value (public, R17)."""
        d = self._draws[player] + 1
        return {v: d - at for v, at in enumerate(self._void_at[player]) if at}

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
        every hand in view (the luck-corrected evaluation, :mod:`training.luck`)."""
        return np.frombuffer(self._events, dtype=np.int32)[start:].copy()

    def round_events(self, observer: int | None = None) -> list[Event]:
        """:meth:`events` of the round in play (of the last round once the game is over)."""
        start = self._round_start
        return self._decode_events(self._events[start:], observer)

    @property
    def round_scores(self) -> list[list[int]]:
        """Points of each finished round, seat order (R15)."""
        return [list(s) for s in self._round_scores]

    @property
    def round_end_hands(self) -> list[list[list[Tile]]]:
        """For each finished round, the tiles each seat held when it ended (what R15 scored),
        seat order: a tile drawn on the round's last action included."""
        tiles = self._actions.bits_to_tiles
        return [[[Tile.from_index(i) for i in tiles(h)] for h in hands] for hands in self._round_hands]

    @property
    def rounds_finished(self) -> int:
        return len(self._round_scores)

    @property
    def round_end_reasons(self) -> list[tuple[RoundEnd, int]]:
        """For each finished round: how it ended and who went out (-1 when blocked)."""
        return [(RoundEnd(r), p) for r, p in self._round_ends[: len(self._round_scores)]]

    @property
    def totals(self) -> list[int]:
        return list(self._totals)

    @property
    def winners(self) -> list[int]:
        """Seats that share the win (R16); empty until the game is over."""
        return list(self._winners)

    def placement_of(self, action: int) -> Placement:
        """Where the legal play ``action`` of :attr:`current_player` would lie, before it is made:
        the :class:`Placement` that :meth:`layout` will end with after ``apply(action)`` (R8-R10:
        a forced slot first, else the open end of that value that has been open longest; the
        same rule as ``_play``, which keeps it inline for speed; the tests hold the two equal).
        Raises :class:`IllegalActionError` for anything but a legal play."""
        a = self._coerce(action)
        if a < 0 or a >= self._draw_action or not self._legal >> a & 1:
            raise IllegalActionError(f"action {action!r} is not a legal play now: no tile to place")
        t = self._actions
        m, x = t.match[a], t.expose[a]
        layout = self._layout
        if self._pending:
            parent, role = self._pending_parent, self._pending_role
            arm = (self._arms - self._pending) if role == _ARM else (layout[parent] >> _L_ARM & _ARM_MASK) - 1
        else:
            parent = self._end_nodes[m][0]
            arm = (layout[parent] >> _L_ARM & _ARM_MASK) - 1
            role = _DOUBLE if m == x else _LINE
        return Placement(m, x, parent, arm, Role(role), self._current)

    def layout(self) -> list[Placement]:
        """Every tile on this round's layout, in the order played; index 0 is the centre double."""
        return [_unpack_placement(v) for v in self._layout]

    def open_end_nodes(self) -> list[list[int]]:
        """For each pip value, the layout indices whose free end shows it (oldest first)."""
        return [list(nodes) for nodes in self._end_nodes]

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
            player = v >> _EV_PLAYER & 0xFF
            payload = v >> _EV_PAYLOAD & 0x3FF
            rnd = v >> _EV_ROUND
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
                out.append(v >> _EV_PAYLOAD & 0x3FF)
            elif kind == draw:
                out.append(self._draw_action)
            elif kind == EventKind.PASS:
                out.append(self._pass_action)
        return out

    # ------------------------------------------------------------------ records and replay

    def to_record(self) -> dict[str, Any]:
        """Plain-JSON record (config, deals, actions) that :meth:`from_record` replays exactly."""
        return {
            "version": RECORD_VERSION,
            "config": self.config.to_dict(),
            "deals": [self._deal_json(r) for r in range(len(self._deals))],
            "actions": self.actions(),
        }

    def _deal_json(self, r: int) -> dict[str, Any]:
        order = list(self._deals[r])
        h, n = self.config.hand_size, self._num_players
        return _deal_to_json([order[i * h:(i + 1) * h] for i in range(n)], order[n * h:])

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Game:
        """Replay a record made by :meth:`to_record`."""
        if not isinstance(record, dict) or not {"config", "deals", "actions"} <= set(record):
            raise RecordError("a game record is a dict with 'config', 'deals' and 'actions'")
        if record.get("version", RECORD_VERSION) != RECORD_VERSION:
            raise RecordError(f"record version {record.get('version')!r} is not {RECORD_VERSION}")
        game = cls(RulesConfig.from_dict(record["config"]), deals=record["deals"])
        game.apply_all(record["actions"])
        return game

    def deal_tiles(self, r: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """Round ``r``'s deal as tile indices: ``(hands in seat order, boneyard top first)`` (hidden
        information, as :meth:`to_record` holds it)."""
        order = tuple(self._deals[r])
        h, n = self.config.hand_size, self._num_players
        return tuple(order[i * h:(i + 1) * h] for i in range(n)), order[n * h:]

    def rewound(self) -> Game:
        """A new game of the same rules at its start, with this game's deals (every round dealt so
        far) scripted: applying :meth:`actions` to it plays this game again. The same as
        ``Game.from_record`` of :meth:`to_record` without the actions, but with no JSON to parse
        (for code that follows finished games with every hand in view, :mod:`training.luck`)."""
        return Game(self.config, deals=_Dealt((self.deal_tiles(r) for r in range(len(self._deals))), self.config))

    def apply_all(self, actions: Iterable[int]) -> None:
        """Apply a sequence of actions; on an illegal one raises :class:`RecordError` naming its
        position (the actions before it stay applied)."""
        for i, a in enumerate(actions):
            try:
                self.apply(a)
            except (IllegalActionError, GameOverError) as exc:
                raise RecordError(f"action #{i} ({a!r}) does not replay: {exc}") from exc

    def clone(self) -> Game:
        """An independent copy (for search agents); the copy shares no mutable state."""
        new = Game.__new__(Game)
        for name in Game.__slots__:
            value = getattr(self, name)
            if name == "_end_nodes" or name == "_round_scores":
                value = [list(v) for v in value]
            elif name == "_void_at":
                value = [bytearray(v) for v in value]
            elif name == "_table":
                value = None if value is None else value.copy()
            elif name == "_table_view":
                value = None if new._table is None else _float_view(new._table)
            elif name == "_history":
                value = None if value is None else value.copy()
            elif name == "_history_view":
                value = None if new._history is None else new._history.reshape(-1).data.cast("B")
            elif name == "_rng":
                value = np.random.Generator(type(value.bit_generator)())
                value.bit_generator.state = self._rng.bit_generator.state
            elif isinstance(value, (list, array)):
                value = value[:] if isinstance(value, list) else array(value.typecode, value)
            setattr(new, name, value)
        return new

    def __getstate__(self) -> dict[str, Any]:
        """Pickling and ``copy.deepcopy``: every slot but the state table and the history (views of
        live memory; the copy builds its own when they are first read)."""
        state = {name: getattr(self, name) for name in Game.__slots__}
        state.update(_table=None, _table_view=None, _history=None, _history_view=None, _history_bytes=[])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        state = "over" if self._over else f"player {self._current} to move"
        return f"<Game round {self._round_index + 1}/{self.config.rounds}, {state}, totals {self._totals}>"


class _FloatSlots(Protocol):
    """What the state table's per-move writes use of a memoryview of format ``f``: typeshed's
    memoryview takes ints only, a float32 one takes floats."""

    def __setitem__(self, index: int, value: float) -> None: ...


def _float_view(array: np.ndarray) -> _FloatSlots:
    """A float32 array's memory as a memoryview (its item writes cost a third of numpy's)."""
    return cast(_FloatSlots, array.data)
