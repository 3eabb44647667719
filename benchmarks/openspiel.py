"""OpenSpiel adapter speed: decisions/s of random play through ``python_chicken_foot`` states vs the
native PettingZoo env, in the same run (4-player double-nine). Prints JSON with the medians of
``--runs`` runs and their ratio.

Each loop plays whole games with uniformly random legal decisions: the OpenSpiel loop asks the
state for its legal actions, applies chance outcomes (deals, draws) and decisions; the env loop
calls ``last()`` (observation and mask) and ``step()``. ``--with-observation`` adds
``observation_tensor`` to the OpenSpiel loop, so both read an observation each decision.

    python benchmarks/openspiel.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from cf_env import RulesConfig, raw_env
from cf_env.integrations.openspiel import game_from_rules


def spiel_rate(rules: RulesConfig, games: int, seed: int, observe: bool) -> tuple[float, float]:
    game = game_from_rules(rules)
    rng = np.random.default_rng(seed)
    decisions = steps = 0
    start = time.perf_counter()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                if observe:
                    state.observation_tensor()
                state.apply_action(legal[rng.integers(len(legal))])
                decisions += 1
            steps += 1
    seconds = time.perf_counter() - start
    return decisions / seconds, steps / seconds


def env_rate(rules: RulesConfig, games: int, seed: int) -> float:
    env = raw_env(config=rules)
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        env.reset(seed=seed + g)
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--with-observation", action="store_true")
    args = parser.parse_args()
    rules = RulesConfig()
    spiel, spiel_steps, native, ratio = [], [], [], []
    for run in range(args.runs):
        d, s = spiel_rate(rules, args.games, run, args.with_observation)
        e = env_rate(rules, args.games, run)
        spiel.append(d)
        spiel_steps.append(s)
        native.append(e)
        ratio.append(e / d)
    print(json.dumps({
        "rules": rules.to_dict(), "games_per_run": args.games, "runs": args.runs,
        "openspiel_observation_each_decision": args.with_observation,
        "openspiel_decisions_per_s": statistics.median(spiel), "openspiel_steps_per_s (chance included)":
            statistics.median(spiel_steps), "env_decisions_per_s": statistics.median(native),
        "env_over_openspiel (median of per-run ratios)": statistics.median(ratio)}, indent=2))


if __name__ == "__main__":
    main()
