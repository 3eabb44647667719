"""Behaviour cloning of the heuristic agent: the PPO trainer's optional warm start.

The policy head learns the heuristic's choices (cross-entropy) and the value head its discounted
returns, over ``cfg.bc_games`` whole games the heuristic plays against itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch
from torch import nn

from agents import load
from agents.torch_policy import ActorCritic
from cf_env import RulesConfig, raw_env
from training.config import NetworkTrainerConfig
from training.optim import descend

__all__ = ["behaviour_clone", "discount_per_seat"]


def discount_per_seat(values: list[float], seats: Iterable[list[int]], gamma: float) -> None:
    """Turn per-decision rewards into discounted returns in place, along each seat's own
    decisions (``seats``: per seat, the indices of its decisions in ``values``, in order)."""
    for idxs in seats:
        g = 0.0
        for k in reversed(idxs):
            g = values[k] + gamma * g
            values[k] = g


def behaviour_clone(model: ActorCritic, optimizer: torch.optim.Optimizer, rules: RulesConfig,
                    cfg: NetworkTrainerConfig, rng: np.random.Generator, torch_gen: torch.Generator,
                    progress: bool = True) -> tuple[dict[str, float], int]:
    """Imitate the heuristic agent (policy) and fit its discounted returns (value); returns the
    statistics and the env decisions played. Trains on the model's device."""
    from tqdm.auto import tqdm

    env_steps = 0
    teacher = load("heuristic", rules)
    env = raw_env(config=rules, reward=cfg.reward, points_scale=cfg.points_scale)
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    for _ in tqdm(range(cfg.bc_games), desc="bc data", unit="game", disable=not progress, leave=False):
        env.reset(seed=int(rng.integers(2**63)))
        per_seat: dict[int, list[int]] = {s: [] for s in range(rules.num_players)}
        while not env.game_over:
            seat = env.agent_name_mapping[env.agent_selection]
            o = env.observe(env.agent_selection)
            a = teacher.act(o, rng)
            per_seat[seat].append(len(obs_l))
            obs_l.append(o["observation"])
            mask_l.append(o["action_mask"].astype(bool))
            act_l.append(a)
            ret_l.append(0.0)
            env.step(a)
            env_steps += 1
            for s, idxs in per_seat.items():
                if idxs:
                    ret_l[idxs[-1]] += env.rewards[env.possible_agents[s]]
        discount_per_seat(ret_l, per_seat.values(), cfg.gamma)
    dev = next(model.parameters()).device
    obs = torch.from_numpy(np.stack(obs_l)).to(dev)
    mask = torch.from_numpy(np.stack(mask_l)).to(dev)
    act = torch.tensor(act_l, device=dev)
    ret = torch.tensor(ret_l, dtype=torch.float32, device=dev)
    n = len(act_l)
    mb = 1024
    ce_hist = []
    for _ in range(cfg.bc_epochs):
        perm = torch.randperm(n, generator=torch_gen).to(dev)
        for start in range(0, n, mb):
            j = perm[start:start + mb]
            logits, value = model(obs[j], mask[j])
            ce = nn.functional.cross_entropy(logits, act[j])
            v = 0.5 * ((value - ret[j]) ** 2).mean()
            loss = ce + cfg.vf_coef * v
            descend(optimizer, loss, model, cfg.max_grad_norm)
            ce_hist.append(ce.item())
    with torch.no_grad():
        logits, _ = model(obs[:20000], mask[:20000])
        agree = float((logits.argmax(-1) == act[:20000]).float().mean())
    stats = {"bc_samples": float(n), "bc_cross_entropy": float(np.mean(ce_hist[-10:])), "bc_agreement": agree}
    return stats, env_steps
