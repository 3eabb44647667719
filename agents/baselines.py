"""Hand-written baselines: random legal, greedy (heaviest tile first), and a heuristic player."""

from __future__ import annotations

import numpy as np

from cf_env import ObservationEncoder, RulesConfig, Tile, action_table
from agents.base import legal_actions

__all__ = ["GreedyAgent", "HeuristicAgent", "RandomAgent"]


class RandomAgent:
    """Uniformly random legal action."""

    name = "random"

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        return int(legal[rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        noise = rng.random(masks.shape, dtype=np.float32) + 1e-3  # > 0 so a legal action always wins
        return np.argmax(noise * masks, axis=1)


class _TileAgent:
    """Shared tables for agents that reason about tiles."""

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.encoder = ObservationEncoder(config)
        table = action_table(config.max_pip)
        self.table = table
        self.k = table.k
        self.draw, self.pass_ = table.draw, table.pass_
        # points a tile costs in hand (R15), per action id
        pips = np.array([Tile.from_index(table.action_tile[a]).pips for a in range(table.draw)], dtype=np.float64)
        pips[0] = config.double_blank_points  # action 0 is 0>0, the double blank
        self.cost = pips
        tiles = [Tile.from_index(i) for i in range(config.num_tiles)]
        # (T, K) incidence: which pip values each tile carries
        self.tile_values = np.zeros((config.num_tiles, self.k), dtype=np.float64)
        for i, t in enumerate(tiles):
            self.tile_values[i, t.low] = 1.0
            self.tile_values[i, t.high] = 1.0
        self.action_tile = np.array(table.action_tile, dtype=np.intp)
        self.match = np.array(table.match, dtype=np.intp)
        self.expose = np.array(table.expose, dtype=np.intp)


class GreedyAgent(_TileAgent):
    """Plays the heaviest legal tile (the 0-0 counts as ``double_blank_points``); never keeps a
    playable drawn tile. Ties go to the lowest action id."""

    name = "greedy"

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        plays = legal[legal < self.draw]
        if plays.size == 0:
            return int(legal[0])
        return int(plays[np.argmax(self.cost[plays])])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_plays = masks[:, : self.draw] > 0
        score = np.where(legal_plays, self.cost[None, :], -np.inf)
        best = np.argmax(score, axis=1)
        none = ~legal_plays.any(axis=1)
        best[none] = np.argmax(masks[none], axis=1)  # the only legal DRAW or PASS
        return best


class HeuristicAgent(_TileAgent):
    """A hand-written player that reads the whole observation.

    Each legal play is scored and the best one is played (a playable drawn tile is always
    played rather than kept):

    * ``pips``: the points it takes out of the hand (the 0-0 at ``double_blank_points``, so it
      is shed first);
    * ``double`` / ``toe_follow`` / ``opp_blocked``: a double opens three toes of its value; it
      is worth more when we hold other tiles of that value (the toes are ours to fill) and when
      opponents are known to lack it (they must draw);
    * ``follow`` / ``blocked_expose``: the exposed value is worth more when we hold other tiles
      that match it (the tile keeps a place for our next turn) and when opponents could not
      match it at their last draw or pass (``next_blocked`` more for the next player);
    * ``mobility``: how many of our remaining tiles could be played on the layout right after
      the move (fewer means drawing soon);
    * ``scarcity``: tiles whose values we hold few of are harder to place later, so they go
      first.
    """

    name = "heuristic"
    # tuned by random search against three greedy players (4-player double-nine)
    DEFAULT_WEIGHTS = {"pips": 1.0, "double": 12.0, "toe_follow": 5.0, "opp_blocked": 2.0, "follow": 1.0,
                       "blocked_expose": 1.5, "next_blocked": 1.5, "mobility": 1.2, "scarcity": 0.35}

    def __init__(self, config: RulesConfig, weights: dict | None = None) -> None:
        super().__init__(config)
        unknown = set(weights or {}) - set(self.DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown heuristic weights {sorted(unknown)}; known: {sorted(self.DEFAULT_WEIGHTS)}")
        self.w = {**self.DEFAULT_WEIGHTS, **(weights or {})}

    def scores(self, observation: dict) -> tuple[np.ndarray, np.ndarray]:
        """Legal plays and their scores (empty when only DRAW or PASS is legal)."""
        legal = legal_actions(observation)
        plays = legal[legal < self.draw]
        if plays.size == 0:
            return plays, np.zeros(0)
        view = self.encoder.decode(observation["observation"])
        hand = view["hand"].astype(bool)
        hand_vals = self.tile_values[hand]  # (h, K)
        held = hand_vals.sum(axis=0)  # tiles in hand carrying each value
        unmatched = view["unmatched"]
        opp_lack = unmatched.sum(axis=0)
        next_lack = unmatched[0]
        ends = view["open_ends"]
        pend_count = int(view["pending_count"][0])
        pend_value = int(np.argmax(view["pending_value"])) if pend_count else -1
        w = self.w
        out = np.empty(len(plays))
        hand_idx = np.flatnonzero(hand)
        for i, a in enumerate(plays):
            m, x = self.match[a], self.expose[a]
            tile = self.action_tile[a]
            tv = self.tile_values[tile]
            rest = held - tv
            score = w["pips"] * self.cost[a]
            if m == x:
                score += w["double"] + w["toe_follow"] * min(rest[x], 3) + w["opp_blocked"] * opp_lack[x]
                open_after = np.zeros(self.k, dtype=bool)
                open_after[x] = True
            else:
                score += w["follow"] * min(rest[x], 2) + w["blocked_expose"] * opp_lack[x] + w["next_blocked"] * next_lack[x]
                if pend_count > 1:
                    open_after = np.zeros(self.k, dtype=bool)
                    open_after[pend_value] = True
                else:
                    after = ends.copy()
                    if pend_count == 0:
                        after[m] -= 1
                    after[x] += 1
                    open_after = after > 0
            others = hand_idx[hand_idx != tile]
            mobility = float((self.tile_values[others][:, open_after].sum(axis=1) > 0).sum()) if others.size else 0.0
            score += w["mobility"] * mobility
            score -= w["scarcity"] * (rest[m] + rest[x])
            out[i] = score
        return plays, out

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        plays, score = self.scores(observation)
        if plays.size == 0:
            return int(legal_actions(observation)[0])
        return int(plays[np.argmax(score)])
