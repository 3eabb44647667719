"""How much each search loses, decision by decision, against the search that sees the hands.

A sampler's per-tile log-loss (``python -m lab.belief score``) scores each hidden tile's marginal
over the worlds; a search acts on whole worlds. This measures the decisions instead: positions
are the seat-0 decisions with a choice of ``--player`` playing against ``--opponents``; at each,
the ``--oracle`` search (``infer=lab.samplers:Oracle``: the opponents' true hands dealt, only the boneyard's
order sampled) values every legal action, and each searched ``SPEC`` is charged the oracle's
value of its best action minus the oracle's value of the action it chose (the *oracle regret*,
in the search's value units), and credited when it chose the oracle's action. A spec with
``infer=lab.samplers:Oracle`` among them is shown the hands too: the oracle on other worlds (another ``seed``)
is the judge's own noise floor.

    python -m lab.oracle_regret "search:ms=0:sims=128:infer=policy" "search:ms=0:sims=128" \\
        --oracle "search:ms=0:sims=128:infer=lab.samplers:Oracle" --games 40 --positions 600

prints, as JSON, each spec's mean regret (with a standard error over positions), its agreement
with the oracle, and the paired difference of every spec's regret from the first one's.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from agents import load
from agents.search import SearchAgent
from cf_env import RulesConfig, raw_env

__all__ = ["collect_positions", "main", "oracle_regret"]


def collect_positions(config: RulesConfig, player: str, opponents: str, games: int, seed: int) -> list[dict]:
    """Seat 0's decisions with a choice over ``games`` games of ``player`` against ``opponents``
    in every other seat: the observation dict with its ``history`` entry and the opponents' true
    ``hands`` (``(n - 1, T)`` flags, the observer's left first, as ``infer=lab.samplers:Oracle`` reads them)."""
    n, t = config.num_players, config.num_tiles
    seats = [load(player, config)] + [load(opponents, config) for _ in range(n - 1)]
    env = raw_env(config=config, history=True)
    rng = np.random.default_rng(seed)
    found: list[dict] = []
    for _ in tqdm(range(games), desc="games", unit="game"):
        env.reset(seed=int(rng.integers(2**63)))
        while not env.game_over:
            seat = env.agent_name_mapping[env.agent_selection]
            observation = env.observe(env.agent_selection)
            if seat == 0 and int(observation["action_mask"].sum()) > 1:
                hands = env.hidden_tiles(env.agent_selection)[: (n - 1) * t].reshape(n - 1, t)
                found.append({**{k: np.array(v, copy=True) for k, v in observation.items()}, "hands": hands})
            env.step(seats[seat].act(observation, rng))
    return found


def oracle_regret(config: RulesConfig, specs: Sequence[str], oracle: str, positions: Sequence[dict],
                  seed: int) -> dict:
    """Each search spec's oracle regret and agreement over ``positions`` (see the module docstring)."""
    judge = load(oracle, config)
    if not isinstance(judge, SearchAgent) or not judge.needs_hands:
        raise ValueError(f"--oracle must be a search spec with infer=lab.samplers:Oracle, got {oracle!r}")
    searches = [load(spec, config) for spec in specs]
    regret = np.zeros((len(specs), len(positions)))
    agree = np.zeros((len(specs), len(positions)), bool)
    for i, position in enumerate(tqdm(positions, desc="positions", unit="position")):
        judge.act(position, np.random.default_rng([seed, i]))
        actions, scores = judge.last_search["actions"], judge.last_search["scores"]
        value = dict(zip(actions.tolist(), scores.tolist()))
        best, top = int(actions[int(np.argmax(scores))]), float(scores.max())
        public = {k: v for k, v in position.items() if k != "hands"}  # what a player may read (R17)
        for s, agent in enumerate(searches):
            seen = position if getattr(agent, "needs_hands", False) else public
            action = agent.act(seen, np.random.default_rng([seed, i, s + 1]))
            regret[s, i] = top - value[action]
            agree[s, i] = action == best
    m = len(positions)
    report: dict = {"positions": m, "oracle": oracle, "specs": {}}
    for s, spec in enumerate(specs):
        report["specs"][spec] = {"regret": round(float(regret[s].mean()), 5),
                                 "se": round(float(regret[s].std(ddof=1) / np.sqrt(m)), 5),
                                 "agreement": round(float(agree[s].mean()), 4)}
        if s:
            d = regret[s] - regret[0]
            half = 1.96 * d.std(ddof=1) / np.sqrt(m)
            report["specs"][spec]["minus_first"] = [round(float(d.mean()), 5), round(float(d.mean() - half), 5),
                                                    round(float(d.mean() + half), 5)]
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m lab.oracle_regret", description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", help="the search specs to charge")
    parser.add_argument("--oracle", required=True, help="a search spec with infer=lab.samplers:Oracle: the judge")
    parser.add_argument("--player", default="zoo:strong-4p", help="seat 0 while the positions are collected")
    parser.add_argument("--opponents", default="heuristic", help="every other seat")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--positions", type=int, default=600, help="at most this many, drawn evenly from the games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    config = RulesConfig(num_players=args.players)
    found = collect_positions(config, args.player, args.opponents, args.games, args.seed)
    keep = np.linspace(0, len(found) - 1, min(args.positions, len(found))).round().astype(int)
    report = oracle_regret(config, args.specs, args.oracle, [found[i] for i in np.unique(keep)], args.seed)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
