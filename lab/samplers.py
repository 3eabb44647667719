"""The lab's world samplers for the search: a learned belief, the oracle and a kept-tile chance.

Each is an :class:`agents.search.WorldSampler`, named in a search spec by its entry point with its
options after it::

    search:ms=0:sims=128:infer=lab.samplers:Belief:belief=belief.pt          # the learned belief
    search:ms=0:sims=128:infer=lab.samplers:Belief:belief=belief.pt:policy=True   # times the plays
    search:ms=0:sims=128:infer=lab.samplers:Oracle                            # a teacher's oracle
    search:ms=0:sims=40:infer=lab.samplers:Kept:keep=0.2

They are studies, not what ships: the belief measured no stronger than the constraints
(lab/results/belief.md), the oracle sees what no player may (R17: label collection shows it the
hands, lab/results/oracle-teacher.md), and the shipped agents never keep a playable tile.
"""

from __future__ import annotations

import math

import numpy as np

from agents.search.worlds import World, dealing_order
from cf_env import ConfigError, RulesConfig

__all__ = ["Belief", "Kept", "Oracle", "shown_world"]


def shown_world(world: World, hands: np.ndarray, shown: int) -> World:
    """``world`` (the sampler's inputs, :func:`agents.search.worlds.read_observation`) with the
    first ``shown`` opponents' true ``hands`` (``(n - 1, T)`` flags, the observer's left first)
    dealt to them in every world: each of them may hold its own tiles only, and no other
    opponent may hold them; the dealing order is sorted again, most constrained first."""
    forbid = world.forbid.copy()
    n = forbid.shape[0]
    if not 0 <= shown <= n - 1:
        raise ConfigError(f"shown must be between 0 and {n - 1} (the opponents), got {shown}")
    held = np.asarray(hands) != 0
    for i in range(1, shown + 1):
        forbid[i] = ~held[i - 1]
        others = [j for j in range(1, n) if j != i]
        forbid[others] |= held[i - 1]
    return world._replace(forbid=forbid, order=dealing_order(forbid, world.pool))


class Belief:
    """Worlds weighed by a belief network (:class:`lab.belief_net.BeliefNet`, trained by ``python
    -m lab.belief fit``): each world is the likeliest-weighted of the spec's ``proposals``
    constraint-respecting candidates by the network's probabilities of where each hidden tile lies
    (sampling-importance-resampling). ``policy=True`` weighs them by the opponents' plays this round
    under the opponent model too (reads the observation's ``history``)."""

    needs_hands = False

    def __init__(self, config: RulesConfig, belief: str, policy: bool = False) -> None:
        from lab.belief_net import load_belief

        self.net = load_belief(str(belief), config)
        self.reads = "policy" if policy else "constraints"

    def __call__(self, world: World, observation: dict) -> World:
        rows = self.net.seat_rows(np.asarray(observation["observation"], dtype=np.float32))
        return world._replace(belief=np.ascontiguousarray(rows, dtype=np.float64))


class Oracle:
    """Every world deals the opponents their true hands, the observation's ``hands`` entry (``(n -
    1, T)`` flags, the observer's left first: the first rows of :meth:`cf_env.raw_env.hidden_tiles`),
    which label collection shows a teacher that ``needs_hands``; only the boneyard's order is
    sampled. A teacher, never a player: no observation of a player carries the hands (R17)."""

    reads = "none"
    needs_hands = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def __call__(self, world: World, observation: dict) -> World:
        n, t = self.config.num_players, self.config.num_tiles
        hands = observation.get("hands")
        if hands is None:
            raise ConfigError("the oracle deals the opponents' true hands, and this observation has none: it is a "
                              "teacher for label collection (training.labels collect shows it the hands), not a "
                              "player")
        held = np.asarray(hands) != 0
        if held.shape != (n - 1, t):
            raise ConfigError(f"the oracle needs the opponents' hands as ({n - 1}, {t}) flags, got shape {held.shape}")
        hidden = np.zeros(t, bool)
        hidden[world.pool] = True
        if (held & ~hidden).any() or (held.sum(axis=0) > 1).any() or (held.sum(axis=1) != world.sizes[1:]).any():
            raise ConfigError(f"the given hands (sizes {held.sum(axis=1).tolist()}) do not fit the observation: "
                              f"hidden tiles only, each in one hand, sizes {world.sizes[1:].tolist()}")
        return shown_world(world, held, n - 1)._replace(keep=0.0)


class Kept:
    """The constraints, except that an opponent that failed to match a value and has drawn one tile
    since (which it may have kept, R12) holds one such tile with probability ``keep``."""

    reads = "constraints"
    needs_hands = False

    def __init__(self, config: RulesConfig, keep: float) -> None:
        if not (isinstance(keep, (int, float)) and math.isfinite(keep) and 0.0 <= keep <= 1.0):
            raise ConfigError(f"keep is a probability in [0, 1], got {keep!r}")
        self.keep = float(keep)

    def __call__(self, world: World, observation: dict) -> World:
        return world._replace(keep=self.keep)
