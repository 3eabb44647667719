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

from array import array
from collections.abc import Iterable, Sequence
from operator import index as _as_index
from typing import Any

import numpy as np

from cf_env.engine.actions import Tile, action_table, bit_set
from cf_env.engine.config import RulesConfig
from cf_env.engine.errors import DealError, GameOverError, IllegalActionError, RecordError
from cf_env.engine.geometry import GameLayout
from cf_env.engine.records import RECORD_VERSION, Dealt, GameRecords, deal_order, split_deal, validate_deals, winners_of
from cf_env.engine.scoring import tile_points
from cf_env.engine.state import (
    ARM_MASK,
    EV_ROUND,
    K_DRAW,
    K_PASS,
    K_PLAY,
    L_ARM,
    L_EXPOSE,
    L_PARENT,
    L_PLAYER,
    L_ROLE,
    NO_CURRENT,
    R_ARM,
    R_DOUBLE,
    R_LINE,
    R_TOE,
    TOES_PER_DOUBLE,
    Event,
    EventKind,
    Pending,
    Placement,
    Role,
    RoundEnd,
    StateView,
    pack_placement,
    unpack_event,
)

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
    "TOES_PER_DOUBLE",
    "unpack_event",
    "validate_deals",
    "winners_of",
]


class Game(GameRecords, GameLayout):
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
        """Deal, find and place the starting double; return the first player to decide,
        or -1 if the holder went out by placing it (a 1-tile hand)."""
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
                self._current = NO_CURRENT
                self._legal = 0
                return
            q = self._start_round()
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
        self._log(EventKind.ROUND_END, out & 0xFF, int(reason))
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
        """R12: player ``p`` draws; a playable tile may be played or kept, else the turn ends (or,
        under ``until_playable``, ``p`` draws again while the boneyard lasts)."""
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
        """PASS: ``p`` keeps the tile just drawn (R12) or has nothing to play with an empty boneyard (R13)."""
        kept = self._drawn >= 0
        if not kept:
            faced = self._unmatched[p] = (1 << self._pending_value) if self._pending else self._open_values
            self._fail(p, faced)
        self._log(K_PASS, p, kept)  # R17: see events()
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
        return bit_set(self._legal, action)

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

    def turn(self) -> tuple[int, int]:
        """``(current_player, legal_bits)`` in one call, for a caller's per-step path (the AEC env);
        ``(-1, 0)`` once the game is over."""
        return self._current, self._legal

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

    def hidden_tiles(self, seat: int) -> np.ndarray:
        """What ``seat`` cannot see (hidden information, for a critic or a belief's labels, never
        for a policy): ``(n * T,)`` float32 flags, the opponents' hands in seat order from the
        seat's left (``n - 1`` rows of ``T``), then the boneyard's tiles; laid out as
        :meth:`cf_env.vector.VectorGame.hidden_tiles`."""
        n, t = self._num_players, self.config.num_tiles
        out = np.zeros((n, t), np.float32)
        for i in range(1, n):
            out[i - 1, [tile.index for tile in self.hand((seat + i) % n)]] = 1.0
        out[n - 1, self._boneyard] = 1.0
        return out.reshape(n * t)

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

    # ------------------------------------------------------------------ records and replay

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

    def rewound(self) -> Game:
        """A new game of the same rules at its start, with this game's deals (every round dealt so
        far) scripted: applying :meth:`actions` to it plays this game again. The same as
        ``Game.from_record`` of :meth:`to_record` without the actions, but with no JSON to parse
        (for code that follows finished games with every hand in view, such as the lab's ``lab.luck``)."""
        return Game(self.config, deals=Dealt((self.deal_tiles(r) for r in range(len(self._deals))), self.config))

    def apply_all(self, actions: Iterable[int]) -> None:
        """Apply a sequence of actions; on an illegal one raises :class:`RecordError` naming its
        position (the actions before it stay applied)."""
        for i, a in enumerate(actions):
            try:
                self.apply(a)
            except (IllegalActionError, GameOverError) as exc:
                raise RecordError(f"action #{i} ({a!r}) does not replay: {exc}") from exc

    def __repr__(self) -> str:
        state = "over" if self._over else f"player {self._current} to move"
        return f"<Game round {self._round_index + 1}/{self.config.rounds}, {state}, totals {self._totals}>"
