"""Deep Monte-Carlo self-play (DouZero's DMC; Zha et al., 2021) on the batched engine.

The network is read as a dueling Q-network (Wang et al., 2016): ``Q(s, a) = V(s) + A(s, a) -
mean A(s, .)`` over the legal actions, ``V`` the value head and ``A`` the policy logits, which the
linear policy head, and the action head when the network has one (the scores of each legal
action's features: its tile, the end it matches, the arm or toe it opens, draw, pass;
:class:`agents.torch_policy.ActionScorer`), give over the observation (``dueling: max``: ``-
max A(s, .)`` instead of the mean, so that the greedy action's ``Q`` is ``V``). The argmax of
``Q`` is the argmax of the logits, the move the saved network plays, and a network started from a policy
(``init_checkpoint``) starts as that policy's greedy play; ``init_checkpoint: NAME:temperature=T``
divides its logits by ``T`` first, bringing their spread to the returns' (read as plain
action values, a distilled network's logits are several units apart while the returns of the
``win`` reward lie within 1, and a first run that fitted the taken actions' logits alone, from
``zoo:strong-4p``, drifted to the untrained actions and lost every game: lab/results/dmc.md).
Each update:

1. the actors play a rollout of ``num_envs`` games in lockstep (:class:`training.collectors`),
   the learner's seats epsilon-greedy on the argmax of ``Q``, the other seats drawn from the pool
   (the policy itself, its past snapshots, and ``pool_baselines``: the heuristic, ``zoo:`` networks);
2. every learner decision whose game has ended gets its Monte-Carlo return, the rewards to the end
   of the game along its seat's own decisions (:meth:`training.trajectories.Trajectories.monte_carlo`;
   a decision whose game goes on waits for a later rollout, nothing is bootstrapped);
3. ``Q(s, a)`` of the action taken is fitted to that return (mean squared error, Adam): the
   value head, the trunk and, through the mean, every legal action's logit learn from it. With
   ``conservative`` > 0 the loss adds that times ``logsumexp Q(s, .) - Q(s, a)`` over the legal
   actions (CQL, Kumar et al., 2020): actions the actors did not play cannot rise above the
   played ones on no evidence, which is how a greedy policy fitted on its own choices drifts.
   With ``freeze_trunk`` the trunk keeps its starting features and only the heads learn. With
   ``anchor`` > 0 the loss adds that times the mean squared distance of the legal actions'
   centred logits from those of the starting network (``init_checkpoint``, kept frozen beside
   it): the starting policy becomes a fixed prior, and the returns fit a penalised residual over
   it, which reorders its moves only where they disagree with it by more than the penalty.

The actors' policy is the argmax, the move the saved network plays (a checkpoint loads as any
other: ``chickenfoot eval runs/NAME/final.pt heuristic``), which is what PPO's sampled policy is
not (docs "Training"). ``reward: win`` fits the game's win share (DouZero's WP), ``points`` or
``relative`` each round's points (ADP). :class:`training.run.TrainingRun` gives it resume, Ctrl-C
safety, checkpoints and evaluation, as every trainer here.

Usage: ``chickenfoot dmc --config configs/dmc-smoke.yaml [--resume]``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from agents.torch_policy import ActorCritic
from training.collectors import VectorCollector
from training.config import DMCConfig
from training.optim import descend
from training.ppo import SelfPlayTrainer
from training.run import load_weights

__all__ = ["DMCTrainer", "anchor_distance", "dmc", "q_values"]


def q_values(logits: torch.Tensor, value: torch.Tensor, mask: torch.Tensor, dueling: str = "mean") -> torch.Tensor:
    """The dueling action values ``V(s) + A(s, a) - m(s)``, ``m`` the mean (``dueling="mean"``)
    or the maximum (``"max"``) of ``A`` over the legal actions (``mask``); an illegal action's
    value is meaningless (its logit is masked). With the maximum, the greedy action's value is
    ``V(s)`` itself, the value of the greedy policy's state."""
    if dueling not in ("mean", "max"):
        raise ValueError(f"dueling must be 'mean' or 'max', got {dueling!r}")
    legal = mask.bool()
    advantage = logits.masked_fill(~legal, 0.0)
    if dueling == "max":
        centre = logits.masked_fill(~legal, float("-inf")).amax(1, keepdim=True)
    else:
        centre = advantage.sum(1, keepdim=True) / legal.sum(1, keepdim=True).clamp_min(1)
    return value[:, None] + advantage - centre


def anchor_distance(logits: torch.Tensor, prior: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per state, the mean over the legal actions (``mask``) of the squared difference between
    ``logits`` and ``prior``'s logits, each centred on its legal mean: zero whenever the two give
    the same advantages (a constant shift, which changes no Q-value's order, costs nothing)."""
    legal = mask.bool()
    diff = (logits - prior).masked_fill(~legal, 0.0)
    count = legal.sum(1, keepdim=True).clamp_min(1)
    centred = (diff - diff.sum(1, keepdim=True) / count).masked_fill(~legal, 0.0)
    return (centred ** 2).sum(1) / count.squeeze(1)


class DMCTrainer(SelfPlayTrainer):
    """Deep Monte-Carlo (see the module docstring): :class:`training.ppo.SelfPlayTrainer` with
    epsilon-greedy actors on the network's logits and a Monte-Carlo regression of them."""

    trainer = "dmc"

    def __init__(self, cfg: DMCConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        self.cfg: DMCConfig = cfg
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        if isinstance(self.collector, VectorCollector):  # the validator keeps return_horizon: round to it
            self.collector.mark_rounds = cfg.return_horizon == "round"
        self.anchor: ActorCritic | None = None
        if cfg.anchor:  # the starting network, frozen (on resume too: reloaded from init_checkpoint)
            self.anchor = copy.deepcopy(self.model)
            load_weights(self.anchor, self.rules, cfg.init_checkpoint)
            self.anchor.eval().requires_grad_(False)

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The argmax of ``Q`` over the legal actions, or with probability epsilon a uniformly random
        legal one; the chosen action's ``Q`` as its value (the buffer's log-probability column is 0)."""
        dev = self.device
        legal_t = torch.from_numpy(mask).to(dev)
        logits, value = self.model(torch.from_numpy(obs).to(dev), legal_t)
        actions = logits.argmax(dim=1).cpu().numpy()  # the argmax of Q: V and the mean (or max) are the state's
        q = q_values(logits, value, legal_t, self.cfg.dueling).cpu().numpy()
        explore = self.rng.random(len(actions)) < self.cfg.epsilon_at(self.global_step)
        if explore.any():
            legal = mask[explore]
            pick = (self.rng.random(legal.shape) * legal).argmax(axis=1)  # uniform over the legal actions
            actions[explore] = pick
        values = q[np.arange(len(actions)), actions].astype(np.float32)
        return actions, np.zeros(len(actions), np.float32), values

    def learn(self) -> dict[str, float]:
        cfg = self.cfg
        idx, returns = self.buffer.monte_carlo(cfg.gamma, cfg.return_horizon)
        buf = self.buffer
        obs, mask = torch.from_numpy(buf.obs[idx]).to(self.device), torch.from_numpy(buf.mask[idx]).to(self.device)
        action = torch.from_numpy(buf.action[idx]).to(self.device)
        target = torch.from_numpy(returns).to(self.device)
        self.buffer = buf.carry_over_unfinished(cfg.return_horizon)
        n = len(idx)
        warmup = self.global_step < cfg.value_warmup_steps  # only the value head learns
        frozen = warmup or cfg.freeze_trunk  # the trunk gets no gradient
        prior = None  # the starting network's logits, once an update: it does not learn
        if n and self.anchor is not None and not warmup:
            with torch.no_grad():
                prior = self.anchor(obs, mask)[0]
        stats: dict[str, list[float]] = {"q_loss": [], "q_mean": [], "conservative": [], "anchor": []}
        if n:
            mb = max(1, n // cfg.num_minibatches)
            for _epoch in range(cfg.update_epochs):
                perm = torch.randperm(n, generator=self.torch_gen).to(self.device)
                for start in range(0, n, mb):
                    j = perm[start:start + mb]
                    conservative = anchored = torch.zeros(())
                    with torch.set_grad_enabled(not frozen):
                        features = self.model.features(obs[j])
                    if warmup:  # V(s) alone, on frozen features: the other parameters get no gradient
                        q = self.model.value(features).squeeze(-1)
                    else:
                        logits, value = self.model.masked_heads(obs[j], features, mask[j])
                        q_all = q_values(logits, value, mask[j], cfg.dueling)
                        q = q_all.gather(1, action[j][:, None]).squeeze(1)
                        if cfg.conservative:  # CQL: the legal actions' soft maximum pushed down to the played one
                            soft_max = torch.logsumexp(q_all.masked_fill(~mask[j].bool(), float("-inf")), dim=1)
                            conservative = cfg.conservative * (soft_max - q).mean()
                        if prior is not None:  # the residual over the starting network, penalised
                            anchored = cfg.anchor * anchor_distance(logits, prior[j], mask[j]).mean()
                    q_loss = 0.5 * ((q - target[j]) ** 2).mean()
                    descend(self.optimizer, q_loss + conservative + anchored, self.model, cfg.max_grad_norm)
                    stats["q_loss"].append(q_loss.item())
                    stats["conservative"].append(conservative.item())
                    stats["anchor"].append(anchored.item())
                    stats["q_mean"].append(q.mean().item())
        out = {k: float(np.mean(v)) if v else float("nan") for k, v in stats.items()}
        out |= {"batch": float(n), "waiting": float(self.buffer.size),
                "return_mean": float(returns.mean()) if n else float("nan"),
                "epsilon": self.cfg.epsilon_at(self.global_step), "value_warmup": float(warmup)}
        return out


def dmc(cfg: DMCConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
    """Train with ``cfg``; returns a summary (paths, step counts, throughput, final eval, and
    ``stop_reason``), as :func:`training.ppo.train` does."""
    return DMCTrainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
