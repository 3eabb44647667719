"""Which policy network fits the search's labels: a quick scan of trunks at one label count.

Each kind of network is fitted from scratch, by cross-entropy to the soft targets alone (no value
head, no warm start: the policy's fit is the question), to the same training labels, and after
each epoch it reports its agreement with the teacher's choice, the same on the *clear* labels
(the teacher's best two actions more than ``--clear`` apart in value: decisions its worlds'
noise does not decide), and the teacher's value its choices lose (regret), on the first
20,000 training labels and on the held-out shards::

    python -m lab.trunk_scan --labels RUN/s256 RUN/s256b --shards 170 --epochs 8 \
        --kinds tanh256 relu256 relu512x3 ln512x3 ln1024x2

Seconds are a minute or two a kind on 300k labels and one torch thread. What it measured is in
``lab/results/distill-2p.md`` ("A stronger teacher, a weighted target and a layernorm trunk").
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.torch_policy import observation_scale
from training.distill import choice_regret, label_rules, read_shards, split_paths
from training.labels import soft_targets

__all__ = ["KINDS", "main", "scan"]

#: name: (hidden widths, activation, layer norm)
KINDS: dict[str, tuple[tuple[int, ...], type[nn.Module], bool]] = {
    "tanh256": ((256, 256), nn.Tanh, False),
    "relu256": ((256, 256), nn.ReLU, False),
    "relu512x3": ((512, 512, 512), nn.ReLU, False),
    "tanh512x3": ((512, 512, 512), nn.Tanh, False),
    "ln256": ((256, 256), nn.ReLU, True),
    "ln512x3": ((512, 512, 512), nn.ReLU, True),
    "ln1024x2": ((1024, 1024), nn.ReLU, True),
}


class _Policy(nn.Module):
    def __init__(self, obs_dim: int, actions: int, widths: Sequence[int], act: type[nn.Module], norm: bool,
                 scale: np.ndarray) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_dim
        for h in widths:
            layers += [nn.Linear(width, h)] + ([nn.LayerNorm(h)] if norm else []) + [act()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, actions)
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.policy(self.trunk(obs / self.scale)).masked_fill(~mask, -1e9)


def _gaps(labels: dict[str, np.ndarray]) -> np.ndarray:
    ordered = np.sort(np.where(labels["mask"], labels["q"], -np.inf), axis=1)[:, ::-1]
    return ordered[:, 0] - ordered[:, 1]


@torch.no_grad()
def _measure(net: _Policy, labels: dict[str, np.ndarray], clear: np.ndarray) -> dict[str, float]:
    picks = torch.cat([net(torch.from_numpy(labels["obs"][i:i + 4096]), torch.from_numpy(labels["mask"][i:i + 4096]))
                       .argmax(-1) for i in range(0, len(clear), 4096)]).numpy()
    agree = picks == labels["choice"]
    return {"agreement": round(float(agree.mean()), 4),
            "clear_agreement": round(float(agree[clear].mean()), 4) if clear.any() else None,
            "regret": round(choice_regret(picks, labels), 5)}


def scan(folders: Sequence[str | Path], kinds: Sequence[str], shards: int | None = None, epochs: int = 8,
         holdout: float = 0.05, temperature: float = 0.03, learning_rate: float = 1e-3, clear: float = 0.1,
         seed: int = 0) -> list[dict[str, Any]]:
    """One row per kind and epoch (see the module docstring); the held-out shards are the last
    folder's last ``holdout`` share, as ``chickenfoot labels fit`` holds them out."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {sorted(KINDS)}")
    paths = [Path(f) for f in folders]
    config = label_rules(paths)
    train_paths, test_paths = split_paths(paths, holdout)
    train = read_shards(train_paths[:shards], None)
    test = read_shards(test_paths, None)
    seen = {k: v[:20_000] for k, v in train.items()}
    obs, mask = torch.from_numpy(train["obs"]), torch.from_numpy(train["mask"])
    target = torch.from_numpy(soft_targets(train["q"], train["mask"], train["choice"], temperature))
    rows = []
    for kind in kinds:
        widths, act, norm = KINDS[kind]
        torch.manual_seed(seed)
        net = _Policy(obs.shape[1], mask.shape[1], widths, act, norm, observation_scale(config))
        optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
        n, minibatch = len(obs), 256
        steps = epochs * max(1, n // minibatch)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k, total=steps: max(0.0, 1 - k / total))
        start = time.perf_counter()
        for epoch in range(epochs):
            order = torch.randperm(n)
            for s in range(0, n - minibatch + 1, minibatch):
                j = order[s:s + minibatch]
                logp = torch.log_softmax(net(obs[j], mask[j]), -1).masked_fill(~mask[j], 0.0)
                loss = -(target[j] * logp).sum(-1).mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                optimizer.step()
                schedule.step()
            rows.append({"kind": kind, "labels": n, "epoch": epoch + 1,
                         "train": _measure(net, seen, _gaps(seen) >= clear),
                         "test": _measure(net, test, _gaps(test) >= clear),
                         "seconds": round(time.perf_counter() - start, 1)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.trunk_scan", description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", nargs="+", required=True, help="label folders (the last one's shards held out)")
    parser.add_argument("--kinds", nargs="+", default=["tanh256", "ln512x3"], choices=sorted(KINDS))
    parser.add_argument("--shards", type=int, default=None, help="train on the first N training shards")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--holdout", type=float, default=0.05)
    parser.add_argument("--torch-threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    scan(args.labels, args.kinds, args.shards, args.epochs, args.holdout)


if __name__ == "__main__":
    main()
