"""Compile the AEC env's, the batched engine's, the heuristic's and the search's kernels ahead of their first use.

numba compiles a kernel on its first call and caches the machine code beside its source (in
``__pycache__``), so only a fresh checkout pays, and it pays in every process that starts at once:
each of a label collection's workers spent about a minute compiling before its first label (the
racing PIMC search with its inlined heuristic rollouts, the engine's one-thread kernels), out of
``make train``'s eight minutes of labelling. ``make setup`` runs this module in the background
while pip installs the rest of the dependencies, on the core pip leaves idle, so that the workers,
the evaluation and the tests load the kernels from the cache instead::

    python -m agents.precompile            # what make setup runs
    chickenfoot precompile --spec search:algo=ismcts:ms=0:sims=32

What it plays, on 4-player double-nine (the kernels' types, and so their cached code, are the same
for every rule set): a few decisions of the AEC env's compiled core (:mod:`cf_env.core`), a few
decisions of heuristic games on :class:`cf_env.vector.VectorGame` in one
thread and in numba's threads (:data:`cf_env.vector.PARALLEL_MIN_GAMES` games), the heuristic
agent's scalar and batched scoring, a few steps of the vector env (:mod:`cf_env.gym_vector`) with
heuristic opponents in both (its subset steps, the heuristic's compiled stretches, final views and
new deals), and one searched decision per ``--spec`` (by default the racing
and the plain PIMC, the label collection's teacher and the ``search`` agent). It needs only the core
dependencies (numpy and numba), not torch. Each part's seconds are printed; a part whose kernels are
cached takes a second or two.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from agents.baselines import HeuristicAgent
from cf_env import RulesConfig, raw_env
from cf_env.gym_vector import ChickenFootVectorEnv
from cf_env.vector import PARALLEL_MIN_GAMES, VectorGame

__all__ = ["DEFAULT_SPECS", "describe", "precompile"]

#: the racing PIMC (the label collection's teacher, ``make train``'s) and the plain PIMC (``search``)
DEFAULT_SPECS = ("search:ms=0:sims=16:race=2", "search:ms=0:sims=16")


def precompile(config: RulesConfig | None = None, specs: Sequence[str] = DEFAULT_SPECS, threads: bool = True,
               seed: int = 0) -> dict[str, float]:
    """Run every kernel the batched engine, the heuristic and the search ``specs`` use once
    (module docstring); returns each part's seconds."""
    from agents.search import SearchAgent

    config = config or RulesConfig()
    rng = np.random.default_rng(seed)
    heuristic = HeuristicAgent(config)
    seconds: dict[str, float] = {}

    start = time.perf_counter()
    env = raw_env(config=config)
    env.reset(seed=seed)
    for _ in range(20):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    env.observe(env.possible_agents[0])
    seconds["env"] = time.perf_counter() - start

    start = time.perf_counter()
    vg = VectorGame(config, num_games=8, reward="win", seed=seed, parallel=False)
    obs, mask, _ = vg.reset()
    kept: list[tuple[np.ndarray, np.ndarray]] = []  # decisions with a choice, for the search
    for _ in range(40):
        choice = np.flatnonzero(mask.sum(axis=1) > 1)
        kept += [(obs[b].copy(), mask[b].copy()) for b in choice[:1]]
        obs, mask, _, _, _ = vg.step(heuristic.act_batch(obs, mask, rng))
    heuristic.act({"observation": obs[0], "action_mask": mask[0]}, rng)
    seconds["engine and heuristic"] = time.perf_counter() - start

    if threads:
        start = time.perf_counter()
        threaded = VectorGame(config, num_games=PARALLEL_MIN_GAMES, reward="win", seed=seed, parallel=True)
        obs, mask, _ = threaded.reset()
        threaded.step(heuristic.act_batch(obs, mask, rng))
        seconds["engine in threads"] = time.perf_counter() - start

    start = time.perf_counter()
    small = RulesConfig(max_pip=3, num_players=2, hand_size=3, rounds=1, center_arms=3)  # games end within steps
    for parallel in (False, True) if threads else (False,):
        envs = ChickenFootVectorEnv(PARALLEL_MIN_GAMES, opponents=HeuristicAgent(small), config=small,
                                    parallel=parallel)
        _, info = envs.reset(seed=seed)
        for _ in range(12):  # up to the ends of games: the final views and the next deals
            _, _, _, _, info = envs.step(np.argmax(info["action_mask"], axis=1))
    seconds["vector env"] = time.perf_counter() - start

    for spec in specs:
        start = time.perf_counter()
        agent = SearchAgent.from_spec(spec, config)
        for observation, legal in kept[:3]:
            agent.act({"observation": observation, "action_mask": legal}, rng)
        seconds[spec] = time.perf_counter() - start
    return seconds


def describe(seconds: dict[str, float]) -> str:
    """:func:`precompile`'s timings as one line."""
    parts = ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())
    return f"precompiled in {sum(seconds.values()):.1f} s: {parts}"


if __name__ == "__main__":  # what make runs before the extras (and so click) are installed
    print(describe(precompile()))
