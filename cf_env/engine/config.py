"""The rules configuration: one frozen, validated dataclass (docs/RULES.md R1, R2, R4, R5, R9, R12, R15)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from cf_env.engine.errors import ConfigError

DRAW_RULES = ("one", "until_playable")
MAX_PIP_RANGE = (1, 18)
CENTER_ARMS_RANGE = (1, 8)


def num_tiles(max_pip: int) -> int:
    """Tiles in a double-``max_pip`` set (R1): ``(N + 1)(N + 2) / 2``."""
    return (max_pip + 1) * (max_pip + 2) // 2


def _require_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an int, got {value!r} ({type(value).__name__})")


@dataclass(frozen=True)
class RulesConfig:
    """Rule options of one game; validated on construction.

    Attributes:
        max_pip: the set is double-``max_pip`` (R1); 1..18, default 9 (55 tiles).
        num_players: players at the table (R2); at least 2.
        hand_size: tiles dealt to each player (R4); ``num_players * hand_size`` must leave at
            least one tile in the boneyard.
        rounds: rounds in the game (R5); ``None`` means the full game, ``max_pip + 1``. Round k
            starts with the double ``max_pip - k``.
        center_arms: arms of the starting double that must all hold a tile before play goes
            anywhere else (R9); 4 is standard, 3 and 6 are known variants; 1..8 and at most
            ``max_pip`` (only ``max_pip`` tiles besides the double carry its value), so a set
            smaller than double-four needs a smaller value.
        draw_rule: ``"one"`` (R12, draw a single tile) or ``"until_playable"`` (keep drawing
            until a playable tile or an empty boneyard).
        double_blank_points: what the 0-0 scores when left in hand (R15).
    """

    max_pip: int = 9
    num_players: int = 4
    hand_size: int = 7
    # None asks for the full game and becomes ``max_pip + 1`` at construction: an int from then on
    rounds: int = None  # type: ignore[assignment]
    center_arms: int = 4
    draw_rule: str = "one"
    double_blank_points: int = 50

    def __post_init__(self) -> None:
        try:
            self._validate()
        except ConfigError as exc:
            raise ConfigError(f"{exc} (rules: docs/RULES.md)") from None

    def _validate(self) -> None:
        for name in ("max_pip", "num_players", "hand_size", "center_arms", "double_blank_points"):
            _require_int(name, getattr(self, name))
        lo, hi = MAX_PIP_RANGE
        if not lo <= self.max_pip <= hi:
            raise ConfigError(f"max_pip must be between {lo} and {hi} (R1), got {self.max_pip}")
        if self.num_players < 2:
            raise ConfigError(f"num_players must be at least 2 (R2), got {self.num_players}")
        if self.hand_size < 1:
            raise ConfigError(f"hand_size must be at least 1 (R4), got {self.hand_size}")
        tiles = num_tiles(self.max_pip)
        if self.num_players * self.hand_size >= tiles:
            raise ConfigError(
                f"the deal does not fit the set (R2): {self.num_players} players x "
                f"{self.hand_size} tiles = {self.num_players * self.hand_size}, but a "
                f"double-{self.max_pip} set has {tiles} tiles and the boneyard must keep at least "
                f"one; lower num_players or hand_size, or raise max_pip"
            )
        if self.rounds is None:
            object.__setattr__(self, "rounds", self.max_pip + 1)
        _require_int("rounds", self.rounds)
        if not 1 <= self.rounds <= self.max_pip + 1:
            raise ConfigError(
                f"rounds must be between 1 and max_pip + 1 = {self.max_pip + 1} (R5), got {self.rounds}"
            )
        lo, hi = CENTER_ARMS_RANGE
        if not lo <= self.center_arms <= hi:
            raise ConfigError(f"center_arms must be between {lo} and {hi} (R9), got {self.center_arms}")
        if self.center_arms > self.max_pip:
            raise ConfigError(
                f"center_arms={self.center_arms} exceeds max_pip={self.max_pip} (R9): only {self.max_pip} tiles "
                f"besides the starting double carry its value, so the arms could never all be filled and every "
                f"round would block; set center_arms <= {self.max_pip}"
            )
        if self.draw_rule not in DRAW_RULES:
            raise ConfigError(f"draw_rule must be one of {DRAW_RULES} (R12), got {self.draw_rule!r}")
        if self.double_blank_points < 0:
            raise ConfigError(
                f"double_blank_points must be >= 0 (R15), got {self.double_blank_points}"
            )

    @property
    def num_tiles(self) -> int:
        """Tiles in the set."""
        return num_tiles(self.max_pip)

    @property
    def num_actions(self) -> int:
        """``K * K + 2`` with ``K = max_pip + 1``: every (match, expose) play, DRAW and PASS."""
        k = self.max_pip + 1
        return k * k + 2

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form; :meth:`from_dict` inverts it."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RulesConfig:
        """Build from a mapping whose keys are exactly field names; unknown keys are an error."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"a rules config must be a mapping, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown rules config keys {unknown}; valid keys are {sorted(known)}")
        return cls(**dict(data))
