"""How much of the opponents' hands a search must see to win a given share: its win rate with
``k`` of their hands shown to it.

The search with every hand shown won 89% as 1 vs 3 heuristic (100 games, search.md); without,
the shipped ``zoo:search-4p-vs-heuristic`` wins 62%. Between the two, this plays a search spec as
1 vs 3 ``--vs`` players on duplicate deal sets (every seat rotation, the deals and the games'
generators as ``chickenfoot compare`` makes them for the same ``--seed``) with its ``k`` nearest
opponents to the left shown to it: at each of its decisions with a choice, those opponents'
true hands are dealt in every world (as the oracle, ``lab.samplers:Oracle``, deals them all) and the others' are
sampled as the spec says, with the shown tiles taken out of their reach. ``k = 0`` is the spec as
it plays; ``k = n - 1`` the oracle (only the boneyard's order sampled). No player may see this
(R17): it measures what the hidden information is worth to a search, not a way to play.

    python -m lab.peek zoo:search-4p-vs-heuristic --shown 0 1 2 3 --deal-sets 100 --seed 51 \\
        --workers 2 --save peek.jsonl

prints, as JSON, each ``k``'s win rate and mean points with 95% t-intervals over deal sets, and
the paired difference from the first ``k`` given. ``--save`` keeps one line per deal set and
``k``: a run stopped and started again with the same file plays only what is missing.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from agents import load
from agents.search import SearchAgent
from agents.search.worlds import World
from cf_env import ConfigError, RulesConfig, raw_env
from lab.samplers import shown_world
from training.arena import iter_deal_sets, play_rotations, spec_clock, spec_means, warm_up
from training.stats import t_interval
from training.workers import WorkerPool, worker_state

__all__ = ["main", "play_deal_set", "shown_world", "summarize"]


class _Shown:
    """A search agent's seat for the harness only: at its decisions with a choice it reads the
    first ``shown`` opponents' true hands from ``env``'s game and deals them in its worlds."""

    def __init__(self, agent: SearchAgent, env: raw_env) -> None:
        self.agent, self.env, self.shown, self._hands = agent, env, 0, np.zeros(0)
        self.inner = agent.sampler  # the spec's own sampler, if any: the shown hands go on top of its world
        agent.sampler = self

    def __call__(self, world: World, observation: dict) -> World:
        world = self.inner(world, observation) if self.inner is not None else world
        return shown_world(world, self._hands, self.shown) if self.shown else world

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        if self.shown and int(observation["action_mask"].sum()) > 1:
            env = self.env
            n, t = env.config.num_players, env.config.num_tiles
            self._hands = env.hidden_tiles(env.agent_selection)[: (n - 1) * t].reshape(n - 1, t)
        return self.agent.act(observation, rng)


def _state(spec: str, vs: str, config: RulesConfig) -> dict:
    agent, other = load(spec, config), load(vs, config)
    if not isinstance(agent, SearchAgent):
        raise ConfigError(f"{spec!r} is not a search agent: only a search's worlds can be shown hands")
    warm_up({spec: agent, vs: other}, config)
    env = raw_env(config=config, history=True)
    return {"config": config, "searcher": _Shown(agent, env), "other": other, "env": env}


def play_deal_set(d: int, deals: list[dict], shown: int, seed: int) -> dict:
    """One deal set, the searcher in each seat in turn against the other player: its win share
    and points a game, and its seconds a decision with a choice."""
    state = worker_state()
    config, env, peek, other = state["config"], state["env"], state["searcher"], state["other"]
    peek.shown = shown
    lineup = ["searcher"] + ["other"] * (config.num_players - 1)  # rotation r: the searcher at seat r
    rows = play_rotations(env, {"searcher": peek, "other": other}, lineup, deals, seed, d)
    win, mean_points = spec_means(rows, "searcher")
    clock = spec_clock(rows, "searcher")
    return {"deal_set": d, "shown": shown, "win": win, "points": mean_points, "seconds": float(clock[2]),
            "choices": int(clock[3])}


def summarize(rows: Sequence[dict], shown: Sequence[int]) -> dict:
    """Each ``k``'s figures over the deal sets every ``k`` played, and the paired difference from
    the first ``k`` (``minus_first``: win rate in points of percent, mean points)."""
    by = {k: {r["deal_set"]: r for r in rows if r["shown"] == k} for k in shown}
    common = sorted(set.intersection(*(set(v) for v in by.values())))
    if len(common) < 2:
        raise ConfigError(f"need at least 2 deal sets played with every shown count, have {len(common)}")
    report: dict = {"deal_sets": len(common), "games": len(common) * 4, "shown": {}}
    base = by[shown[0]]
    for k in shown:
        win = np.array([by[k][d]["win"] for d in common])
        pts = np.array([by[k][d]["points"] for d in common])
        seconds = sum(by[k][d]["seconds"] for d in common)
        choices = sum(by[k][d]["choices"] for d in common)
        entry = {"win_rate": 100 * win.mean(), "win_interval": [100 * x for x in t_interval(win, 0, 1)],
                 "points": pts.mean(), "points_interval": list(t_interval(pts)),
                 "ms_per_choice": 1000 * seconds / max(choices, 1)}
        if k != shown[0]:
            dw = 100 * (win - np.array([base[d]["win"] for d in common]))
            dp = pts - np.array([base[d]["points"] for d in common])
            entry["minus_first"] = {"win_rate": [dw.mean(), *t_interval(dw)], "points": [dp.mean(), *t_interval(dp)]}
        report["shown"][str(k)] = entry
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m lab.peek", description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="a search spec (or a named search, zoo:search-4p-vs-heuristic)")
    parser.add_argument("--vs", default="heuristic", help="every other seat")
    parser.add_argument("--shown", type=int, nargs="+", default=[0, 1, 2, 3], help="opponents' hands shown")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, help="rounds a game (default: the rules' full game)")
    parser.add_argument("--deal-sets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--save", help="a .jsonl of finished deal sets (resumed when it exists)")
    args = parser.parse_args(argv)
    config = RulesConfig(num_players=args.players, **({"rounds": args.rounds} if args.rounds else {}))
    for k in args.shown:
        if not 0 <= k <= config.num_players - 1:
            raise ConfigError(f"--shown takes 0 to {config.num_players - 1} (the opponents), got {k}")
    rows: list[dict] = []
    if args.save and Path(args.save).exists():
        rows = [json.loads(line) for line in Path(args.save).read_text().splitlines() if line.strip()]
    done = {(r["shown"], r["deal_set"]) for r in rows}
    source = iter_deal_sets(config, args.seed)
    deals = [next(source) for _ in range(args.deal_sets)]
    tasks = [(d, deals[d], k, args.seed) for d in range(args.deal_sets) for k in args.shown if (k, d) not in done]
    with WorkerPool(args.workers, _state, (args.spec, args.vs, config)) as pool, \
            open(args.save or os.devnull, "a") as out:
        for row in tqdm(pool.imap(play_deal_set, tasks), total=len(tasks), desc="deal sets", unit="set"):
            rows.append(row)
            out.write(json.dumps(row) + "\n")
            out.flush()
    report = {"spec": args.spec, "vs": args.vs, "seed": args.seed, **summarize(rows, args.shown)}
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
