"""Typed errors raised by the engine.

Every error the engine raises for bad input derives from :class:`ChickenFootError` and from
``ValueError`` (or ``RuntimeError`` for misuse of a finished game), so callers can catch either
the project-wide base or the builtin they already expect. A failed call changes nothing.
"""

from __future__ import annotations


class ChickenFootError(Exception):
    """Base class of every error raised by :mod:`cf_env`."""


class ConfigError(ChickenFootError, ValueError):
    """A :class:`~cf_env.engine.RulesConfig` field (or an env keyword) has a bad value."""


class DealError(ChickenFootError, ValueError):
    """A scripted deal does not describe a valid deal of the configured set."""


class ActionParseError(ChickenFootError, ValueError):
    """A string could not be parsed as a tile or a move."""


class IllegalActionError(ChickenFootError, ValueError):
    """The action is not legal for the player to move; the game state is unchanged."""


class GameOverError(ChickenFootError, RuntimeError):
    """An action was applied to a game that has already ended."""


class RecordError(ChickenFootError, ValueError):
    """A game record is malformed or does not replay."""


class ResetNeededError(ChickenFootError, RuntimeError):
    """An environment or a batched game was used before ``reset()``."""
