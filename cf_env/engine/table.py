"""The blocks of a game's state, in the order the observation lays them out.

Every seat's observation (:class:`cf_env.ObservationEncoder`, written by the compiled engine) is
these blocks seen from the observer: a per-seat block keeps the observer's row, every seat's or
the opponents' in order from the observer. Here they are in *absolute* seat order and hold hidden
information (every hand). With ``n`` players, ``T`` tiles and ``K = max_pip + 1``:

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

from cf_env.engine.config import RulesConfig

__all__ = ["SCORE_FACTOR", "SCORE_SCALE", "TableLayout", "table_layout"]

SCORE_SCALE = 100.0  #: the ``scores`` block holds points / SCORE_SCALE
SCORE_FACTOR = 1.0 / SCORE_SCALE  #: what points are multiplied by (0.01 exactly as the literal: 1/100 rounds to it)


class TableLayout:
    """The state's blocks for one :class:`RulesConfig`: ``shapes`` maps each block's name to its
    shape, in order, and ``history_length`` is the rows of a seat's history of a round."""

    def __init__(self, config: RulesConfig) -> None:
        n, k, t = config.num_players, config.max_pip + 1, config.num_tiles
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
        # A round has one START, at most B = T - n * hand_size draws (the boneyard; R6 search draws
        # included), at most as many keeping PASSes, at most T - 1 plays, and at most n - 1 passes on
        # an empty boneyard in a row before a play (n would mean nobody can play: blocked, R14)
        bone = t - n * config.hand_size
        self.history_length = 1 + 2 * bone + (t - 1) + (n - 1) * t  #: rows of a seat's history of a round


@lru_cache(maxsize=64)
def table_layout(config: RulesConfig) -> TableLayout:
    """The (shared, immutable) :class:`TableLayout` of ``config``."""
    return TableLayout(config)
