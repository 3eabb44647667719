"""Search agents: speed, strength at the default, and strength against time per decision.

Prints JSON. Four parts, each optional:

* ``--speed``: rollout decisions/s and search decisions/s of a search spec (default ``search``) on
  decision points taken from heuristic games of 4-player double-nine (only decisions with more
  than one legal action; forced ones cost nothing); the median of ``--runs`` runs.
* ``--strength``: the issue's match-ups with duplicate deals (``chickenfoot eval``'s evaluation):
  1 vs 3 heuristic, 1 vs 3 greedy, 1 vs 3 zoo:strong-4p (4 players) and head-to-head vs heuristic
  and vs zoo:strong-2p (2 players); ``--games`` games each (rounded up to whole deal sets).
* ``--values``: what valuing one finished round costs the searcher's seat (``value=points``,
  ``win``, ``joint``), in microseconds a rollout's end (the compiled ``score_rows`` over 512
  finished rounds); the median of ``--runs`` runs of 200 calls.
* ``--curve``: 1 vs 3 heuristic at each time budget in ``--ms`` for PIMC and ISMCTS, with the
  inference, and PIMC without it; a table in the JSON and, with ``--plot``, a PNG.

Games run in ``--workers`` processes. Example (the README's figures)::

    python benchmarks/search.py --speed --runs 5
    python benchmarks/search.py --values
    python benchmarks/search.py --strength --games 1000 --workers 2
    python benchmarks/search.py --curve --ms 5 20 50 200 --games 200 --workers 2 --plot docs/search_curve.png
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import agents
from cf_env import Game, GameEncoder, RulesConfig
from training.evaluate import evaluate

MATCHUPS = {  # name: (players, lineup after the search agent)
    "vs3_heuristic": (4, "heuristic"),
    "vs3_greedy": (4, "greedy"),
    "vs3_strong-4p": (4, "zoo:strong-4p"),
    "h2h_heuristic": (2, "heuristic"),
    "h2h_strong-2p": (2, "zoo:strong-2p"),
}


def decision_points(config: RulesConfig, count: int, seed: int) -> list[dict]:
    """Observation dicts with more than one legal action, from heuristic self-play."""
    encoder = GameEncoder(config)
    heuristic = agents.load("heuristic", config)
    rng = np.random.default_rng(seed)
    points: list[dict] = []
    game_seed = seed
    while len(points) < count:
        game = Game(config, seed=game_seed)
        game_seed += 1
        while not game.is_over and len(points) < count:
            view = encoder.observe(game, history=True)  # the history entry: infer=policy reads it
            if len(game.legal_actions()) > 1 and rng.random() < 0.25:
                points.append(view)
            game.apply(heuristic.act(view, rng))
    return points


def speed(spec: str, runs: int, positions: int) -> dict:
    config = RulesConfig()
    points = decision_points(config, positions, seed=0)
    agent = agents.load(spec, config)
    agent.act(points[0], np.random.default_rng(0))  # compile / load the numba cache
    search_rates, rollout_rates, sims = [], [], []
    for run in range(runs):
        rng = np.random.default_rng(run)
        seconds = steps = count = 0.0
        for view in points:
            agent.act(view, rng)
            seconds += agent.last_search["seconds"]
            steps += agent.last_search["rollout_decisions"]
            count += agent.last_search["simulations"]
        search_rates.append(len(points) / seconds)
        rollout_rates.append(steps / seconds)
        sims.append(count / len(points))
    return {"spec": spec, "positions": len(points), "runs": runs,
            "search_decisions_per_s": statistics.median(search_rates),
            "rollout_decisions_per_s": statistics.median(rollout_rates),
            "simulations_per_decision": statistics.median(sims)}


def values(runs: int) -> dict:
    """Microseconds a rollout's end for each valuation, over 512 finished rounds of random points."""
    from agents.search.pimc import score_rows
    from agents.search.values import SIGMA_PER_HAND_PIP, Valuation
    from cf_env.vector import make_consts, new_state

    config = RulesConfig()
    consts, rows, calls = make_consts(config), 512, 200
    state = new_state(consts, rows)
    state.round_scores[:, 0] = np.random.default_rng(0).integers(0, 60, (rows, config.num_players))
    unit = float(config.max_pip * config.hand_size)
    out: dict = {"rounds": rows, "runs": runs}
    for value in ("points", "win", "joint"):
        v = Valuation(np.array([40, 33, 20, 0], np.int64), 4, unit, 0.0 if value == "points" else SIGMA_PER_HAND_PIP * unit,
                      value == "joint")
        sums, counts = np.zeros(4), np.zeros(4, np.int64)
        score_rows(state, consts, rows, 4, sums, counts, v)  # compile / load the numba cache
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            for _ in range(calls):
                score_rows(state, consts, rows, 4, sums, counts, v)
            times.append((time.perf_counter() - start) / (calls * rows) * 1e6)
        out[f"{value}_us_per_rollout_end"] = statistics.median(times)
    return out


def match(spec: str, players: int, opponent: str, games: int, workers: int, seed: int) -> dict:
    config = RulesConfig(num_players=players)
    deal_sets = -(-games // players)
    start = time.perf_counter()
    report = evaluate([spec] + [opponent] * (players - 1), config, deal_sets=deal_sets, seed=seed, progress=False,
                      workers=workers)
    me = report.results[0]
    return {"spec": spec, "players": players, "opponent": opponent, "games": report.games,
            "win_rate": me.win_rate, "ci95": list(me.win_rate_ci95), "parity": 1 / players,
            "mean_points": me.mean_points, "ms_per_decision": me.ms_per_decision, "ms_per_choice": me.ms_per_choice,
            "opponent_ms_per_decision": report.results[1].ms_per_decision,
            "wall_s": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="search", help="the search agent spec measured by --speed and --strength")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--strength", action="store_true")
    parser.add_argument("--values", action="store_true", help="what each valuation costs a rollout's end")
    parser.add_argument("--matchups", nargs="+", default=list(MATCHUPS), choices=list(MATCHUPS))
    parser.add_argument("--curve", action="store_true")
    parser.add_argument("--ms", type=float, nargs="+", default=[5, 20, 50, 200])
    parser.add_argument("--curve-specs", nargs="+", default=["search:algo=pimc", "search:algo=ismcts",
                                                             "search:algo=pimc:infer=0"],
                        help="specs of the curve's lines; :ms=X is appended per point")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default=None, help="write the curve as a PNG here")
    args = parser.parse_args()
    out: dict = {}
    if args.speed:
        out["speed"] = speed(args.spec, args.runs, args.positions)
        print(json.dumps(out["speed"]), flush=True)
    if args.values:
        out["values"] = values(args.runs)
        print(json.dumps(out["values"]), flush=True)
    if args.strength:
        out["strength"] = {}
        for name in args.matchups:
            players, opponent = MATCHUPS[name]
            out["strength"][name] = match(args.spec, players, opponent, args.games, args.workers, args.seed)
            print(json.dumps({name: out["strength"][name]}), flush=True)
    if args.curve:
        out["curve"] = []
        for base in args.curve_specs:
            for ms in args.ms:
                row = match(f"{base}:ms={ms:g}", 4, "heuristic", args.games, args.workers, args.seed)
                out["curve"].append(row)
                print(json.dumps(row), flush=True)
        if args.plot:
            plot_curve(out["curve"], args.plot)
    print(json.dumps(out, indent=2))


def plot_curve(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    lines: dict[str, list[dict]] = {}
    for row in rows:
        lines.setdefault(row["spec"].rsplit(":ms=", 1)[0], []).append(row)
    for name, points in lines.items():
        ms = [float(p["spec"].rsplit(":ms=", 1)[1]) for p in points]
        rate = np.array([p["win_rate"] for p in points])
        err = np.array([[p["win_rate"] - p["ci95"][0] for p in points], [p["ci95"][1] - p["win_rate"] for p in points]])
        ax.errorbar(ms, rate, yerr=err, marker="o", capsize=3, label=name.replace("search:", ""))
    ax.axhline(0.25, color="grey", linestyle="--", label="parity")
    ax.set_xscale("log")
    ax.set_xlabel("time budget per decision (ms)")
    ax.set_ylabel("win rate, 1 vs 3 heuristic")
    ax.set_title("Search strength against time (4-player double-nine, duplicate deals)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
