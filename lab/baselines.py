"""Baselines at equal wall-clock budgets: what each training algorithm reaches in B minutes on this
machine, as 1 vs 3 heuristic (4 players) or head to head against heuristic (2 players), measured
on the same deals.

Each run is one command of the ``chickenfoot`` CLI with its own defaults except the budget, the
player count (a packaged config's ``rules`` set to ``num_players: 2`` where the command takes a
config) and the opponents named below, run alone; then ``chickenfoot eval`` plays the result
against heuristic players on ``--deal-sets`` duplicate deal sets (the same deals for every row of
a player count: 400 games by default). Resumable: a run whose row JSON exists is skipped, so a
stopped sweep goes on where it stopped. Writes ``lab/results/baselines/table.json``, ``table.md``
and ``strength_by_time.png``::

    python lab/baselines.py --budgets 10 --algorithms ppo distill sb3-vec tianshou torchrl rllib
    python lab/baselines.py --budgets 10 --players 2
    python lab/baselines.py --report          # the table and plot from what has run

The budgets are wall-clock minutes, so a row means what it says only on a machine as fast as the
one the table was measured on. Before each run the sweep times PettingZoo's do-nothing AEC loop
(``benchmarks/env.py``'s, 3 runs, median) against the reference machine's 423.3k decisions a second
(docs/performance.md), records the ratio in the row (``machine_speed``), and refuses to train below
``--min-speed`` (0.85): such a machine's rows would not compare with the table's others.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "lab" / "results" / "baselines"
BIN = Path(sys.executable).parent
HUGE = "1000000000"  # steps no run reaches: the budget stops it
REFERENCE_DO_NOTHING = 423_300  # the do-nothing AEC loop's decisions/s where the table was measured (docs/performance.md)


def machine_speed(runs: int = 3, steps: int = 20_000) -> float:
    """This machine's speed against the reference: the median of ``runs`` timings of PettingZoo's
    do-nothing AEC loop (``benchmarks/env.py``, the shape of the Chicken Foot env's) over its
    reference rate."""
    import statistics
    from importlib.util import module_from_spec, spec_from_file_location

    import cf_env

    # by path: an installed distribution ships a ``benchmarks`` namespace of its own
    found = spec_from_file_location("cf_benchmarks_env", ROOT / "benchmarks" / "env.py")
    assert found is not None and found.loader is not None
    bench = module_from_spec(found)
    found.loader.exec_module(bench)
    ours = cf_env.raw_env()
    length = bench.game_length(lambda: cf_env.raw_env())

    def make() -> Any:
        return bench.do_nothing_env(len(ours.possible_agents), ours.encoder.size, ours.num_actions, length)

    bench.measure(make, 2000, 0)  # warm-up
    return statistics.median(bench.measure(make, steps, r) for r in range(runs)) / REFERENCE_DO_NOTHING


def commands(algorithm: str, minutes: float, out: Path, players: int = 4) -> tuple[list[list[str]], Path]:
    """The training command(s) of ``algorithm`` at a budget of ``minutes`` and ``players`` at the table,
    and the model they write."""
    cf = str(BIN / "chickenfoot")
    table = ["--players", str(players)]
    if algorithm == "ppo":  # the project's PPO, self-play with its opponent pool (configs/default.yaml). Its
        # total_steps (20M) stops a run and sets the learning rate's annealing; 4 players reach 16.6M learner steps
        # in 10 minutes here, so it scales with the budget, 2M a minute (the packaged 20M at 10 minutes): the
        # budget stops the run, near the annealing's end
        return [[cf, "train", "--config", _config("default", out, players), "--time-limit-minutes", str(minutes),
                 "--total-steps", str(int(2_000_000 * minutes)), "--overwrite", "--runs-dir", str(out.parent),
                 "--run-name", out.name, "--no-progress"]], out / "final.pt"
    if algorithm == "distill":  # make train's job: search labels, then the fit, whose share grows with the labels
        # (1.3 min for 430k labels after 8.5 min of collection; 3.1 min for 1.46M after 28.5)
        collect = max(minutes - 1.5 - 0.11 * max(minutes - 10, 0), 0.5)
        return [[cf, "distill", "--config", _config("distill", out, players), "--collect-minutes", str(collect),
                 "--overwrite", "--runs-dir", str(out.parent), "--run-name", out.name, "--no-progress"]], out / "final.pt"
    if algorithm == "sb3-vec":  # MaskablePPO on the vector env, 1024 games, vs heuristic at every other seat
        return [[cf, "sb3", "--num-envs", "1024", "--steps", HUGE, "--time-limit-minutes", str(minutes),
                 "--opponents", "heuristic", *table, "--out", str(out), "--no-progress"]], out / "model.zip"
    if algorithm == "tianshou":  # masked DQN vs heuristic at every other seat
        return [[cf, "tianshou", "--steps", HUGE, "--time-limit-minutes", str(minutes), "--opponents", "heuristic",
                 *table, "--out", str(out), "--no-progress"]], out / "model.pt"
    if algorithm == "torchrl":  # self-play PPO through TorchRL's PettingZooWrapper
        return [[cf, "torchrl", "--frames", HUGE, "--time-limit-minutes", str(minutes), *table, "--out", str(out),
                 "--no-progress"]], out / "model.pt"
    if algorithm == "rllib":  # RLlib PPO, self-play, configs/rllib.yaml with the budget
        config = _config("rllib", out, players, iterations=100_000, time_limit_minutes=minutes, run_name=out.name,
                         runs_dir=str(out.parent))
        return [[cf, "rllib", "--config", config, "--no-progress"]], out / "shared.pt"
    raise SystemExit(f"unknown algorithm {algorithm!r}")


def _config(name: str, out: Path, players: int, **fields: Any) -> str:
    """A packaged config as it ships (its name) when nothing changes, else a copy beside the run with the
    player count and ``fields`` set (the copy's path)."""
    if players == 4 and not fields:
        return name
    import yaml

    packaged = subprocess.run([str(BIN / "chickenfoot"), "configs", "show", name], capture_output=True, text=True,
                              check=True).stdout
    config = yaml.safe_load(packaged) | fields
    if players != 4:
        config["rules"] = {**(config.get("rules") or {}), "num_players": players}
    path = out.parent / f"{out.name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return str(path)


ALGORITHMS = ("ppo", "distill", "sb3-vec", "tianshou", "torchrl", "rllib")


def run(algorithm: str, minutes: float, deal_sets: int, runs: Path, players: int = 4,
        min_speed: float = 0.85) -> dict[str, Any] | None:
    name = f"{algorithm}-{minutes:g}min" if players == 4 else f"{algorithm}-{players}p-{minutes:g}min"
    out = runs / name
    result_file = RESULTS / f"{name}.json"
    if result_file.exists():
        return json.loads(result_file.read_text())
    speed = machine_speed()
    if speed < min_speed:
        print(f"{name}: not run. This machine runs at {speed:.2f} of the reference machine's speed (PettingZoo's "
              f"do-nothing AEC loop, {speed * REFERENCE_DO_NOTHING / 1000:.0f}k against "
              f"{REFERENCE_DO_NOTHING / 1000:.1f}k decisions/s), below --min-speed {min_speed}: a {minutes:g}-minute "
              f"row from it would not compare with the table's. Run it on a quieter or faster machine, or pass "
              f"--min-speed 0 to record it anyway (its row keeps machine_speed).", flush=True)
        return None
    steps, model = commands(algorithm, minutes, out, players)
    log = RESULTS / f"{name}.log"
    start = time.time()
    with log.open("w") as fh:
        for cmd in steps:
            fh.write("$ " + " ".join(cmd) + "\n")
            fh.flush()
            done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)
            if done.returncode:
                print(f"{name}: exited {done.returncode}; see {log}")
                return None
    train_seconds = time.time() - start
    spec = f"sb3:{model}" if model.suffix == ".zip" else str(model)
    report = RESULTS / f"{name}.eval.json"
    subprocess.run([str(BIN / "chickenfoot"), "eval", spec, "heuristic", "--players", str(players), "--deal-sets",
                    str(deal_sets), "--workers", "2", "--json", str(report), "--no-progress"], check=True, cwd=ROOT)
    row = {"algorithm": algorithm, "players": players, "budget_minutes": minutes,
           "train_seconds": round(train_seconds, 1), "machine_speed": round(speed, 2),
           "command": " ".join(" ".join(c) for c in steps), "model": str(model), "eval_file": report.name}
    result_file.write_text(json.dumps(row, indent=2))
    return row


def report() -> None:
    rows = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*min.json"))]
    for row in rows:  # the evaluation beside the row (every deal set's results: the samples)
        row.setdefault("players", 4)  # the first sweep's rows were all 4-player
        row["eval"] = json.loads((RESULTS / row["eval_file"]).read_text())
    lines = ["| players | algorithm | budget | wall time to train | win rate against heuristic | games |",
             "|---|---|---|---|---|---|"]
    points: dict[int, dict[str, list[tuple[float, float, float, float]]]] = {}
    for row in sorted(rows, key=lambda r: (-r["players"], r["algorithm"], r["budget_minutes"])):
        rate, lo, hi, games = _win(row["eval"])
        lines.append(f"| {row['players']} | {row['algorithm']} | {row['budget_minutes']:g} min | "
                     f"{row['train_seconds'] / 60:.1f} min | {100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
                     f"{games} |")
        points.setdefault(row["players"], {}).setdefault(row["algorithm"], []).append(
            (row["train_seconds"] / 60, rate, lo, hi))
    (RESULTS / "table.md").write_text("\n".join(lines) + "\n")
    summary = [{k: v for k, v in row.items() if k != "eval"} | dict(zip(("win_rate", "ci_low", "ci_high", "games"),
                                                                         _win(row["eval"]))) for row in rows]
    (RESULTS / "table.json").write_text(json.dumps(summary, indent=2))
    print("\n".join(lines))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = sorted(points, reverse=True)
    longest = max(p[0] for runs in points.values() for pts in runs.values() for p in pts)
    fig, axes = plt.subplots(1, len(tables), figsize=(6 * len(tables), 4), squeeze=False)
    for ax, players in zip(axes[0], tables):
        for algorithm, pts in sorted(points[players].items()):
            pts.sort()
            ax.errorbar([p[0] for p in pts], [100 * p[1] for p in pts],
                        yerr=[[100 * (p[1] - p[2]) for p in pts], [100 * (p[3] - p[1]) for p in pts]],
                        marker="o", capsize=3, label=algorithm)
        ax.axhline(100 / players, color="grey", linestyle=":", label=f"parity ({100 / players:g}%)")
        ax.set_xlim(0, 1.08 * longest)  # every panel on one scale, the longest run's
        ax.set_xlabel("training wall time, minutes (2 cores)")
        ax.set_ylabel("win rate (%)")
        ax.set_title("1 vs 3 heuristic (4 players)" if players == 4 else
                     "head to head against heuristic (2 players)" if players == 2 else
                     f"1 vs {players - 1} heuristic ({players} players)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "strength_by_time.png", dpi=120)


def _win(evaluation: dict) -> tuple[float, float, float, int]:
    """The first agent's win rate, its 95% interval (t over deal sets) and the games, from an eval report."""
    first = evaluation["results"][0]
    return first["win_rate"], first["win_rate_ci95"][0], first["win_rate_ci95"][1], evaluation["games"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[10.0])
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--players", type=int, default=4, help="players at the table (2: head to head)")
    parser.add_argument("--deal-sets", type=int, default=None,
                        help="duplicate deal sets per evaluation (x players games; default: 400 games)")
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "runs" / "baselines")
    parser.add_argument("--min-speed", type=float, default=0.85,
                        help="refuse to train on a machine slower than this share of the reference (0: never)")
    parser.add_argument("--report", action="store_true", help="only write the table and plot")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.report:
        for minutes in args.budgets:
            for algorithm in args.algorithms:
                row = run(algorithm, minutes, args.deal_sets or 400 // args.players, args.runs_dir, args.players,
                          args.min_speed)
                print(json.dumps({k: v for k, v in (row or {}).items() if k != "eval"}), flush=True)
    report()


if __name__ == "__main__":
    main()
