"""Chicken Foot dominoes for reinforcement learning.

``from cf_env import env, raw_env`` gives the PettingZoo AEC environment; ``cf_env.engine`` is
the pure rules engine. Importing this package registers the envs where users look for them:

- PettingZoo: ``pettingzoo.make("aec", "chickenfoot/chicken_foot_v1", num_players=4)`` (``env()``)
  and ``pettingzoo.make("parallel", "chickenfoot/chicken_foot_v1")`` (the AEC env through
  ``turn_based_aec_to_parallel``);
- Gymnasium: ``gymnasium.make("ChickenFoot-v1", ...)``, the single-agent view, and
  ``gymnasium.make_vec("ChickenFoot-v1", num_envs, vectorization_mode="vector_entry_point", ...)``
  (or ``cf_env.vector_env(num_envs, ...)``), the vector env over the batched engine.

It imports no torch, and the env classes themselves load on first use (registration names them
by their import path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# re-exported public names
from cf_env.engine import ActionParseError, ChickenFootError, ConfigError, DealError, Move, RulesConfig, Tile  # noqa: F401
from cf_env.engine.actions import action_table, action_to_string, string_to_action  # noqa: F401
from cf_env.engine.errors import GameOverError, IllegalActionError, RecordError  # noqa: F401

__version__ = "0.4.0"

if TYPE_CHECKING:  # the lazily loaded names, for type checkers (a user's mypy sees their signatures)
    from cf_env.chicken_foot import (  # noqa: F401
        RESET_OPTIONS,
        REWARD_MODES,
        AgentNameError,
        ResetNeededError,
        env,
        parallel_env,
        raw_env,
    )
    from cf_env.game import Game, GameEncoder  # noqa: F401
    from cf_env.gym_env import OBS_TYPES, ChickenFootSingleEnv  # noqa: F401
    from cf_env.gym_vector import ChickenFootVectorEnv, vector_env  # noqa: F401
    from cf_env.observation import OBSERVATION_VERSION, ObservationEncoder  # noqa: F401
    from cf_env.render import render_ansi, render_rgb  # noqa: F401
    from cf_env.vector import VectorGame, random_legal_actions  # noqa: F401

_LAZY = {
    "env": "cf_env.chicken_foot",
    "parallel_env": "cf_env.chicken_foot",
    "raw_env": "cf_env.chicken_foot",
    "REWARD_MODES": "cf_env.chicken_foot",
    "ResetNeededError": "cf_env.chicken_foot",
    "AgentNameError": "cf_env.chicken_foot",
    "RESET_OPTIONS": "cf_env.chicken_foot",
    "ChickenFootSingleEnv": "cf_env.gym_env",
    "OBS_TYPES": "cf_env.gym_env",
    "ChickenFootVectorEnv": "cf_env.gym_vector",
    "vector_env": "cf_env.gym_vector",
    "ObservationEncoder": "cf_env.observation",
    "Game": "cf_env.game",
    "GameEncoder": "cf_env.game",
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


#: the ids the envs are registered under (the version follows the AEC env's metadata name)
GYMNASIUM_ID = "ChickenFoot-v1"
PETTINGZOO_ID = "chickenfoot/chicken_foot_v1"


def _register() -> None:
    # both are core dependencies; tolerate their absence for engine-only use
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:
        pass
    else:
        if GYMNASIUM_ID not in registry:
            register(id=GYMNASIUM_ID, entry_point="cf_env.gym_env:ChickenFootSingleEnv",
                     vector_entry_point="cf_env.gym_vector:vector_env")
    try:
        import pettingzoo
    except ImportError:
        return
    from pettingzoo.env_registry.spec import EnvSpec

    key = EnvSpec(PETTINGZOO_ID).id  # PettingZoo's normal form, chickenfoot/chicken_foot-v1
    if key not in pettingzoo.aec_registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="cf_env.chicken_foot:env")
    if key not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", PETTINGZOO_ID, entry_point="cf_env.chicken_foot:parallel_env")


_register()

from cf_env.packages import install_shadow_finder  # noqa: E402  (after the registration it sits beside)

install_shadow_finder()  # a user's own training/ or agents/ folder is named when it hides ours
