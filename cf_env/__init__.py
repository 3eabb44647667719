"""Chicken Foot dominoes for reinforcement learning.

``cf_env.engine`` is the pure rules engine; importing it (or this package) does not import
pettingzoo, gymnasium or torch.
"""

from cf_env.engine import (  # noqa: F401  (re-exported public names)
    ChickenFootError,
    ConfigError,
    DealError,
    Game,
    IllegalActionError,
    Move,
    RulesConfig,
    Tile,
    action_to_string,
    string_to_action,
)

__version__ = "0.1.0"
