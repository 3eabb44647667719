"""The game's state as one float32 vector, kept current move by move (:meth:`Game.table`).

Every seat's observation is a selection of this vector's elements in the observer's order
(:class:`cf_env.ObservationEncoder` gathers it with one ``take``), so no move is decoded twice:
a play writes a handful of entries here (its tile in the hand, layout and played-by blocks, two
open-end counts, a hand size, the forced slots when they change), a draw a few more. The blocks
are in *absolute* seat order and hold hidden information (every hand): a reader picks what a
seat may see, as the observation does. With ``n`` players, ``T`` tiles and ``K = max_pip + 1``:

=================  =========  ======================================================================
block              shape      content
=================  =========  ======================================================================
``hand``           (n, T)     1 for each tile in each seat's hand (hidden but from its holder)
``layout``         (T,)       1 for each tile on this round's layout
``drawn``          (T,)       one-hot tile the seat to move just drew and may play or keep (R12)
``no_drawn``       (T,)       always 0: what every other seat sees of ``drawn``
``pending_value``  (K,)       one-hot pip value of the forced slots (R9 centre arms, R10 toes)
``pending_kind``   (2,)       one-hot [centre arms, toes]; zeros when nothing is forced
``unmatched``      (n, K)     per seat, 1 for each value it could not match at its latest failure
``played``         (n, T)     per seat, 1 for each tile it placed this round (the starting double too)
``void``           (n, K)     per seat, 1 for each value it has failed to match this round
``open_ends``      (K,)       free open ends showing each value
``pending_count``  (1,)       forced slots still empty
``hand_sizes``     (n,)       tiles in each hand
``boneyard``       (1,)       tiles left in the boneyard
``round``          (2,)       [0-based round index, rounds left after this one]
``draws``          (n,)       tiles each seat drew this round (R6 search draws included)
``void_draws``     (n, K)     per seat and ``void`` value, draws since its latest failure facing it,
                              that failure's own draw included (0 where ``void`` is 0)
``scores``         (n,)       points so far / ``SCORE_SCALE``
=================  =========  ======================================================================

The names are the observation's (:mod:`cf_env.observation`), which documents what each means.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from cf_env.engine.actions import action_table
from cf_env.engine.config import RulesConfig

__all__ = ["SCORE_FACTOR", "SCORE_SCALE", "TableLayout", "table_layout"]

SCORE_SCALE = 100.0  #: the ``scores`` block holds points / SCORE_SCALE
SCORE_FACTOR = 1.0 / SCORE_SCALE  #: what the table multiplies by (0.01 exactly as the literal: 1/100 rounds to it)


class TableLayout:
    """Where each block of :meth:`Game.table` starts, for one :class:`RulesConfig`.

    ``shapes`` maps each block's name to its shape (in table order) and ``start`` to its first
    element; the per-seat blocks also have one start per seat as plain int attributes (``hand_of``,
    ``played_of``, ...) for the engine's per-move writes.
    """

    def __init__(self, config: RulesConfig) -> None:
        n, k, t = config.num_players, config.max_pip + 1, config.num_tiles
        self.num_players, self.num_values, self.num_tiles = n, k, t
        self.shapes: dict[str, tuple[int, ...]] = {
            "hand": (n, t),
            "layout": (t,),
            "drawn": (t,),
            "no_drawn": (t,),
            "pending_value": (k,),
            "pending_kind": (2,),
            "unmatched": (n, k),
            "played": (n, t),
            "void": (n, k),
            "open_ends": (k,),
            "pending_count": (1,),
            "hand_sizes": (n,),
            "boneyard": (1,),
            "round": (2,),
            "draws": (n,),
            "void_draws": (n, k),
            "scores": (n,),
        }
        self.start: dict[str, int] = {}
        offset = 0
        for name, shape in self.shapes.items():
            self.start[name] = offset
            size = 1
            for d in shape:
                size *= d
            offset += size
        self.size = offset
        s = self.start
        self.layout, self.drawn = s["layout"], s["drawn"]
        self.pending_value, self.pending_kind, self.pending_count = s["pending_value"], s["pending_kind"], s["pending_count"]
        self.open_ends, self.hand_sizes, self.boneyard, self.round = s["open_ends"], s["hand_sizes"], s["boneyard"], s["round"]
        self.draws, self.scores = s["draws"], s["scores"]
        self.hand_of = tuple(s["hand"] + p * t for p in range(n))
        self.played_of = tuple(s["played"] + p * t for p in range(n))
        self.unmatched_of = tuple(s["unmatched"] + p * k for p in range(n))
        self.void_of = tuple(s["void"] + p * k for p in range(n))
        self.void_draws_of = tuple(s["void_draws"] + p * k for p in range(n))
        # A round has one START, at most B = T - n * hand_size draws (the boneyard; R6 search draws
        # included), at most as many keeping PASSes, at most T - 1 plays, and at most n - 1 passes on
        # an empty boneyard in a row before a play (n would mean nobody can play: blocked, R14)
        bone = t - n * config.hand_size
        self.history_length = 1 + 2 * bone + (t - 1) + (n - 1) * t  #: rows of Game.history()
        #: per event (its code without the round), each seat's view of it as a row of Game.history()
        #: in bytes: a cache the games of this config fill as events first occur
        self.history_rows: dict[int, tuple[tuple[int, int, bytes], ...]] = {}
        actions = action_table(config.max_pip)
        #: per tile, the action bit ``low*K + high`` that stands for it in a set of action bits
        self.tile_action = np.array([lo * k + hi for lo, hi in zip(actions.tile_low, actions.tile_high)], dtype=np.intp)

    def positions(self, name: str, index: int = 0) -> range:
        """The table positions of block ``name`` (of its row ``index`` for a per-seat block)."""
        shape = self.shapes[name]
        width = shape[-1]
        first = self.start[name] + (index * width if len(shape) == 2 else 0)
        return range(first, first + width)

    def row(self, name: str, seat: int) -> range:
        """The table positions of seat ``seat``'s row of per-seat block ``name`` (one element of a
        one-dimensional per-seat block such as ``hand_sizes``)."""
        shape = self.shapes[name]
        width = shape[-1] if len(shape) == 2 else 1
        first = self.start[name] + seat * width
        return range(first, first + width)


@lru_cache(maxsize=64)
def table_layout(config: RulesConfig) -> TableLayout:
    """The (shared, immutable) :class:`TableLayout` of ``config``."""
    return TableLayout(config)
