"""The speed table of docs/performance.md: runs the env, batched-engine and evaluation benchmarks
(each in its own process, one after the other), keeps their JSON, and prints the table in
Markdown with every figure next to its anchor measured in the same run.

    python benchmarks/table.py                    # what `make bench` runs (about 10 minutes)
    python benchmarks/table.py --quick            # fewer steps and deal sets: a smoke run
    python benchmarks/table.py --json out.json    # the benchmarks' JSON as well

Quiet machines give steadier figures: the ratios are the ones to compare across machines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, *args: str) -> dict:
    """One benchmark script's JSON (its stdout)."""
    done = subprocess.run([sys.executable, str(HERE / script), *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def table(env: dict, vector: dict, evaluation: dict) -> str:
    """The Markdown table of the three benchmarks' JSON."""
    def k(x: float) -> str:
        return f"{x / 1000:.1f}k" if x < 1e6 else f"{x / 1e6:.2f}M"

    by_batch = vector["by_batch"]
    ev = evaluation["results"]
    rows = [
        ("`raw_env`, decisions/s with observation and mask (random play, 4p double-nine)",
         k(env["chicken_foot_raw_env_decisions_per_s_median"]),
         f"{env['raw_env_vs_do_nothing']}x a do-nothing PettingZoo AEC env of the same shape "
         f"({k(env['do_nothing_aec_env_decisions_per_s_median'])}); {env['raw_env_vs_connect_four_raw']}x "
         f"connect_four_v3 raw ({k(env['connect_four_raw_env_decisions_per_s_median'])})"),
        ("`env()` (illegal actions end the game)", k(env["chicken_foot_env_decisions_per_s_median"]),
         f"{env['env_vs_do_nothing']}x the do-nothing env; {env['env_vs_connect_four_env']}x connect_four_v3 `env()`"),
        ("`env(history=True)`", k(env["chicken_foot_env_history_decisions_per_s_median"]),
         f"{env['env_history_vs_env']}x `env()`"),
        *[(f"batched engine, B = {b}, decisions/s with observation and mask", k(v["decisions_per_s_median"]),
           f"{'numba threads' if v['threads'] else 'one thread'}, {vector['numba_threads']} threads")
          for b, v in by_batch.items()],
        *[(f"evaluation of {evaluation['deal_sets']} deal sets, {name} (`{r['spec']}`) vs 3 heuristic, 2 workers",
           f"{r['speedup_2_warm_median']:.2f}x one worker with the workers already started; "
           f"{r['speedup_2_cold_median']:.2f}x starting them",
           f"one worker: {r['games_per_s_one_worker_median']} games/s")
          for name, r in ev.items()],
    ]
    lines = ["| what | figure | anchor (same run) |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    notes = (f"Medians of {env['runs']} runs of {env['steps_per_run']} decisions (env), "
             f"{vector['runs']} runs (batched engine), "
             f"{evaluation['runs']} run(s) (evaluation; {evaluation['config']}).")
    return "\n".join(lines) + "\n\n" + notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer steps and deal sets")
    parser.add_argument("--json", type=Path, help="also write the benchmarks' JSON here")
    args = parser.parse_args()
    quick = args.quick
    env = run("env.py", "--runs", "3" if quick else "5", "--steps", "5000" if quick else "20000")
    vector = run("vector.py", "--batches", "256", "4096", "--runs", "2" if quick else "5",
                 "--decisions", "100000" if quick else "400000")
    evaluation = run("eval_workers.py", "--deal-sets", "40" if quick else "500", "--runs", "1",
                     *(["--rounds", "2"] if quick else []))
    if args.json:
        args.json.write_text(json.dumps({"env": env, "vector": vector, "eval": evaluation}, indent=1))
    print(table(env, vector, evaluation))


if __name__ == "__main__":
    main()
