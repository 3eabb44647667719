"""Pure rules engine for Chicken Foot dominoes (see ``docs/RULES.md``; no gymnasium, pettingzoo or torch).

Usage::

    from cf_env.engine import Game, RulesConfig

    game = Game(RulesConfig(), seed=0)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    print(game.totals, game.winners)
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
from cf_env.engine.game import (
    RECORD_VERSION,
    Event,
    EventKind,
    Game,
    Pending,
    Placement,
    Role,
    RoundEnd,
    StateView,
    unpack_event,
    validate_deals,
    winners_of,
)

__all__ = [
    "ActionParseError", "ActionTable", "ChickenFootError", "ConfigError", "DRAW_RULES", "DealError",
    "Event", "EventKind", "Game", "GameOverError", "IllegalActionError", "Move", "Pending",
    "Placement", "RECORD_VERSION", "RecordError", "Role", "RoundEnd", "RulesConfig", "StateView", "Tile",
    "action_table", "action_to_string", "num_tiles", "string_to_action", "tile_index", "unpack_event",
    "validate_deals", "winners_of",
]
