"""Distil a network's (or an ensemble's) policy into one network, on the states of label shards.

The search's labels give each state a target from the teacher's values; here the target is what
``--teacher`` (a checkpoint, typically ``chickenfoot ensemble``'s) plays there instead, mixed with
the search's target by ``--mix`` (1: the teacher network's policy alone). The student is fitted
by :func:`training.distill.fit` as any distillation is, and its held-out figures are the search's
(agreement with the search's choice, the search's value its choices lose)::

    python -m lab.policy_distill --teacher ENSEMBLE.pt --init START.pt --out OUT.pt \
        --hidden 1024,1024 --trunk layernorm --epochs 3 --learning-rate 3e-4 --labels F1 F2 ...

What it measured (the six-network ``zoo:strong-2p`` distilled into its 1024x1024 member) is in
``lab/results/distill-2p.md`` ("A single network distilled from the ensemble").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import numpy as np
import torch

from agents import checkpoint_file
from agents.checkpoint import PRECISIONS, load_checkpoint
from agents.torch_policy import ActorCritic, PolicyEnsemble, TorchAgent
from training.distill import FitSettings, fit, label_rules, save_model, split_labels


@torch.no_grad()
def policy_targets(model: ActorCritic | PolicyEnsemble, obs: object, mask: np.ndarray,
                   batch: int = 16384) -> np.ndarray:
    """``model``'s move probabilities ``(N, A)`` on observations ``obs`` (an array or
    :class:`training.distill.PackedObs`, indexed by rows) with legal masks ``mask``."""
    model.eval()
    out = np.zeros(mask.shape, np.float32)
    for s in range(0, len(mask), batch):
        rows = np.arange(s, min(len(mask), s + batch))
        logits, _ = model(torch.as_tensor(obs[rows]), torch.as_tensor(mask[rows]))  # type: ignore[index]
        out[rows] = torch.softmax(logits, dim=-1).numpy()
    return out


def parser() -> argparse.ArgumentParser:
    """The command line :func:`main` reads."""
    parser = argparse.ArgumentParser(prog="python -m lab.policy_distill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", nargs="+", required=True, help="Label folders (the last one's last shards held out).")
    parser.add_argument("--teacher", required=True, help="The checkpoint (a path or zoo:NAME) whose policy is the target.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--init", default=None, help="The checkpoint the student starts from [default: a new one].")
    parser.add_argument("--mix", type=float, default=1.0, help="The teacher network's share of the target.")
    parser.add_argument("--temperature", type=float, default=0.03, help="The search target's temperature.")
    parser.add_argument("--holdout", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--hidden", default="1024,1024")
    parser.add_argument("--trunk", default="layernorm", choices=["tanh", "layernorm"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument("--precision", default="float32", choices=PRECISIONS, help="How the weights are stored.")
    return parser


def main(argv: Sequence[str] | None = None) -> dict:
    args = parser().parse_args(argv)
    if not 0.0 <= args.mix <= 1.0:
        parser().error(f"--mix is the teacher network's share, in [0, 1], got {args.mix}")
    torch.set_num_threads(args.torch_threads)
    config = label_rules(args.labels)
    train, test = split_labels(args.labels, args.holdout, temperature=args.temperature)
    teacher_path = checkpoint_file(args.teacher)
    teacher = TorchAgent.from_checkpoint(teacher_path, config).model
    members = load_checkpoint(teacher_path).get("train_config", {}).get("ensemble")
    train["target"] = args.mix * policy_targets(teacher, train["obs"], train["mask"]) + (1 - args.mix) * train["target"]
    settings = FitSettings(temperature=args.temperature, epochs=args.epochs, learning_rate=args.learning_rate,
                           hidden=tuple(int(w) for w in args.hidden.split(",")), trunk=args.trunk, seed=args.seed)
    model, stats = fit(train, config, settings, init=args.init, test=test, progress=False)
    stats |= {"teacher": args.teacher, "mix": args.mix, "init": args.init, "learning_rate": args.learning_rate}
    if members:  # the teacher's members, so that the student's file says what it learnt from
        stats["teacher_ensemble"] = members
    save_model(model, config, args.out, stats, precision=args.precision)
    print(json.dumps({k: v for k, v in stats.items() if k != "history"} | {"end": stats["history"][-1]}, indent=2))
    return stats


if __name__ == "__main__":
    main()
