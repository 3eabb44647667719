"""A wrapper that checks every action an agent returns against the mask it was given."""

from __future__ import annotations

import numpy as np


class Checked:
    """Acts as ``agent`` does, asserting each action is legal; counts decisions and choices."""

    def __init__(self, agent) -> None:
        self.agent, self.name, self.config = agent, agent.name, agent.config
        self.decisions = self.choices = 0
        self.searched = 0  # decisions after which a search agent reports simulations

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        action = self.agent.act(observation, rng)
        mask = observation["action_mask"]
        assert 0 <= action < len(mask) and mask[action] == 1, (action, np.flatnonzero(mask))
        self.decisions += 1
        self.choices += int(mask.sum()) > 1
        self.searched += getattr(self.agent, "last_search", {}).get("simulations", 0) > 0
        return action
