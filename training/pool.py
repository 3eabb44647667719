"""The opponent pool of self-play: baseline bots plus recent snapshots of the policy.

A game either seats the policy everywhere (self-play, with probability ``self_play_prob``) or
seats it once and fills every other seat with a spec drawn uniformly from the pool. Snapshots
join the pool as checkpoint files; once more than ``pool_size`` are in it, the oldest leaves and
its file is deleted (nothing can draw it again; agents already seated live on in memory).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents import Agent, load
from cf_env import RulesConfig

__all__ = ["LEARNER", "OpponentPool"]

LEARNER = None  # marks a seat played by the policy being trained


class OpponentPool:
    def __init__(self, rules: RulesConfig, baselines: list[str], pool_size: int, self_play_prob: float) -> None:
        self.rules = rules
        self.baselines = list(baselines)
        self.pool_size = pool_size
        self.self_play_prob = self_play_prob
        self.specs: list[str] = list(baselines)  # baselines, then snapshot paths, oldest first
        self._agents: dict[str, Agent] = {}

    def agent(self, spec: str) -> Agent:
        """The agent of ``spec``, loaded once."""
        if spec not in self._agents:
            self._agents[spec] = load(spec, self.rules)
        return self._agents[spec]

    def draw_lineup(self, rng: np.random.Generator) -> list[str | None]:
        """Who sits where in a new game: every seat the learner (``LEARNER``) with probability
        ``self_play_prob``, else one learner seat and pool specs drawn uniformly for the others."""
        n = self.rules.num_players
        if rng.random() < self.self_play_prob:
            return [LEARNER] * n
        learner = int(rng.integers(n))
        return [LEARNER if s == learner else self.specs[int(rng.integers(len(self.specs)))] for s in range(n)]

    def add_snapshot(self, path: str) -> str | None:
        """Add a snapshot file; returns the snapshot that left the pool (its file deleted), if any."""
        self.specs.append(path)
        snapshots = [p for p in self.specs if p not in self.baselines]
        if len(snapshots) <= self.pool_size:
            return None
        oldest = snapshots[0]
        self.specs.remove(oldest)
        self._agents.pop(oldest, None)
        Path(oldest).unlink(missing_ok=True)
        return oldest
