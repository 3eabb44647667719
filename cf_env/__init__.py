"""Chicken Foot dominoes for reinforcement learning.

``from cf_env import env, raw_env`` gives the PettingZoo AEC environment; ``cf_env.engine`` is
the pure rules engine. Importing this package registers the Gymnasium single-agent env
``"ChickenFoot-v0"`` but imports neither pettingzoo nor torch: the env classes load on first use.
"""

from __future__ import annotations

from typing import Any

from cf_env.engine import (  # noqa: F401  (re-exported public names)
    ActionParseError,
    ChickenFootError,
    ConfigError,
    DealError,
    Game,
    GameOverError,
    IllegalActionError,
    Move,
    RecordError,
    RulesConfig,
    Tile,
    action_table,
    action_to_string,
    string_to_action,
)

__version__ = "0.1.0"

_LAZY = {
    "env": "cf_env.chicken_foot",
    "raw_env": "cf_env.chicken_foot",
    "REWARD_MODES": "cf_env.chicken_foot",
    "ResetNeededError": "cf_env.chicken_foot",
    "AgentNameError": "cf_env.chicken_foot",
    "RESET_OPTIONS": "cf_env.chicken_foot",
    "ChickenFootSingleEnv": "cf_env.gym_env",
    "ObservationEncoder": "cf_env.observation",
    "OBSERVATION_VERSION": "cf_env.observation",
    "render_ansi": "cf_env.render",
    "render_rgb": "cf_env.render",
    "VectorGame": "cf_env.vector",
    "random_legal_actions": "cf_env.vector",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cf_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LAZY))


def _register_gymnasium() -> None:
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # gymnasium is a core dependency; tolerate its absence for engine-only use
        return
    if "ChickenFoot-v0" not in registry:
        register(id="ChickenFoot-v0", entry_point="cf_env.gym_env:ChickenFootSingleEnv")


_register_gymnasium()
