"""Learning curves of a self-play run (DMC, PPO), read from its TensorBoard events.

A run evaluates itself every ``eval_every`` updates against each of its ``eval_opponents``
(``eval/win_rate_vs_SPEC``, 1 vs the rest on the same ``eval_deal_sets`` duplicate deals each time).
This reads every such scalar with the learner decisions it was taken at and the seconds since the
run's first event, and summarises each by doublings of the decisions (the bands a curve is said
to have flattened over)::

    python -m lab.dmc_curve runs/dmc-long/anchor-10 --out lab/results/dmc/anchor-10.curve.json

The seconds are the run's wall time with its pauses taken out: a gap of more than ``--max-gap``
seconds (120) between two consecutive events of the run (every update logs its losses, and an
update and an evaluation take seconds) is a pause, the process stopped (``kill -STOP`` while a CI
ran beside it) or between a stop and its ``--resume``, and counts nothing. A run beside other work
still counts the machine's load (lab/results/dmc.md says what ran beside each). ``--plot`` draws
several runs' saved curves by decisions and by those seconds::

    python -m lab.dmc_curve --plot lab/results/dmc/curves.png lab/results/dmc/*.curve.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.checkpoint import atomic_write

__all__ = ["MAX_GAP", "bands", "main", "plot", "read_curves"]

#: the band edges, in learner decisions: the first half-million, then doublings from there
EDGES = (0, 500_000, *(1_000_000 * 2 ** k for k in range(8)))


#: a gap between consecutive events longer than this (seconds) is a pause, not work
MAX_GAP = 120.0


def read_curves(run: str | Path, prefix: str = "eval/",
                max_gap: float = MAX_GAP) -> dict[str, list[tuple[int, float, float]]]:
    """Each scalar under ``prefix`` in the events of ``run``: ``(decisions, seconds, value)`` points,
    the seconds counted from the run's first event (any tag), less every gap between consecutive
    events (any tag) longer than ``max_gap``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if not Path(run).is_dir():
        raise FileNotFoundError(f"{run} is not a run's folder (one with TensorBoard events)")
    events = EventAccumulator(str(run), size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    if not tags:
        raise FileNotFoundError(f"{run} holds no TensorBoard scalars")
    times = np.unique([e.wall_time for t in tags for e in events.Scalars(t)])
    gaps = np.diff(times, prepend=times[0])
    worked = np.cumsum(np.where(gaps > max_gap, 0.0, gaps))  # seconds of work up to each event

    def seconds(wall_time: float) -> float:
        return round(float(worked[np.searchsorted(times, wall_time)]), 1)

    return {t: [(int(e.step), seconds(e.wall_time), float(e.value)) for e in events.Scalars(t)]
            for t in tags if t.startswith(prefix)}


def bands(points: Sequence[tuple[int, float, float]], edges: Sequence[int] = EDGES) -> list[dict[str, Any]]:
    """The mean value of the points in each band of decisions ``[lo, hi)`` that has any, with the
    band's point count, its last point's seconds and where it sits (its points' mean decisions and
    mean seconds, where a plot draws it)."""
    out = []
    for lo, hi in zip(edges, [*edges[1:], None]):
        inside = [p for p in points if p[0] >= lo and (hi is None or p[0] < hi)]
        if inside:
            out.append({"from": lo, "to": hi, "points": len(inside), "seconds": inside[-1][1],
                        "mean": sum(p[2] for p in inside) / len(inside),
                        "at_decisions": sum(p[0] for p in inside) / len(inside),
                        "at_seconds": sum(p[1] for p in inside) / len(inside)})
    return out


def plot(curve_files: Sequence[str | Path], out: str | Path) -> list[str]:
    """Draw the saved curves (``--out`` files of several runs) as a grid: a row for each opponent
    (``eval/win_rate_vs_SPEC``), learner decisions (log scale) in the left column and minutes of
    work in the right; each run's points faint, its band means as a line. Returns the opponents."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [json.loads(Path(f).read_text()) for f in curve_files]
    for f, run in zip(curve_files, runs):
        if not isinstance(run, dict) or "curves" not in run:
            raise ValueError(f"{f} is not a saved curve; write one with python -m lab.dmc_curve RUN --out {f}")
    tags = sorted({t for r in runs for t in r["curves"]}, key=lambda t: (t != "eval/win_rate_vs_heuristic", t))
    if not tags:
        raise ValueError(f"no curves in {[str(f) for f in curve_files]}")
    fig, axes = plt.subplots(len(tags), 2, figsize=(12, 4 * len(tags)), squeeze=False)
    colours = plt.get_cmap("tab20").colors
    for i, run in enumerate(runs):
        label = run["run"]
        for row, tag in enumerate(tags):
            if tag not in run["curves"]:
                continue
            points = np.array(run["curves"][tag]["points"], dtype=float)
            summary = bands([(int(p[0]), p[1], p[2]) for p in points])
            for col, (x, at, scale) in enumerate(((0, "at_decisions", 1.0), (1, "at_seconds", 1 / 60))):
                ax = axes[row, col]
                ax.plot(points[:, x] * scale, points[:, 2], ".", color=colours[i % 20], alpha=0.2, markersize=3)
                ax.plot([b[at] * scale for b in summary], [b["mean"] for b in summary], "o-", color=colours[i % 20],
                        label=label)
                label = None  # once a run
    for row, tag in enumerate(tags):
        opponent = tag.removeprefix("eval/win_rate_vs_")
        axes[row, 0].set_xscale("log")
        axes[row, 0].set_xlabel("learner decisions")
        axes[row, 1].set_xlabel("minutes of work (pauses taken out)")
        for ax in axes[row]:
            ax.set_ylabel(f"win rate, 1 vs the rest {opponent}")
            ax.grid(alpha=0.3)
    fig.legend(loc="lower center", ncol=4, fontsize="small")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return [t.removeprefix("eval/win_rate_vs_") for t in tags]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m lab.dmc_curve", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="the run's folder (runs_dir/run_name); with --plot, saved curves (--out files)")
    parser.add_argument("--out", help="write the curves and their bands here as JSON")
    parser.add_argument("--max-gap", type=float, default=MAX_GAP,
                        help="a gap between events longer than this many seconds is a pause (default %(default)s)")
    parser.add_argument("--plot", metavar="PNG", help="draw the saved curves PATH... into this image")
    args = parser.parse_args(argv)
    if args.plot:
        opponents = plot(args.paths, args.plot)
        print(f"{args.plot}: {len(args.paths)} runs against {', '.join(opponents)}")
        return {"plot": args.plot, "runs": args.paths, "opponents": opponents}
    if len(args.paths) != 1:
        parser.error("give one run's folder (or --plot PNG and saved curves)")
    curves = read_curves(args.paths[0], max_gap=args.max_gap)
    result = {"run": Path(args.paths[0]).name,
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
