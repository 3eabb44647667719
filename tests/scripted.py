"""Helpers to write scripted deals and games in tests, with tiles as strings like ``"3-5"``."""

from __future__ import annotations

import numpy as np

from cf_env import Game
from cf_env.engine import RulesConfig, Tile, num_tiles, string_to_action


def deal(config: RulesConfig, hands: list[list[str]], top: list[str] = ()) -> dict:
    """A deal in the engine's scripted format: ``hands`` as given, the boneyard is ``top`` (top
    first) followed by every remaining tile of the set in index order."""
    used = [Tile.parse(t) for h in hands for t in h] + [Tile.parse(t) for t in top]
    rest = [Tile.from_index(i) for i in range(num_tiles(config.max_pip)) if Tile.from_index(i) not in used]
    pair = lambda t: [t.low, t.high]  # noqa: E731
    return {
        "hands": [[pair(Tile.parse(t)) for t in h] for h in hands],
        "boneyard": [pair(Tile.parse(t)) for t in top] + [pair(t) for t in rest],
    }


def acts(game: Game, *moves: str) -> None:
    """Apply moves written as ``"4>1"``, ``"draw"``, ``"pass"``."""
    for move in moves:
        game.apply(string_to_action(move, game.config.max_pip))


def legal_strings(game: Game) -> set[str]:
    from cf_env.engine import action_to_string

    return {action_to_string(a, game.config.max_pip) for a in game.legal_actions()}


def random_playout(game: Game, rng: np.random.Generator, trace: list | None = None) -> None:
    """Play random legal actions to the end; ``trace`` collects (player, legal, action)."""
    while not game.is_over:
        legal = game.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        if trace is not None:
            trace.append((game.current_player, legal, action))
        game.apply(action)


def swap_held_tiles(game: Game, a: tuple, b: tuple) -> Game | None:
    """``game`` replayed from its first deal with tile ``a`` (dealt to seat 1) and ``b`` (dealt to
    seat 2) trading hands, the same moves after; ``None`` when a move no longer replays."""
    record = game.to_record()
    hands = record["deals"][0]["hands"]
    swapped_deal = {"hands": [list(h) for h in hands], "boneyard": record["deals"][0]["boneyard"]}
    swapped_deal["hands"][1] = [b if t == a else t for t in hands[1]]
    swapped_deal["hands"][2] = [a if t == b else t for t in hands[2]]
    swapped = Game(game.config, deals=[swapped_deal])
    try:
        swapped.apply_all(record["actions"])
    except Exception:  # a move is no longer legal with the other tile
        return None
    return swapped


def random_positions(config: RulesConfig, seed: int = 0, count: int = 40) -> list[tuple[Game, int]]:
    """Up to ``count`` positions of one seeded game of random legal moves, each as a copy of the
    game and the seat to move."""
    game, rng, out = Game(config, seed=seed), np.random.default_rng(seed), []
    while not game.is_over and len(out) < count:
        out.append((game.clone(), game.current_player))
        game.apply(int(rng.choice(game.legal_actions())))
    return out


def full_deals(config: RulesConfig, seed: int) -> list[dict]:
    """Every round's deal of a whole game (the engine's record format), the game played out with
    random legal moves from ``seed``: deals to script into another engine or env."""
    game = Game(config, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    return game.to_record()["deals"]
