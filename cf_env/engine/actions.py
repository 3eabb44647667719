"""Tiles, moves and the fixed action table (docs/RULES.md R1, R8; "Why the action space can be small").

Action ids are a contract shared by the engine, the env, agents and checkpoints. With
``K = max_pip + 1``:

==================  ==========================================================================
id                  meaning
==================  ==========================================================================
``m * K + x``       play the tile {m, x} with its ``m`` end against an open end showing ``m``,
                    exposing ``x`` (a double d-d is ``d * K + d``)
``K * K``           DRAW one tile from the boneyard (R12)
``K * K + 1``       PASS: keep a drawn playable tile (R12) or skip with an empty boneyard (R13)
==================  ==========================================================================

``NUM_ACTIONS = K * K + 2``. Tiles have a set-independent index ``high * (high + 1) / 2 + low``
so that the tiles of a double-N set are exactly the indices ``0 .. num_tiles(N) - 1``.

Inside the engine a set of tiles is an ``int`` whose bits are *action ids*: a tile {m, x} sets
both ``m * K + x`` and ``x * K + m``. Then "the plays a hand allows" is one AND with the mask of
the rows (match values) that are open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from operator import index as _as_index

from cf_env.engine.config import MAX_PIP_RANGE, num_tiles
from cf_env.engine.errors import ActionParseError

__all__ = [
    "ActionTable",
    "Move",
    "Tile",
    "action_table",
    "action_to_string",
    "bit_set",
    "string_to_action",
    "tile_index",
]


def bit_set(bits: int, action: object) -> bool:
    """Whether ``action`` (an int or numpy integer; anything else is not) is a set bit of ``bits``,
    a set of actions as an int: the legality check of :meth:`Game.is_legal` and the env's."""
    try:
        a = _as_index(action)  # type: ignore[arg-type]  # anything that is not an index: TypeError
    except TypeError:
        return False
    return a >= 0 and bool((bits >> a) & 1)


def tile_index(a: int, b: int) -> int:
    """Set-independent index of the tile {a, b}."""
    lo, hi = (a, b) if a <= b else (b, a)
    return hi * (hi + 1) // 2 + lo


_TILE_RE = re.compile(r"^\s*\[?\s*(\d+)\s*[-|:,/ ]\s*(\d+)\s*\]?\s*$")
_MOVE_RE = re.compile(r"^\s*(\d+)\s*>\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True, order=True)
class Tile:
    """A domino {low, high} with ``low <= high``; ``str`` gives ``"low-high"``."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if not (isinstance(self.low, int) and isinstance(self.high, int)):
            raise ActionParseError(f"tile pips must be ints, got {self.low!r}, {self.high!r}")
        if not 0 <= self.low <= self.high <= MAX_PIP_RANGE[1]:
            raise ActionParseError(
                f"a tile needs 0 <= low <= high <= {MAX_PIP_RANGE[1]}, got ({self.low}, {self.high}); "
                "use Tile.of(a, b) to accept either order"
            )

    @classmethod
    def of(cls, a: int, b: int) -> Tile:
        """The tile {a, b} in either order."""
        return cls(a, b) if a <= b else cls(b, a)

    @classmethod
    def from_index(cls, index: int) -> Tile:
        """Inverse of :attr:`index`."""
        if index < 0:
            raise ActionParseError(f"tile index must be >= 0, got {index}")
        hi = 0
        while (hi + 1) * (hi + 2) // 2 <= index:
            hi += 1
        return cls(index - hi * (hi + 1) // 2, hi)

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Parse ``"3-5"``, ``"5-3"``, ``"[3|5]"`` or ``"3,5"``."""
        match = _TILE_RE.match(text) if isinstance(text, str) else None
        if match is None:
            raise ActionParseError(f"cannot parse {text!r} as a tile; write it as '3-5'")
        return cls.of(int(match.group(1)), int(match.group(2)))

    @property
    def index(self) -> int:
        return tile_index(self.low, self.high)

    @property
    def pips(self) -> int:
        return self.low + self.high

    @property
    def is_double(self) -> bool:
        return self.low == self.high

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"


@dataclass(frozen=True, slots=True)
class Move:
    """A decision: ``kind`` is ``"play"``, ``"draw"`` or ``"pass"``; a play matches ``match``
    against an open end and exposes ``expose``. ``str`` gives ``"3>5"``, ``"draw"`` or ``"pass"``.
    """

    kind: str
    match: int = -1
    expose: int = -1

    def __post_init__(self) -> None:
        if self.kind not in ("play", "draw", "pass"):
            raise ActionParseError(f"move kind must be 'play', 'draw' or 'pass', got {self.kind!r}")
        if self.kind == "play":
            if not (0 <= self.match <= MAX_PIP_RANGE[1] and 0 <= self.expose <= MAX_PIP_RANGE[1]):
                raise ActionParseError(f"a play needs pip values in 0..18, got {self.match}>{self.expose}")
        elif (self.match, self.expose) != (-1, -1):
            raise ActionParseError(f"a {self.kind} move has no pips")

    @classmethod
    def play(cls, match: int, expose: int) -> Move:
        return cls("play", match, expose)

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``"3>5"`` (play the 3-5 on a 3, exposing 5), ``"draw"`` or ``"pass"``."""
        if not isinstance(text, str):
            raise ActionParseError(f"a move must be a string, got {type(text).__name__}")
        word = text.strip().lower()
        if word in ("draw", "pass"):
            return cls(word)
        match = _MOVE_RE.match(word)
        if match is None:
            raise ActionParseError(
                f"cannot parse {text!r} as a move; write 'M>X' (play the tile M-X on an open M, "
                "exposing X), 'draw' or 'pass'"
            )
        return cls.play(int(match.group(1)), int(match.group(2)))

    @property
    def tile(self) -> Tile | None:
        return Tile.of(self.match, self.expose) if self.kind == "play" else None

    def to_action(self, max_pip: int) -> int:
        """The action id of this move in a double-``max_pip`` game."""
        k = max_pip + 1
        if self.kind == "draw":
            return k * k
        if self.kind == "pass":
            return k * k + 1
        if self.match >= k or self.expose >= k:
            raise ActionParseError(f"move {self} has pips above max_pip={max_pip}")
        return self.match * k + self.expose

    @classmethod
    def from_action(cls, action: int, max_pip: int) -> Move:
        table = action_table(max_pip)
        table.check(action)
        if action == table.draw:
            return cls("draw")
        if action == table.pass_:
            return cls("pass")
        return cls.play(table.match[action], table.expose[action])

    def __str__(self) -> str:
        return self.kind if self.kind != "play" else f"{self.match}>{self.expose}"


class ActionTable:
    """Every precomputed per-action and per-tile array of one set size; built once per ``max_pip``
    (use :func:`action_table`). Plain tuples of ints: nothing here is numpy."""

    __slots__ = (
        "max_pip", "k", "num_actions", "num_tiles", "draw", "pass_", "draw_bit", "pass_bit",
        "match", "expose", "action_tile", "is_canonical", "canonical_bits", "tile_bits", "action_tile_bits",
        "row_bits", "tile_low", "tile_high", "strings",
    )

    def __init__(self, max_pip: int) -> None:
        k = max_pip + 1
        self.max_pip = max_pip
        self.k = k
        self.num_actions = k * k + 2
        self.num_tiles = num_tiles(max_pip)
        self.draw = k * k
        self.pass_ = k * k + 1
        self.draw_bit = 1 << self.draw
        self.pass_bit = 1 << self.pass_
        self.match = tuple(a // k for a in range(k * k))
        self.expose = tuple(a % k for a in range(k * k))
        self.action_tile = tuple(tile_index(a // k, a % k) for a in range(k * k))
        self.is_canonical = tuple(a // k <= a % k for a in range(k * k))
        #: one action bit per tile (``low*K + high``): ``bits & canonical_bits`` counts each tile once
        self.canonical_bits = sum(1 << a for a in range(k * k) if self.is_canonical[a])
        self.tile_low = tuple(Tile.from_index(t).low for t in range(self.num_tiles))
        self.tile_high = tuple(Tile.from_index(t).high for t in range(self.num_tiles))
        self.tile_bits = tuple(
            (1 << (lo * k + hi)) | (1 << (hi * k + lo)) for lo, hi in zip(self.tile_low, self.tile_high)
        )
        self.action_tile_bits = tuple(self.tile_bits[t] for t in self.action_tile)
        self.row_bits = tuple(((1 << k) - 1) << (v * k) for v in range(k))
        self.strings = tuple(f"{a // k}>{a % k}" for a in range(k * k)) + ("draw", "pass")

    def check(self, action: int) -> None:
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < self.num_actions:
            raise ActionParseError(
                f"action must be an int in [0, {self.num_actions}) for max_pip={self.max_pip}, got {action!r}"
            )

    def bits_to_actions(self, bits: int) -> list[int]:
        """Sorted action ids of the set bits of ``bits``."""
        out = []
        while bits:
            low = bits & -bits
            out.append(low.bit_length() - 1)
            bits ^= low
        return out

    def bits_to_tiles(self, bits: int) -> list[int]:
        """Sorted tile indices of a tile set held as action bits."""
        canonical = self.is_canonical
        tile = self.action_tile
        return sorted(tile[a] for a in self.bits_to_actions(bits) if a < self.draw and canonical[a])


@cache
def action_table(max_pip: int) -> ActionTable:
    """The (cached) action table of a double-``max_pip`` set."""
    if isinstance(max_pip, bool) or not isinstance(max_pip, int) or not MAX_PIP_RANGE[0] <= max_pip <= MAX_PIP_RANGE[1]:
        raise ActionParseError(f"max_pip must be an int in {MAX_PIP_RANGE}, got {max_pip!r}")
    return ActionTable(max_pip)


def action_to_string(action: int, max_pip: int = 9) -> str:
    """``"3>5"`` (play the 3-5 on an open 3, exposing 5), ``"draw"`` or ``"pass"``."""
    table = action_table(max_pip)
    table.check(action)
    return table.strings[action]


def string_to_action(text: str, max_pip: int = 9) -> int:
    """Inverse of :func:`action_to_string`; raises :class:`ActionParseError` on bad input."""
    return Move.parse(text).to_action(max_pip)
