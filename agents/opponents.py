"""The single-agent env with its other seats played by agents named by spec.

    env = single_env_vs(RulesConfig(num_players=4), ["heuristic"])   # 1 learner vs 3 heuristic

The env hands each agent its own generator (``env.np_random``, seeded by ``reset(seed)``), so a
seeded episode repeats exactly. Framework scripts (SB3, Tianshou) build their envs with this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents import load
from cf_env import ChickenFootSingleEnv, ConfigError, RulesConfig

__all__ = ["single_env_vs"]


def single_env_vs(rules: RulesConfig, opponents: Sequence[str], learner_seat: int | str = "random",
                  **env_kwargs: Any) -> ChickenFootSingleEnv:
    """A :class:`ChickenFootSingleEnv` whose other seats are ``opponents``: one spec for every
    other seat, or one per seat clockwise from the learner's left. ``env_kwargs`` go to the env
    (``reward``, ``illegal_action``, ``render_mode``, ...)."""
    n = rules.num_players
    if len(opponents) not in (1, n - 1):
        raise ConfigError(f"give one opponent spec or {n - 1} (one per other seat), got {len(opponents)}")
    specs = list(opponents) * (n - 1) if len(opponents) == 1 else list(opponents)
    return ChickenFootSingleEnv(opponents=[load(s, rules) for s in specs], learner_seat=learner_seat,
                                config=rules, **env_kwargs)
