"""Deals and records: checking scripted deals, their tile-index and JSON forms, R16's winners of a
record's round scores (:class:`cf_env.Game` writes and replays records)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from cf_env.engine.actions import Tile
from cf_env.engine.config import RulesConfig
from cf_env.engine.errors import DealError
from cf_env.engine.scoring import r16_keys, winner_flags

__all__ = ["RECORD_VERSION", "Dealt", "deal_order", "deal_to_json", "split_deal", "validate_deals", "winners_of"]

RECORD_VERSION = 1


def parse_tile_pair(item: Any, where: str, max_pip: int) -> int:
    """One tile of a scripted deal, ``[a, b]``, as its index; a :class:`DealError` naming ``where``."""
    if (
        not isinstance(item, (list, tuple))
        or len(item) != 2
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in item)
    ):
        raise DealError(f"{where}: a tile must be a pair of ints like [3, 5], got {item!r}")
    a, b = int(item[0]), int(item[1])
    if not (0 <= a <= max_pip and 0 <= b <= max_pip):
        raise DealError(f"{where}: tile {item!r} has pips outside 0..{max_pip}")
    return Tile.of(a, b).index


class Dealt(list):
    """Deals already checked against ``config``, as :func:`validate_deals` returns them: passed
    again (to another :class:`Game` of the same rules, as an evaluation's seat rotations do, or
    by :meth:`Game.rewound`) they are not checked again."""

    def __init__(self, deals: Iterable[Any], config: RulesConfig) -> None:
        super().__init__(deals)
        self.config = config


def validate_deals(deals: Sequence[Any] | None, config: RulesConfig) -> list[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]] | None]:
    """Check scripted per-round deals and return them as tile indices (``None`` = shuffle).

    Each deal is ``{"hands": [[[a, b], ...], ...], "boneyard": [[a, b], ...]}`` with the boneyard
    top first; every tile of the set appears exactly once and every hand has ``hand_size`` tiles.
    What it returns may be given as ``deals`` again (to :class:`Game` or the env's ``reset``) for
    the same rules, and is not checked again: check once, play the same deals many times.
    """
    if deals is None:
        return []
    if isinstance(deals, Dealt) and deals.config == config:  # checked already, for these rules
        return list(deals)
    if isinstance(deals, (str, bytes)) or not isinstance(deals, Sequence):
        raise DealError(f"deals must be a list of per-round deals, got {type(deals).__name__}")
    if len(deals) > config.rounds:
        raise DealError(f"{len(deals)} deals given for a game of {config.rounds} rounds")
    out: list[Any] = []
    n_tiles = config.num_tiles
    for r, deal in enumerate(deals):
        if deal is None:
            out.append(None)
            continue
        where = f"deal of round {r}"
        if not isinstance(deal, dict) or set(deal) != {"hands", "boneyard"}:
            raise DealError(f"{where}: expected a dict with exactly the keys 'hands' and 'boneyard', got {deal!r:.200}")
        hands_in, bone_in = deal["hands"], deal["boneyard"]
        if not isinstance(hands_in, (list, tuple)) or len(hands_in) != config.num_players:
            raise DealError(f"{where}: 'hands' must list {config.num_players} hands (one per player)")
        hands = []
        for p, hand in enumerate(hands_in):
            if not isinstance(hand, (list, tuple)) or len(hand) != config.hand_size:
                raise DealError(f"{where}: hand {p} must hold hand_size={config.hand_size} tiles as dealt")
            hands.append(tuple(parse_tile_pair(t, f"{where}, hand {p}", config.max_pip) for t in hand))
        if not isinstance(bone_in, (list, tuple)):
            raise DealError(f"{where}: 'boneyard' must be a list of tiles, top first")
        bone = tuple(parse_tile_pair(t, f"{where}, boneyard", config.max_pip) for t in bone_in)
        seen = [t for h in hands for t in h] + list(bone)
        if len(seen) != n_tiles or len(set(seen)) != n_tiles:
            counts: dict[int, int] = {}
            for t in seen:
                counts[t] = counts.get(t, 0) + 1
            dup = sorted(str(Tile.from_index(t)) for t, c in counts.items() if c > 1)
            missing = sorted(str(Tile.from_index(t)) for t in range(n_tiles) if t not in counts)
            raise DealError(
                f"{where}: every tile of the double-{config.max_pip} set must appear exactly once; "
                f"duplicated: {dup}, missing: {missing}"
            )
        out.append((tuple(hands), bone))
    return Dealt(out, config)


def winners_of(round_scores: Sequence[Sequence[int]]) -> list[int]:
    """R16 (:func:`cf_env.engine.scoring.winner_flags`) over every round given: sorted seats."""
    n = len(round_scores[0])
    totals, zeros, lowest, flags = [0] * n, [0] * n, [0] * n, [0] * n
    r16_keys(round_scores, n, len(round_scores), totals, zeros, lowest)
    winner_flags(totals, zeros, lowest, n, flags)
    return [p for p in range(n) if flags[p]]


def split_deal(order: Sequence[int], config: RulesConfig) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """A round's tile order (the hands in seat order, then the boneyard top first) as ``(hands,
    boneyard top first)``: the form :func:`validate_deals` returns and :class:`Game` deals."""
    order = tuple(order)
    h, n = config.hand_size, config.num_players
    return tuple(order[i * h:(i + 1) * h] for i in range(n)), order[n * h:]


def deal_order(hands: Sequence[Sequence[int]], bone_top_first: Sequence[int]) -> list[int]:
    """:func:`split_deal` undone: the hands in seat order, then the boneyard top first."""
    return [tile for hand in hands for tile in hand] + list(bone_top_first)


def deal_to_json(hands: Sequence[Sequence[int]], bone_top_first: Sequence[int]) -> dict[str, Any]:
    def pair(t: int) -> list[int]:
        tile = Tile.from_index(t)
        return [tile.low, tile.high]

    return {"hands": [[pair(t) for t in h] for h in hands], "boneyard": [pair(t) for t in bone_top_first]}
