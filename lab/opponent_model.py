"""Fit the search's opponent model: the temperature of a softmax over the heuristic's scores.

The policy-based inference (:mod:`agents.search.inference`) weights worlds by how likely the
opponents' plays are under ``softmax(score_plays / temp)``. This module records games of several
agents, and at every play with a choice (two legal plays or more, not the play of a tile just
drawn) keeps the heuristic's scores of the legal plays, from the player's true observation, and
which one was played; the temperature that maximises the log-likelihood of those choices is the
fit (a 1-D search on a log grid, then a golden-section refinement).

    python -m lab.opponent_model --players 4 --games 60 \\
        --agents heuristic search:ms=0:sims=40:infer=constraints --test greedy zoo:strong-4p

prints, as JSON, the fitted temperature, each agent's own best temperature and, for every agent
(fitted or held out), the mean log-likelihood per choice and how often the model's most likely
play is the one played.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from agents import load
from agents.base import needs_history
from agents.baselines import HeuristicAgent, score_plays
from cf_env import Game, RulesConfig, raw_env

__all__ = ["collect_choices", "fit_temperature", "log_likelihood", "main"]


def collect_choices(config: RulesConfig, specs: Sequence[str], games: int, seed: int = 0,
                    progress: bool = True) -> dict[str, list[tuple[np.ndarray, int]]]:
    """Play ``games`` games whose seats are drawn from ``specs`` (each spec in every game when
    there are enough seats) and return, per spec, ``(scores of the legal plays, index played)``
    for every play it chose among two or more."""
    tables = HeuristicAgent(config).kernel_tables
    built = {s: load(s, config) for s in specs}
    env = raw_env(config=config, history=needs_history(built.values()))
    rng = np.random.default_rng(seed)
    out: dict[str, list[tuple[np.ndarray, int]]] = {s: [] for s in specs}
    n, draw = config.num_players, config.num_actions - 2
    for _ in tqdm(range(games), desc="opponent-model games", disable=not progress):
        seats = [specs[(i + int(rng.integers(len(specs)))) % len(specs)] for i in range(n)]
        env.reset(seed=int(rng.integers(2**63)))
        game: Game = env.game  # a copy that follows the env's game: every action is applied to both
        while not game.is_over:
            seat = game.current_player
            obs = env.observe(env.agent_selection)
            action = built[seats[seat]].act(obs, rng)
            legal = np.flatnonzero(obs["action_mask"])
            plays = legal[legal < draw].astype(np.int64)
            if plays.size >= 2 and action < draw and game.drawn_tile is None:
                scores = np.zeros(plays.size)
                score_plays(obs["observation"], plays, scores, tables)
                out[seats[seat]].append((scores, int(np.flatnonzero(plays == action)[0])))
            env.step(action)
            game.apply(action)
    return out


def log_likelihood(choices: Sequence[tuple[np.ndarray, int]], temp: float) -> tuple[float, float]:
    """Mean log-probability per choice under ``softmax(scores / temp)``, and the share of
    choices where the model's most likely play is the one played."""
    if not choices:
        return 0.0, 0.0
    total, top = 0.0, 0
    for scores, chosen in choices:
        z = scores / temp
        z = z - z.max()
        total += z[chosen] - math.log(np.exp(z).sum())
        top += int(np.argmax(scores) == chosen)
    return total / len(choices), top / len(choices)


def fit_temperature(choices: Sequence[tuple[np.ndarray, int]]) -> float:
    """The temperature that maximises :func:`log_likelihood` (log grid 0.05-200, then golden
    section on the log scale)."""
    grid = np.exp(np.linspace(math.log(0.05), math.log(200.0), 41))
    values = [log_likelihood(choices, t)[0] for t in grid]
    i = int(np.argmax(values))
    lo, hi = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, len(grid) - 1)])
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = log_likelihood(choices, math.exp(a))[0], log_likelihood(choices, math.exp(b))[0]
    for _ in range(30):
        if fa > fb:  # the maximum lies in [lo, b]
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = log_likelihood(choices, math.exp(a))[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = log_likelihood(choices, math.exp(b))[0]
    return float(math.exp((lo + hi) / 2))


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=["heuristic", "search:ms=0:sims=40:infer=constraints"],
                        help="the agents whose plays the temperature is fitted on")
    parser.add_argument("--test", nargs="*", default=["greedy", "zoo:strong-4p"],
                        help="agents held out: scored at the fitted temperature, not fitted on")
    args = parser.parse_args(argv)
    config = RulesConfig(num_players=args.players)
    fitted = collect_choices(config, args.agents, args.games, args.seed)
    held = collect_choices(config, args.test, args.games, args.seed + 1) if args.test else {}
    pooled = [c for spec in args.agents for c in fitted[spec]]
    temp = fit_temperature(pooled)
    report: dict = {"players": args.players, "games": args.games, "temperature": round(temp, 4),
                    "choices": len(pooled), "agents": {}}
    for group, data in (("fitted", fitted), ("held out", held)):
        for spec, choices in data.items():
            ll, top = log_likelihood(choices, temp)
            own = fit_temperature(choices)
            uniform = float(np.mean([-math.log(len(s)) for s, _ in choices])) if choices else 0.0
            report["agents"][spec] = {"group": group, "choices": len(choices), "loglik_per_choice": round(ll, 4),
                                      "uniform_loglik_per_choice": round(uniform, 4), "top1": round(top, 4),
                                      "own_temperature": round(own, 4)}
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
