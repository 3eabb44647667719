"""Self-play PPO for Chicken Foot with action masking and an opponent pool.

Reads top to bottom like CleanRL's ``ppo.py`` (plus masking and turn-based credit): the
:class:`Trainer` builds everything in ``__init__`` (seeding, the model and optimiser, the
opponent pool, the collector of its backend, the transition buffer; a checkpoint to resume), and
:meth:`Trainer.run` (:class:`training.run.TrainingRun`'s loop, the same for every trainer) runs it:

1. a TensorBoard writer with the config as a table;
2. the warm start: ``init_checkpoint`` weights, or behaviour cloning of the heuristic
   (:mod:`training.bc`);
3. per update: collect a rollout over ``num_envs`` games in lockstep (:mod:`training.collectors`),
   GAE along each seat's own transitions (:mod:`training.trajectories`), the PPO epochs
   (:meth:`Trainer.learn`), logging, evaluation, a snapshot into the pool (:mod:`training.pool`),
   a checkpoint.

Usage: ``chickenfoot train --config configs/default.yaml [--resume]``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.checkpoint import CheckpointError
from agents.torch_policy import TorchAgent
from training.collectors import AecCollector, VectorCollector
from training.config import PPOConfig, SelfPlayConfig
from training.critic import make_critic
from training.evaluate import win_rates
from training.pool import OpponentPool
from training.run import NetworkRun, RunExistsError, StopSignals
from training.trajectories import Trajectories

__all__ = ["RunExistsError", "SelfPlayTrainer", "Trainer", "Trajectories", "train"]


class SelfPlayTrainer(NetworkRun):
    """A network that learns from its own games (PPO here, Deep Monte-Carlo in :mod:`training.dmc`).
    The run's life (folder, seeding, network, checkpoints, resume, warm start, stop signals, the
    loop) is :class:`training.run.NetworkRun`'s; this class adds the opponent pool, the collector
    of its backend, the transition buffer and the steps of the loop (:meth:`step`: a rollout, then
    :meth:`learn`). A learner writes :meth:`act` (the actors' choice), :meth:`learn` and, for state
    of its own, :meth:`prepare`, :meth:`learner_state` and :meth:`load_learner_state`."""

    budget_key = "total_steps"
    unit = "learner step"

    def __init__(self, cfg: SelfPlayConfig, resume: bool = False, progress: bool = True,
                 overwrite: bool = False) -> None:
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        self.cfg: SelfPlayConfig = cfg
        self.global_step = 0  # learner decisions trained on
        # --- opponents, games and the learner's transitions
        self.pool = OpponentPool(self.rules, cfg.pool_baselines, cfg.pool_size, cfg.self_play_prob)
        self.prepare()
        if resume:
            self.resume()
            self.refuse_complete()
        backend = VectorCollector if cfg.backend == "vector" else AecCollector
        self.collector = backend(self.rules, cfg.num_envs, cfg.reward, cfg.points_scale, self.pool, self.rng,
                                 hidden=self.reads_hidden)
        hidden_dim = self.rules.num_players * self.rules.num_tiles if self.reads_hidden else 0
        self.buffer = Trajectories(cfg.num_envs, self.rules.num_players, self.encoder.size, self.rules.num_actions,
                                   hidden_dim)

    def prepare(self) -> None:
        """What the learner builds before a resume reads its state (PPO: its critic)."""

    @property
    def reads_hidden(self) -> bool:
        """Whether the collector gathers each seat's hidden tiles for :meth:`act` and :meth:`learn`."""
        return False

    def act(self, obs: np.ndarray, mask: np.ndarray,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The actors' choices for a batch of learner decisions: actions, their log-probabilities
        and values (what the buffer keeps; :data:`training.collectors.Policy`)."""
        raise NotImplementedError

    def learn(self) -> dict[str, float]:
        """One update from :attr:`buffer` (then it keeps what the next rollout continues); its statistics."""
        raise NotImplementedError

    def set_learning_rate_fraction(self, fraction: float) -> None:
        """The schedule (``anneal_lr``): ``fraction`` of every learning rate."""
        self.optimizer.param_groups[0]["lr"] = fraction * self.cfg.learning_rate

    def learner_state(self) -> dict[str, Any]:
        """The learner's own state for ``--resume``, beside the update count and the pool."""
        return {}

    def load_learner_state(self, state: dict[str, Any]) -> None:
        """The state of :meth:`learner_state` (the whole trainer state is given)."""

    def on_fresh_start(self) -> None:
        """After the warm start of a new run (not a resumed one)."""

    # -------------------------------------------------------------- the run's state

    @property
    def train_step(self) -> int:
        return self.global_step

    @property
    def update(self) -> int:
        """Updates done (the loop's iterations)."""
        return self.iteration

    def trainer_state(self) -> dict[str, Any]:
        return {"update": self.update, "pool": self.pool.specs, **self.learner_state()}

    def load_trainer_state(self, state: dict[str, Any]) -> None:
        self.global_step = int(state["train_step"])
        self.iteration = int(state["update"])
        self.pool.specs = list(state["pool"])
        self.load_learner_state(state)

    # -------------------------------------------------------------- evaluation and the pool

    def evaluate_now(self) -> dict[str, float]:
        out = win_rates(TorchAgent(self.model, self.rules, name="policy", device=self.device), self.rules,
                        {opp: self.pool.agent(opp) for opp in self.cfg.eval_opponents}, self.cfg.eval_deal_sets)
        self.model.train()
        return out

    def snapshot(self) -> None:
        path = self.run_dir / "pool" / f"update_{self.update:06d}.pt"
        self.save_weights(path)
        if self.pool.add_snapshot(str(path)) is not None:
            self.collector.forget_unseated()

    # -------------------------------------------------------------- the loop's steps (TrainingRun.run)

    @property
    def spent(self) -> int:
        return self.global_step

    @property
    def eval_every(self) -> int:
        return self.cfg.eval_every

    @property
    def log_step(self) -> int:
        return self.global_step

    def begin(self, writer: Any, stop: StopSignals) -> None:
        fresh = not self.started
        for k, v in self.warm_start().items():  # behaviour cloning's statistics, when it ran
            writer.add_scalar(f"losses/{k}", v, 0)
        if fresh:
            self.on_fresh_start()
        self.collector.start()
        self._since = (time.time(), self.global_step, self.env_steps)  # this process's throughput counts from here

    def step(self, stop: StopSignals) -> dict[str, float]:
        """One update: a rollout of every game in lockstep, then :meth:`learn`."""
        cfg = self.cfg
        if cfg.anneal_lr:
            self.set_learning_rate_fraction(1.0 - self.global_step / cfg.total_steps)
        learner_steps, env_steps = self.collector.collect(self.act, self.buffer, cfg.rollout_steps)
        self.global_step += learner_steps
        self.env_steps += env_steps
        stats = {f"losses/{k}": v for k, v in self.learn().items()}
        sps, env_sps = self._throughput()
        stats |= {"charts/learning_rate": self.optimizer.param_groups[0]["lr"],
                  "charts/learner_steps_per_second": sps, "charts/env_steps_per_second": env_sps}
        wins, points = self.collector.episode_wins, self.collector.episode_points
        if wins:
            stats |= {"charts/win_rate_vs_pool": float(np.mean(wins[-200:])),
                      "charts/points_vs_pool": float(np.mean(points[-200:]))}
        return stats

    def record(self, stats: dict[str, float]) -> None:
        if self.update % self.cfg.snapshot_every == 0:
            self.snapshot()

    def _throughput(self) -> tuple[float, float]:
        """Learner and env steps per second in this process."""
        t0, steps, env_steps = self._since
        elapsed = max(time.time() - t0, 1e-9)
        return (self.global_step - steps) / elapsed, (self.env_steps - env_steps) / elapsed

    def postfix(self, stats: dict[str, float]) -> dict[str, Any]:
        return {"steps": self.global_step, "env_sps": f"{stats['charts/env_steps_per_second']:.0f}",
                **super().postfix(stats)}

    def summary(self) -> dict[str, Any]:
        sps, env_sps = self._throughput()
        return {"learner_steps": self.global_step, "updates": self.update, "env_steps_per_second": env_sps,
                "learner_steps_per_second": sps}


class Trainer(SelfPlayTrainer):
    """Self-play PPO (see the module docstring): :class:`SelfPlayTrainer` with the policy's samples
    as the actors' choices, a critic (:mod:`training.critic`) and the PPO update (:meth:`learn`)."""

    trainer = "ppo"

    def __init__(self, cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        self.cfg: PPOConfig = cfg
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)

    def prepare(self) -> None:
        cfg = self.cfg
        # the critic: the policy network's value head, or a strategy of the config's (training.critic)
        self.critic = make_critic(cfg.critic, cfg.critic_options, self.rules, self.encoder.size, tuple(cfg.hidden),
                                  cfg.critic_learning_rate or cfg.learning_rate, self.device)

    @property
    def reads_hidden(self) -> bool:
        return self.critic.reads_hidden

    def set_learning_rate_fraction(self, fraction: float) -> None:
        super().set_learning_rate_fraction(fraction)
        self.critic.set_learning_rate_fraction(fraction)

    def on_fresh_start(self) -> None:
        self.critic.start(self.model)

    def learner_state(self) -> dict[str, Any]:
        return {"critic_name": self.cfg.critic, **self.critic.state_dict()}

    def load_learner_state(self, state: dict[str, Any]) -> None:
        trained = state.get("critic_name", "shared" if "critic" not in state else "a separate critic")
        if trained != self.cfg.critic:
            raise CheckpointError(f"--resume: the checkpoint was trained with critic: {trained}, this config asks for "
                                  f"critic: {self.cfg.critic}; resume with the checkpoint's critic, or start a new run")
        self.critic.load_state_dict(state)

    # -------------------------------------------------------------- acting

    @torch.no_grad()
    def act(self, obs: np.ndarray, mask: np.ndarray,
            hidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actions sampled from the policy (which reads ``obs`` alone), their log-probabilities, and
        the critic's values (a critic that reads ``hidden`` is given it)."""
        dev = self.device
        observation = torch.from_numpy(obs).to(dev)
        logits, values = self.model(observation, torch.from_numpy(mask).to(dev))
        values = self.critic.value(observation, None if hidden is None else torch.from_numpy(hidden).to(dev), values)
        probs = torch.softmax(logits, dim=-1)
        # inverse-CDF sampling (an order of magnitude faster than torch.multinomial on CPU); u is kept
        # inside (0, 1) so the chosen action always has probability > 0, i.e. is legal
        cdf = probs.cumsum(dim=1)
        u = torch.rand(len(probs), 1, generator=self.torch_gen).clamp_(1e-6, 1 - 1e-6).to(dev) * cdf[:, -1:]
        actions = (cdf < u).sum(dim=1).clamp_max_(probs.shape[1] - 1)
        logp = torch.log(probs.gather(1, actions[:, None]).squeeze(1).clamp_min(1e-12))
        return actions.cpu().numpy(), logp.cpu().numpy(), values.cpu().numpy()

    # -------------------------------------------------------------- learning

    def learn(self) -> dict[str, float]:
        cfg = self.cfg
        idx, adv, ret = self.buffer.gae(cfg.gamma, cfg.gae_lambda)
        buf = self.buffer

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array).to(self.device)

        b_obs, b_mask = tensor(buf.obs[idx]), tensor(buf.mask[idx])
        b_act, b_logp, b_val = tensor(buf.action[idx]), tensor(buf.logp[idx]), tensor(buf.value[idx])
        b_adv, b_ret = tensor(adv), tensor(ret)
        b_hidden = tensor(buf.hidden[idx]) if self.critic.reads_hidden else None
        warmup = self.update < cfg.critic_warmup_updates  # the value alone: the policy's terms are left out
        self.buffer = self.buffer.carry_over()
        n = len(idx)
        mb = max(1, n // cfg.num_minibatches)
        stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(n, generator=self.torch_gen).to(self.device)
            for start in range(0, n, mb):
                j = perm[start:start + mb]
                logits, value = self.model(b_obs[j], b_mask[j])
                value = self.critic.value(b_obs[j], None if b_hidden is None else b_hidden[j], value)
                logp_all = torch.log_softmax(logits, dim=-1)
                new_logp = logp_all.gather(1, b_act[j][:, None]).squeeze(1)
                probs = logp_all.exp()
                entropy = -(probs * logp_all.masked_fill(~b_mask[j], 0.0)).sum(-1)
                ratio = (new_logp - b_logp[j]).exp()
                mb_adv = b_adv[j]
                if cfg.norm_adv and len(j) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                v_loss = 0.5 * ((value - b_ret[j]) ** 2).mean()
                if warmup:
                    loss = cfg.vf_coef * v_loss
                else:
                    loss = pg_loss - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                self.optimizer.zero_grad()
                self.critic.zero_grad()
                loss.backward()
                if not warmup or not self.critic.own_weights:  # a separate critic is trained alone in the warm-up
                    nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                    self.optimizer.step()
                self.critic.step(cfg.max_grad_norm)
                with torch.no_grad():
                    log_ratio = new_logp - b_logp[j]
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clipfrac"].append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
                stats["policy_loss"].append(pg_loss.item())
                stats["value_loss"].append(v_loss.item())
                stats["entropy"].append(entropy.mean().item())
            if cfg.target_kl and np.mean(stats["approx_kl"]) > cfg.target_kl:
                break
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        var = float(b_ret.var())
        out["explained_variance"] = float("nan") if var == 0 else 1 - float((b_ret - b_val).var()) / var
        out["batch"] = float(n)
        return out


def train(cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
    """Train with ``cfg``; returns a summary (paths, step counts, throughput, final eval, and
    ``stop_reason``: ``total_steps``, ``time_limit_minutes`` or ``interrupted (SIGINT|SIGTERM)``)."""
    return Trainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
