"""The cost of the action-scoring policy head (``agents.torch_policy.ActionScorer``) against the
linear head alone, same trunk: a distillation training step (forward, soft-target cross-entropy,
value loss, backward, Adam) on a minibatch, and inference on a batch of positions (what
``chickenfoot eval`` and the lockstep collection run). Real 4-player double-nine observations.
Runs alternate between the two networks; prints JSON with milliseconds per call (medians over
``--runs``), the ratios within each run (median), and each network's weights.

    python -m lab.benchmarks.policy_head --runs 5 --threads 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.torch_policy import ActorCritic, observation_scale
from cf_env import Game, GameEncoder, RulesConfig


def positions(config: RulesConfig, count: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` observations and masks of random-play positions (several games)."""
    enc, rng = GameEncoder(config), np.random.default_rng(seed)
    obs, masks = [], []
    game = Game(config, seed=seed)
    while len(obs) < count:
        if game.is_over:
            game = Game(config, seed=int(rng.integers(1 << 31)))
            continue
        obs.append(enc.encode(game, game.current_player))
        masks.append(enc.mask(game.legal_bits).astype(bool))
        game.apply(int(rng.choice(game.legal_actions())))
    return torch.as_tensor(np.stack(obs)), torch.as_tensor(np.stack(masks))


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1000


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=30, help="calls per timing")
    parser.add_argument("--minibatch", type=int, default=256, help="fit's minibatch")
    parser.add_argument("--batch", type=int, default=4096, help="positions per inference call")
    parser.add_argument("--width", type=int, default=64, help="the action head's width")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = RulesConfig()
    obs, mask = positions(config, args.batch)
    target = torch.softmax(torch.randn(mask.shape).masked_fill(~mask, -1e9), -1)
    torch.manual_seed(0)
    nets = {name: ActorCritic(obs.shape[1], config.num_actions, (256, 256), obs_scale=observation_scale(config),
                              action_head=width, max_pip=config.max_pip, num_players=config.num_players)
            for name, width in (("linear", 0), ("action_head", args.width))}

    def step(net: ActorCritic, optimizer: torch.optim.Optimizer) -> None:
        j = slice(0, args.minibatch)
        logits, value = net(obs[j], mask[j])
        loss = -(target[j] * torch.log_softmax(logits, -1).masked_fill(~mask[j], 0)).sum(-1).mean()
        loss = loss + 0.25 * (value ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def infer(net: ActorCritic) -> None:
        with torch.no_grad():
            net(obs, mask)

    optimizers = {name: torch.optim.Adam(net.parameters(), lr=1e-5) for name, net in nets.items()}
    rows = []
    for _ in range(args.runs):
        row = {}
        for name, net in nets.items():
            row[f"{name}_train_step_ms"] = timed(lambda n=net, o=optimizers[name]: step(n, o), args.repeats)
            row[f"{name}_inference_ms"] = timed(lambda n=net: infer(n), max(1, args.repeats // 6))
        rows.append(row)
    med = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
    out = {"runs": args.runs, "threads": args.threads, "minibatch": args.minibatch, "batch": args.batch,
           "width": args.width, **med,
           "train_step_ratio": round(statistics.median(r["action_head_train_step_ms"] / r["linear_train_step_ms"]
                                                       for r in rows), 3),
           "inference_ratio": round(statistics.median(r["action_head_inference_ms"] / r["linear_inference_ms"]
                                                      for r in rows), 3),
           "weights": {name: sum(p.numel() for p in net.parameters()) for name, net in nets.items()}}
    print(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
