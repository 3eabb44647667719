"""Learning curves of distillation: one network per label count, each measured, and their plots.

:func:`learning_curve` fits one network per label count (:func:`training.distill.fit`) and
measures each: held-out agreement and strength as 1 vs 3 ``--opponent`` (heuristic by default;
duplicate deals), one JSON row per point, saved as each one ends (a rerun with more sizes
continues the file); :func:`plot_curve` draws saved curves together::

    python -m lab.distill_curve curve --labels runs/labels-4p --sizes 10000 30000 100000 --json c.json --plot c.png
    python -m lab.distill_curve plot --json a.json b.json --opponent zoo:strong-4p-ppo --reference goal=0.35 --out p.png

What the curves measured is in ``lab/results/distillation.md``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch

from agents.checkpoint import atomic_write
from agents.torch_policy import ActorCritic
from cf_env import ConfigError
from training.distill import FitSettings, fit, imitate, label_rules, split_labels, split_paths, strength
from training.labels import read_collection

__all__ = ["CURVE_SETTINGS", "WarmStart", "learning_curve", "main", "plot_curve"]


def _teachers(folders: Sequence[str | Path], holdout: float) -> str:
    """The teachers (``collection.json``) of the folders :func:`split_labels` trains on."""
    train, _ = split_paths([Path(f) for f in folders], holdout)
    trained = dict.fromkeys(p.parent for p in train)
    return ", ".join(dict.fromkeys(str(read_collection(f).get("teacher")) for f in trained))


#: what a learning curve's points must share to be drawn as one curve (and resumed from its JSON)
CURVE_SETTINGS = ("labels_from", "holdout", "temperature", "init", "imitate", "imitation_games",
                  "imitation_epochs", "epochs", "learning_rate", "hidden", "action_head", "seed", "opponent",
                  "deal_sets")


class WarmStart(NamedTuple):
    """Where every point of a curve starts: ``init`` (a checkpoint spec), or ``imitate`` (an agent
    spec whose play one warm start imitates, :func:`imitate`, fitted once for ``games`` games and
    ``epochs`` epochs, as ``fit --imitate`` does), or neither (a new network)."""

    init: str | None = None
    imitate: str | None = None
    games: int = 1000
    epochs: int = 4


def learning_curve(folder: str | Path | Sequence[str | Path], sizes: Sequence[int], how: FitSettings,
                   deal_sets: int, start: WarmStart | None = None, opponent: str = "heuristic",
                   holdout: float = 0.1, workers: int = 1, progress: bool = True,
                   done: Sequence[dict[str, Any]] = (),
                   on_row: Callable[[list[dict[str, Any]]], None] | None = None) -> list[dict[str, Any]]:
    """One network per label count in ``sizes`` (the first that many labels), fitted as ``how``
    says from ``start`` (default: a new network), each measured on the held-out labels (:func:`split_labels`: the last
    ``holdout`` of the (last) folder's shards) and as 1 vs 3 ``opponent`` over ``deal_sets`` deal
    sets (in ``workers`` processes).

    ``done``: points of an earlier call (its returned rows, say read back from its JSON) — sizes
    already there are not fitted again, and a point of other settings (:data:`CURVE_SETTINGS`) is
    a :class:`~cf_env.ConfigError`. ``on_row`` gets all rows so far after each new point (to save
    them as they come)."""
    import copy

    start = start if start is not None else WarmStart()
    init, imitate_agent = start.init, start.imitate
    temperature, hidden, seed, action_head = how.temperature, how.hidden, how.seed, how.action_head
    if imitate_agent and init:
        raise ConfigError("imitate and init both choose the starting network: give one")
    config = label_rules(folder)
    folders = [str(folder)] if isinstance(folder, (str, Path)) else [str(f) for f in folder]
    settings = {"labels_from": folders, "holdout": holdout, "temperature": temperature, "init": init,
                "imitate": imitate_agent, "imitation_games": start.games if imitate_agent else 0,
                "imitation_epochs": start.epochs if imitate_agent else 0, "epochs": how.epochs,
                "learning_rate": how.learning_rate, "hidden": list(hidden), "action_head": action_head, "seed": seed,
                "opponent": opponent, "deal_sets": deal_sets}
    teacher = _teachers(folders, holdout)
    rows = [dict(r) for r in done]
    for r in rows:
        differ = [k for k in CURVE_SETTINGS if r.get(k) != settings[k]]
        if differ:
            k = differ[0]
            raise ConfigError(f"an earlier point (size {r.get('size')}) has {k} = {r.get(k)!r}, this curve {k} = "
                              f"{settings[k]!r}: continue it with the same settings, or write another file")
        r.setdefault("teacher", teacher)  # points saved before rows named their teacher: the same folders'
    have = {r["size"] for r in rows}
    warm: ActorCritic | None = None
    for size in sizes:
        if size in have:
            continue
        train, test = split_labels(folder, holdout, limit=size, temperature=temperature)
        network: str | ActorCritic | None = init
        if imitate_agent:
            if warm is None:
                warm, _ = imitate(imitate_agent, config, start.games, start.epochs, hidden, seed,
                                  progress=progress, action_head=action_head)
            network = copy.deepcopy(warm)
        model, stats = fit(train, config, how, init=network, test=test, progress=progress)
        last = stats["history"][-1]
        row = {"size": size, **settings, "teacher": teacher, "labels": len(train["ret"]),
               "test_labels": len(test["ret"]),
               "fit_seconds": stats["seconds"], "test_agreement": last["test_agreement"],
               "test_regret": last.get("test_regret"), "train_agreement": last["train_agreement"],
               **{f"vs_{opponent}_{k}": v
                  for k, v in strength(model, config, opponent, deal_sets, seed, workers).items()}}
        rows.append(row)
        have.add(size)
        if on_row is not None:
            on_row(rows)
        if progress:
            print(json.dumps(row))
    return rows


def plot_curve(rows: list[dict[str, Any]], path: str | Path, opponent: str = "heuristic",
               teacher_agreement: float | None = None, references: dict[str, float] | None = None) -> None:
    """Held-out agreement (left axis) and win rate with its interval (right axis) against labels,
    one line each per teacher and learning rate the rows hold (rows without a win rate against
    ``opponent`` are left out); ``references``: win rates to draw as dashed lines (name: rate)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = f"vs_{opponent}_win_rate"
    rows = [r for r in rows if key in r]
    if not rows:
        raise ConfigError(f"no learning-curve point has a win rate against {opponent}: plot with the opponent "
                          f"its points were measured against")
    fig, left = plt.subplots(figsize=(7, 4))
    right = left.twinx()
    def group(r: dict[str, Any]) -> tuple[str, float | None]:
        return str(r.get("teacher", "")), r.get("learning_rate")

    groups = sorted({group(r) for r in rows}, key=lambda g: (g[0], g[1] is None, g[1] or 0.0))
    teachers, rates = {g[0] for g in groups}, {g[1] for g in groups}
    for k, (teacher, lr) in enumerate(groups):  # one line per teacher and learning rate
        part = sorted((r for r in rows if group(r) == (teacher, lr)), key=lambda r: r["labels"])
        tags = ([teacher] if len(teachers) > 1 and teacher else []) + \
               ([f"lr {lr:g}"] if len(rates) > 1 and lr is not None else [])
        tag = f" ({', '.join(tags)})" if tags else ""
        style, alpha = ("o-", "s-", "D--", "^:")[k % 4], max(0.3, 1.0 - 0.35 * k)
        x = [r["labels"] for r in part]
        left.plot(x, [r["test_agreement"] for r in part], style, color="tab:blue", alpha=alpha,
                  label=f"held-out agreement{tag}")
        rate = [r[key] for r in part]
        lo = [r[key] - r[f"{key}_ci95"][0] for r in part]
        hi = [r[f"{key}_ci95"][1] - r[key] for r in part]
        right.errorbar(x, rate, yerr=[lo, hi], fmt=style, color="tab:red", capsize=3, alpha=alpha,
                       label=f"1 vs 3 {opponent}{tag}")
    if teacher_agreement is not None:
        left.axhline(teacher_agreement, color="tab:blue", ls=":", label="teacher's self-agreement")
    left.set_xscale("log")
    left.set_xlabel("labels")
    left.set_ylabel("agreement with the teacher", color="tab:blue")
    x = [min(r["labels"] for r in rows)]
    if references:  # room above the highest line for its name
        low, high = right.get_ylim()
        right.set_ylim(low, max(high, max(references.values()) + 0.02 * (high - low) + 0.01))
    for k, (name, value) in enumerate((references or {}).items()):
        right.axhline(value, color="tab:red", ls="--", lw=0.8, alpha=0.4 + 0.3 * k)
        right.annotate(name, (x[0], value), fontsize=7, color="tab:red", va="bottom")
    right.set_ylabel(f"win rate, 1 vs 3 {opponent} (95% CI)", color="tab:red")
    fig.legend(loc="lower right", bbox_to_anchor=(0.88, 0.14), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _reference(item: str) -> tuple[str, float]:
    """``--reference NAME=RATE``: a named win rate to draw on the plot."""
    name, _, rate = item.rpartition("=")
    try:
        if name:
            return name, float(rate)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{item!r}: write NAME=RATE with a win rate such as goal=0.35")


def main(argv: Sequence[str] | None = None) -> None:
    """Measure a learning curve (``curve``) and draw curves (``plot``)."""
    parser = argparse.ArgumentParser(prog="python -m lab.distill_curve", description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("curve", help="fit one network per label count and measure each")
    p.add_argument("--labels", required=True, nargs="+",
                   help="folders of label shards, one rule set (read in this order; the held-out shards are the "
                        "last folder's)")
    p.add_argument("--sizes", type=int, nargs="+", required=True)
    p.add_argument("--temperature", type=float, default=0.02, help="0: the teacher's choice; else softmax(q/T)")
    p.add_argument("--init", default=None, help="start from this checkpoint (zoo:NAME or a path); default scratch")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=3e-4, help="Adam's, annealed linearly to 0")
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="the network's layer widths")
    p.add_argument("--action-head", type=int, default=0, help="width of an action-scoring head (0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--deal-sets", type=int, default=100, help="strength: deal sets of 1 vs 3 --opponent")
    p.add_argument("--opponent", default="heuristic", help="strength: the agent spec in the other seats")
    p.add_argument("--workers", type=int, default=1, help="strength: processes playing the deal sets")
    p.add_argument("--imitate", default=None,
                   help="first fit the network to this agent's own play (e.g. heuristic); not with --init")
    p.add_argument("--imitation-games", type=int, default=1000)
    p.add_argument("--imitation-epochs", type=int, default=4)
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--holdout", type=float, default=0.1, help="the last folder's last shards' share kept out")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", default=None,
                   help="the points, written after each one; an existing file is continued (its sizes are not "
                        "fitted again)")
    p.add_argument("--plot", default=None)
    drawn = sub.add_parser("plot", help="draw the points of one or more curve --json files on one plot")
    drawn.add_argument("--json", nargs="+", required=True, help="curve --json files (their points, one line per "
                                                                "teacher and learning rate)")
    drawn.add_argument("--opponent", default="heuristic", help="the points' opponent (their win rates)")
    drawn.add_argument("--out", required=True, help="the image to write (PNG)")
    for q in (p, drawn):
        q.add_argument("--reference", nargs="+", default=[], metavar="NAME=RATE", type=_reference,
                       help="win rates drawn as dashed lines on the plot (e.g. goal=0.35)")
    args = parser.parse_args(argv)
    if getattr(args, "imitate", None) and args.init:
        parser.error("--imitate and --init both choose the starting network: give one")
    references = dict(args.reference)
    if args.command == "plot":
        points = [row for f in args.json for row in json.loads(Path(f).read_text())]
        plot_curve(points, args.out, opponent=args.opponent, references=references)
        return
    torch.set_num_threads(max(1, args.torch_threads))
    out = Path(args.json) if args.json else None
    done = json.loads(out.read_text()) if out is not None and out.is_file() else []

    def save(rows: list[dict[str, Any]]) -> None:
        if out is not None:
            atomic_write(out, lambda f: f.write(json.dumps(rows, indent=2).encode()))

    how = FitSettings(temperature=args.temperature, epochs=args.epochs, learning_rate=args.learning_rate,
                      hidden=tuple(args.hidden), seed=args.seed, action_head=args.action_head)
    start = WarmStart(args.init, args.imitate, args.imitation_games, args.imitation_epochs)
    rows = learning_curve(args.labels, args.sizes, how, args.deal_sets, start, opponent=args.opponent,
                          holdout=args.holdout, workers=args.workers, progress=not args.no_progress, done=done,
                          on_row=save)
    save(rows)
    if args.plot:
        plot_curve(rows, args.plot, opponent=args.opponent, references=references)


if __name__ == "__main__":
    main()
