"""The rules' vocabulary, with no numba, gymnasium, pettingzoo or torch: the rules config
(:class:`RulesConfig`, docs/RULES.md), tiles and the action table, scoring (R15, R16), deals and
records, the value types a game hands out, and the errors. The rules run in the compiled engine
(:mod:`cf_env.vector`); :class:`cf_env.Game` is one game of it, read through these types::

    from cf_env import Game, RulesConfig

    game = Game(RulesConfig(), seed=0)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    print(game.totals, game.winners)

One vocabulary for a round's state
----------------------------------
:class:`cf_env.Game`'s properties, the batched engine's arrays (:class:`cf_env.vector.State`, one
row a game) and the state table's blocks (:mod:`cf_env.engine.table`) name the same things the
same way:

====================  ============================================================================
``current_player``    the seat to decide (-1 once the game is over; the batched engine: while a void
                      game waits for a new deal)
``hand_sizes``        tiles in each seat's hand
``open_ends``         free open ends showing each pip value
``pending``           forced slots still empty (R9 centre arms, R10 toes); with ``pending_value``,
                      the value they need, and ``pending_role``, ``Role.ARM`` or ``Role.TOE``
                      (:attr:`Game.pending` hands the three out as one :class:`Pending`)
``drawn``             the tile just drawn that the player may play or keep (R12; ``drawn_tile``)
``unmatched``         per seat, the values it could not match (R17)
``played_by``         per seat, the tiles it placed this round
``draws``             per seat, the tiles it drew this round (R6 search draws included)
``void_at``           per seat and value: 1 + ``draws`` just before its latest failure facing it
``round_index``       the round in play
``totals``            points so far; ``round_scores`` each round's
``boneyard``          the tiles left to draw (``boneyard_size``; the batched engine keeps the round's
                      deal in ``bone`` with the boneyard's top at ``bone_pos``)
====================  ============================================================================

A set of tiles is held two ways: as values (lists, :class:`Tile`), or as an int of *action bits*
(``legal_bits``, ``hand_bits``, ``played_bits``: a tile ``{m, x}`` sets bits ``m*K+x`` and
``x*K+m``; :meth:`ActionTable.bits_to_actions` reads them).
"""

from cf_env.engine import scoring  # noqa: F401 - a submodule other layers reach as cf_env.engine.scoring
from cf_env.engine.actions import (
    ActionTable,
    Move,
    Tile,
    action_table,
    action_to_string,
    string_to_action,
    tile_index,
)
from cf_env.engine.config import DRAW_RULES, RulesConfig, num_tiles
from cf_env.engine.errors import (
    ActionParseError,
    ChickenFootError,
    ConfigError,
    DealError,
    GameOverError,
    IllegalActionError,
    RecordError,
)
from cf_env.engine.records import RECORD_VERSION, validate_deals, winners_of
from cf_env.engine.state import TOES_PER_DOUBLE, Event, EventKind, Pending, Placement, Role, RoundEnd, unpack_event

__all__ = [
    "ActionParseError", "ActionTable", "ChickenFootError", "ConfigError", "DRAW_RULES", "DealError",
    "Event", "EventKind", "GameOverError", "IllegalActionError", "Move", "Pending",
    "Placement", "RECORD_VERSION", "RecordError", "Role", "RoundEnd", "RulesConfig", "TOES_PER_DOUBLE", "Tile",
    "action_table", "action_to_string", "num_tiles", "string_to_action", "tile_index", "unpack_event",
    "validate_deals", "winners_of",
]
