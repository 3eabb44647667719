"""Learning curves of a self-play run (DMC, PPO), read from its TensorBoard events.

A run evaluates itself every ``eval_every`` updates against each of its ``eval_opponents``
(``eval/win_rate_vs_SPEC``, 1 vs the rest on the same ``eval_deal_sets`` duplicate deals each time).
This reads every such scalar with the learner decisions it was taken at and the seconds since the
run's first event, and summarises each by doublings of the decisions (the bands a curve is said
to have flattened over)::

    python -m lab.dmc_curve runs/dmc-long/anchor-10 --out lab/results/dmc/anchor-10.curve.json

The seconds are wall time: a run that was stopped and resumed counts the pause, and a run beside
other work counts the machine's load (lab/results/dmc.md says what ran beside each).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.checkpoint import atomic_write

__all__ = ["bands", "main", "read_curves"]

#: the band edges, in learner decisions: the first half-million, then doublings from there
EDGES = (0, 500_000, *(1_000_000 * 2 ** k for k in range(8)))


def read_curves(run: str | Path, prefix: str = "eval/") -> dict[str, list[tuple[int, float, float]]]:
    """Each scalar under ``prefix`` in the events of ``run``: ``(decisions, seconds, value)`` points,
    the seconds counted from the run's first event (any tag)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if not Path(run).is_dir():
        raise FileNotFoundError(f"{run} is not a run's folder (one with TensorBoard events)")
    events = EventAccumulator(str(run), size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    if not tags:
        raise FileNotFoundError(f"{run} holds no TensorBoard scalars")
    start = min(events.Scalars(t)[0].wall_time for t in tags)
    return {t: [(int(e.step), round(e.wall_time - start, 1), float(e.value)) for e in events.Scalars(t)]
            for t in tags if t.startswith(prefix)}


def bands(points: Sequence[tuple[int, float, float]], edges: Sequence[int] = EDGES) -> list[dict[str, Any]]:
    """The mean value of the points in each band of decisions ``[lo, hi)`` that has any, with the
    band's point count and its last point's seconds."""
    out = []
    for lo, hi in zip(edges, [*edges[1:], None]):
        inside = [p for p in points if p[0] >= lo and (hi is None or p[0] < hi)]
        if inside:
            out.append({"from": lo, "to": hi, "points": len(inside), "seconds": inside[-1][1],
                        "mean": sum(p[2] for p in inside) / len(inside)})
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m lab.dmc_curve", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="the run's folder (runs_dir/run_name)")
    parser.add_argument("--out", help="write the curves and their bands here as JSON")
    args = parser.parse_args(argv)
    curves = read_curves(args.run)
    result = {"run": Path(args.run).name,
              "curves": {t: {"points": [list(p) for p in pts], "bands": bands(pts)} for t, pts in curves.items()}}
    for tag, curve in result["curves"].items():
        print(tag)
        for b in curve["bands"]:
            hi = f"{b['to'] / 1e6:.1f}M" if b["to"] else "end"
            print(f"  {b['from'] / 1e6:.1f}M-{hi}: {b['mean']:.3f} over {b['points']} points, "
                  f"{b['seconds'] / 60:.0f} min")
    if args.out:
        atomic_write(args.out, lambda f: f.write(json.dumps(result, indent=1).encode()))
    return result


if __name__ == "__main__":
    main()
