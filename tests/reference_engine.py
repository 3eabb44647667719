"""The pure-Python rules engine the library shipped until version 0.4: a whole game as a Python
state machine (deal, turn flow R4-R14, scoring, the event log and the layout's geometry). It is
kept here as the *reference* the compiled engine (:mod:`cf_env.vector`, which :class:`cf_env.Game`
views) is checked against: an independent implementation of the same rules, written with ints as
bit sets instead of arrays. Nothing in the library imports it."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from operator import index as as_index
from typing import Any, NamedTuple

import numpy as np

from cf_env.engine import TOES_PER_DOUBLE, EventKind, Pending, Placement, Role, RoundEnd
from cf_env.engine.actions import ActionTable, Tile, action_table, bit_set
from cf_env.engine.config import RulesConfig
from cf_env.engine.errors import DealError, GameOverError, IllegalActionError
from cf_env.engine.records import (
    RECORD_VERSION,
    deal_order,
    deal_to_json,
    split_deal,
    validate_deals,
    winners_of,
)
from cf_env.engine.scoring import tile_points

# The event log's documented packing (cf_env.engine.unpack_event reads it), and this engine's own
# packing of a placement into an int (its layout's entries).
EV_PLAYER, EV_PAYLOAD, EV_ROUND = 3, 11, 21
L_EXPOSE, L_PARENT, L_ARM, L_ROLE, L_PLAYER = 5, 10, 18, 22, 25
ARM_MASK = 15
R_ARM, R_LINE, R_DOUBLE, R_TOE = int(Role.ARM), int(Role.LINE), int(Role.DOUBLE), int(Role.TOE)


def pack_placement(match: int, expose: int, parent: int, arm: int, role: int, player: int) -> int:
    return match | expose << L_EXPOSE | (parent + 1) << L_PARENT | (arm + 1) << L_ARM | role << L_ROLE | player << L_PLAYER


def unpack_placement(entry: int) -> Placement:
    return Placement(entry & 31, entry >> L_EXPOSE & 31, (entry >> L_PARENT & 255) - 1, (entry >> L_ARM & ARM_MASK) - 1,
                     Role(entry >> L_ROLE & 7), entry >> L_PLAYER)


NO_CURRENT = -1
new_tuple = tuple.__new__
K_PLAY, K_DRAW, K_PASS = int(EventKind.PLAY), int(EventKind.DRAW), int(EventKind.PASS)


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


class GameViews(GameState):
    """The event log (:meth:`events`, :meth:`actions`, packed codes) and the one-read
    :meth:`state_view`. The turn flow (:mod:`cf_env.engine.game`) appends to the log."""

    __slots__ = ()

    def _log(self, kind: int, p: int, payload: int) -> None:
        self._events.append(kind | p << EV_PLAYER | payload << EV_PAYLOAD | self._round_tag)

    def state_view(self) -> StateView:
        return new_tuple(StateView, (
            self._hands, self._played, self._current, -1 if self._over else self._drawn, self._pending, self._pending_value,
            self._pending_role, self._unmatched, self._open_ends, self._hand_sizes, len(self._boneyard), self._round_index, self._totals,
            self._played_by, self._draws, self._void_at))

    def round_event_codes(self) -> np.ndarray:
        return self.event_codes(self._round_start)

    event_count = property(lambda self: len(self._events))

    def event_codes(self, start: int = 0) -> np.ndarray:
        return np.frombuffer(self._events, dtype=np.int32)[start:].copy()

    def actions(self) -> list[int]:
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


class GameRecords(GameViews):
    """A game's record (:meth:`to_record`; ``Game.from_record`` replays it), its deals as tile
    indices, and copies: :meth:`clone`, pickling and ``copy.deepcopy``."""

    __slots__ = ()

    def to_record(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "config": self.config.to_dict(),
            "deals": [self._deal_json(r) for r in range(len(self._deals))],
            "actions": self.actions(),
        }

    def _deal_json(self, r: int) -> dict[str, Any]:
        return deal_to_json(*self.deal_tiles(r))

    def deal_tiles(self, r: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        return split_deal(self._deals[r], self.config)

class GameLayout(GameState):
    """:meth:`layout` (every placement in the order played), :meth:`placement_of` (where a play
    would lie) and :meth:`open_end_nodes`."""

    __slots__ = ()

    def placement_of(self, action: int) -> Placement:
        a = as_index(action)
        if a < 0 or a >= self._draw_action or not self._legal >> a & 1:
            raise IllegalActionError(f"action {action!r} is not a legal play now: no tile to place")
        t = self._actions
        m, x = t.match[a], t.expose[a]
        layout = self._layout
        if self._pending:
            parent, role = self._pending_parent, self._pending_role
            arm = (self._arms - self._pending) if role == R_ARM else (layout[parent] >> L_ARM & ARM_MASK) - 1
        else:
            parent = self._end_nodes[m][0]
            arm = (layout[parent] >> L_ARM & ARM_MASK) - 1
            role = R_DOUBLE if m == x else R_LINE
        return Placement(m, x, parent, arm, Role(role), self._current)

    def layout(self) -> list[Placement]:
        return [unpack_placement(v) for v in self._layout]

    def open_end_nodes(self) -> list[list[int]]:
        return [list(nodes) for nodes in self._end_nodes]


class ReferenceGame(GameRecords, GameLayout):
    """A whole Chicken Foot game (all rounds), stepped one decision at a time.

    Args:
        config: the rules; default :class:`RulesConfig()`.
        seed: an int, ``None`` or an ``np.random.Generator``; it shuffles every round that has no
            scripted deal (the only randomness in the game).
        deals: optional scripted per-round deals (see :func:`validate_deals`); rounds past the end
            of the list, or given as ``None``, are shuffled.

    This module holds the turn flow (dealing, :meth:`apply` and the rules it runs) and the
    read-only properties; the other parts are :class:`~cf_env.engine.views.GameViews` (the event
    log, the state view), :class:`~cf_env.engine.records.GameRecords`
    (records, copies) and :class:`~cf_env.engine.geometry.GameLayout` (where tiles lie), all over
    the slots :class:`~cf_env.engine.state.GameState` declares.
    """

    __slots__ = ()  # GameState declares them

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
        self._deals = []  # per round: the hands in seat order, then the boneyard top first
        self._events = array("i")
        self._round_index = -1
        self._round_scores = []
        self._round_ends = []  # (RoundEnd, player who went out or -1)
        self._round_hands = []  # per finished round: each seat's hand bits at its end
        self._totals = [0] * self._num_players
        self._over = False
        self._winners = []
        self._arms = cfg.center_arms
        # R15 per tile, from the one scoring rule (the batched engine compiles the same function)
        self._points = tuple(tile_points(lo, hi, cfg.double_blank_points) for lo, hi in zip(t.tile_low, t.tile_high))
        self._round_tag = 0
        self._current = NO_CURRENT
        self._legal = 0
        self._advance(self._start_round())

    # ------------------------------------------------------------------ round set-up (R4-R7)

    def _start_round(self) -> int:
        cfg, t, n = self.config, self._actions, self._num_players
        r = self._round_index = self._round_index + 1
        scripted = self._scripted[r] if r < len(self._scripted) else None
        if scripted is None:
            scripted = split_deal(self._rng.permutation(t.num_tiles).tolist(), cfg)
        hands, bone_top_first = scripted
        self._deals.append(bytes(deal_order(hands, bone_top_first)))
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
        self._end_nodes = [[] for _ in range(k)]
        self._free_open = 0
        self._open_values = 0
        self._layout = []
        self._played = 0
        self._unmatched = [0] * n
        self._played_by = [0] * n
        self._draws = [0] * n
        self._void_at = [bytearray(k) for _ in range(n)]
        self._drawn = -1
        self._round_start = len(self._events)
        self._round_tag = r << EV_ROUND
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
                self._log(EventKind.SEARCH_DRAW, p, tile)
                if tile == start_tile:
                    holder = p
                    break
                p = (p + 1) % n
        self._hands[holder] &= ~sbits
        self._hand_sizes[holder] -= 1
        self._played = sbits
        self._played_by[holder] = sbits
        self._layout.append(pack_placement(start, start, -1, -1, Role.CENTER, holder))
        self._log(EventKind.START, holder, start_tile)
        # R9: every play goes onto an empty centre arm until all of them hold a tile.
        self._pending = cfg.center_arms
        self._pending_value = start
        self._pending_parent = 0
        self._pending_role = R_ARM
        self._open_plays = t.row_bits[start]
        if self._hand_sizes[holder] == 0:
            self._round_ends.append((RoundEnd.DOMINO, holder))
            return -1
        return (holder + 1) % n  # R7

    # ------------------------------------------------------------------ turn flow

    def _advance(self, q: int) -> None:
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
                self._current = NO_CURRENT
                self._legal = 0
                return
            q = self._start_round()
        self._current = q
        self._legal = legal
        self._drawn = -1

    def _finish_round(self) -> None:
        t = self._actions
        reason, out = self._round_ends[-1]
        points = self._points
        scores = [sum([points[tile] for tile in t.bits_to_tiles(h)]) for h in self._hands]
        self._round_scores.append(scores)
        self._round_hands.append(tuple(self._hands))
        for p, s in enumerate(scores):
            self._totals[p] += s
        self._log(EventKind.ROUND_END, out & 0xFF, int(reason))
        if self._round_index + 1 >= self.config.rounds:
            self._over = True
            self._winners = winners_of(self._round_scores)

    # ------------------------------------------------------------------ the one mutating call

    def apply(self, action: int) -> int:
        a = action if type(action) is int else as_index(action)
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
            arm = (self._arms - pend) if role == R_ARM else (layout[parent] >> L_ARM & ARM_MASK) - 1
            pend -= 1
            self._pending = pend
        else:  # any open end showing m; the canonical one is the one open longest
            parent = self._end_nodes[m].pop(0)
            arm = (layout[parent] >> L_ARM & ARM_MASK) - 1
            ends[m] -= 1
            if not ends[m]:
                self._free_open ^= t.row_bits[m]
                self._open_values ^= 1 << m
            role = R_LINE
            if m == x:  # R10: a double closes the end and opens three toes
                role = R_DOUBLE
                pend = self._pending = TOES_PER_DOUBLE
                self._pending_value = m
                self._pending_parent = node
                self._pending_role = R_TOE
        # pack_placement, inlined: a call costs more than the rest of this line on the per-play path
        layout.append(m | x << L_EXPOSE | (parent + 1) << L_PARENT | (arm + 1) << L_ARM | role << L_ROLE
                      | p << L_PLAYER)
        if role != R_DOUBLE:
            if not ends[x]:
                self._free_open |= t.row_bits[x]
                self._open_values |= 1 << x
            ends[x] += 1
            self._end_nodes[x].append(node)
        op = self._open_plays = t.row_bits[self._pending_value] if pend else self._free_open
        self._log(K_PLAY, p, a)
        counts = self._hand_sizes
        counts[p] -= 1
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
        t = self._actions
        tile = self._boneyard.pop()
        tbits = t.tile_bits[tile]
        self._hands[p] |= tbits
        self._hand_sizes[p] += 1
        faced = self._unmatched[p] = (1 << self._pending_value) if self._pending else self._open_values
        self._fail(p, faced)
        self._draws[p] += 1
        self._log(K_DRAW, p, tile)
        plays = tbits & self._open_plays
        if plays:  # play it now, or keep it (PASS)
            self._legal = plays | self._pass_bit
            self._drawn = tile
        elif self._until_playable and self._boneyard:  # house rule: keep drawing
            self._legal = self._draw_bit
        else:
            self._advance((p + 1) % self._num_players)

    def _pass_turn(self, p: int) -> None:
        kept = self._drawn >= 0
        if not kept:
            faced = self._unmatched[p] = (1 << self._pending_value) if self._pending else self._open_values
            self._fail(p, faced)
        self._log(K_PASS, p, kept)  # R17: see events()
        self._advance((p + 1) % self._num_players)

    def _fail(self, p: int, faced: int) -> None:
        at, d, v = self._void_at[p], self._draws[p] + 1, 0
        while faced:
            if faced & 1:
                at[v] = d
            faced >>= 1
            v += 1

    def _reject(self, a: int) -> None:
        if self._over:
            raise GameOverError("the game is over; start a new Game")
        name = self._actions.strings[a] if 0 <= a < self._actions.num_actions else "out of range"
        raise IllegalActionError(
            f"action {a} ({name}) is not legal for player {self._current}; legal: "
            f"{[self._actions.strings[b] + f' ({b})' for b in self.legal_actions()]}"
        )

    # ------------------------------------------------------------------ read-only views

    num_players = property(lambda self: self._num_players)

    current_player = property(lambda self: self._current)

    is_over = property(lambda self: self._over)

    legal_bits = property(lambda self: self._legal)

    def legal_actions(self) -> list[int]:
        return self._actions.bits_to_actions(self._legal)

    def is_legal(self, action: int) -> bool:
        return bit_set(self._legal, action)

    round_index = property(lambda self: self._round_index)

    def hand(self, player: int) -> list[Tile]:
        return [Tile.from_index(t) for t in self._actions.bits_to_tiles(self._hands[player])]

    def hand_bits(self, player: int) -> int:
        return self._hands[player]

    hand_sizes = property(lambda self: list(self._hand_sizes))

    boneyard_size = property(lambda self: len(self._boneyard))

    def boneyard_tiles(self) -> list[int]:
        return sorted(self._boneyard)

    def hidden_tiles(self, seat: int) -> np.ndarray:
        n, t = self._num_players, self.config.num_tiles
        out = np.zeros((n, t), np.float32)
        for i in range(1, n):
            out[i - 1, [tile.index for tile in self.hand((seat + i) % n)]] = 1.0
        out[n - 1, self._boneyard] = 1.0
        return out.reshape(n * t)

    def set_next_draw(self, tile: int) -> None:
        bone = self._boneyard
        try:
            j = bone.index(as_index(tile))
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

    played_bits = property(lambda self: self._played)

    open_ends = property(lambda self: list(self._open_ends))

    open_values = property(lambda self: (1 << self._pending_value) if self._pending else self._open_values)

    @property
    def pending(self) -> Pending | None:
        if not self._pending:
            return None
        return Pending(Role(self._pending_role), self._pending_value, self._pending)

    drawn_tile = property(lambda self: Tile.from_index(self._drawn) if self._drawn >= 0 and not self._over else None)

    def unmatched(self, player: int) -> int:
        return self._unmatched[player]

    def played_by(self, player: int) -> list[Tile]:
        return [Tile.from_index(t) for t in self._actions.bits_to_tiles(self._played_by[player])]

    def draws(self, player: int) -> int:
        return self._draws[player]

    def void_draws(self, player: int) -> dict[int, int]:
        d = self._draws[player] + 1
        return {v: d - at for v, at in enumerate(self._void_at[player]) if at}

    round_scores = property(lambda self: [list(s) for s in self._round_scores])

    @property
    def round_end_hands(self) -> list[list[list[Tile]]]:
        tiles = self._actions.bits_to_tiles
        return [[[Tile.from_index(i) for i in tiles(h)] for h in hands] for hands in self._round_hands]

    rounds_finished = property(lambda self: len(self._round_scores))

    round_end_reasons = property(lambda self: [(RoundEnd(r), p) for r, p in self._round_ends[: len(self._round_scores)]])

    totals = property(lambda self: list(self._totals))

    winners = property(lambda self: list(self._winners))

    # ------------------------------------------------------------------ records and replay

    @classmethod
    def of(cls, game: Any) -> ReferenceGame:
        reference = cls(game.config, deals=game.all_deals())
        for action in game.actions():
            reference.apply(action)
        return reference
