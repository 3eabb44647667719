"""Self-play PPO for Chicken Foot with action masking and an opponent pool.

Reads top to bottom like CleanRL's ``ppo.py`` (plus masking and turn-based credit): the
:class:`Trainer` builds everything in ``__init__`` (seeding, the model and optimiser, the
opponent pool, the collector of its backend, the transition buffer; a checkpoint to resume), and
:meth:`Trainer.run` is the loop:

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

import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents import zoo_path
from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, observation_scale, resolve_device
from cf_env import ObservationEncoder, RulesConfig
from training.bc import behaviour_clone
from training.collectors import AecCollector, VectorCollector
from training.config import PPOConfig, TrainConfigError
from training.evaluate import win_rates
from training.pool import OpponentPool
from training.trajectories import Trajectories

__all__ = ["RunExistsError", "Trainer", "Trajectories", "claim_run_dir", "jsonable", "load_weights", "train"]

# ------------------------------------------------------------------------------ the trainer

class RunExistsError(TrainConfigError):
    """The run folder already holds a run and neither resuming nor overwriting it was asked for."""


class Trainer:
    def __init__(self, cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        self.cfg = cfg
        self.progress = progress
        self.rules: RulesConfig = cfg.rules_config
        self.run_dir = cfg.run_dir
        self.ckpt_path = self.run_dir / "checkpoint.pt"
        claim_run_dir(self.run_dir, resume, overwrite)
        # --- seeding: one numpy generator for games and opponents, torch seeded alongside
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.torch_threads)
        self.torch_gen = torch.Generator().manual_seed(cfg.seed)  # on the CPU: draws move to the device
        # --- model and optimiser (on cfg.device; the games and the pool stay on the CPU)
        self.device = resolve_device(cfg.device)
        self.encoder = ObservationEncoder(self.rules)
        self.model = ActorCritic(self.encoder.size, self.rules.num_actions, tuple(cfg.hidden),
                                 obs_scale=observation_scale(self.rules)).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.global_step = 0  # learner decisions trained on
        self.env_steps = 0  # every decision of every seat
        self.update = 0
        self.train_seconds = 0.0
        self.last_eval: dict[str, float] = {}
        # --- opponents, games and the learner's transitions
        self.pool = OpponentPool(self.rules, cfg.pool_baselines, cfg.pool_size, cfg.self_play_prob)
        if resume:
            self._resume()
        backend = VectorCollector if cfg.backend == "vector" else AecCollector
        self.collector = backend(self.rules, cfg.num_envs, cfg.reward, cfg.points_scale, self.pool, self.rng)
        self.buffer = Trajectories(cfg.num_envs, self.rules.num_players, self.encoder.size, self.rules.num_actions)

    # -------------------------------------------------------------- checkpoints

    def _payload(self, with_optimizer: bool) -> dict[str, Any]:
        payload = model_payload(self.model, self.rules, self.global_step, self.cfg.to_dict())
        if with_optimizer:
            payload["optimizer"] = self.optimizer.state_dict()
            payload["trainer_state"] = {
                "env_steps": self.env_steps, "update": self.update, "train_seconds": self.train_seconds,
                "pool": self.pool.specs, "last_eval": self.last_eval,
                "numpy_rng": jsonable(self.rng.bit_generator.state),
                "torch_rng": self.torch_gen.get_state(), "torch_global_rng": torch.get_rng_state(),
            }
        return payload

    def save(self) -> Path:
        return save_checkpoint(self.ckpt_path, self._payload(with_optimizer=True))

    def warm_start(self, spec: str) -> None:
        """Load starting weights from a checkpoint path or ``zoo:NAME`` (not the optimizer: a new run)."""
        load_weights(self.model, self.rules, spec)

    def _resume(self) -> None:
        if not self.ckpt_path.exists():
            raise CheckpointError(f"--resume: no checkpoint at {self.ckpt_path} to resume from")
        data = load_checkpoint(self.ckpt_path)
        if "trainer_state" not in data or "optimizer" not in data:
            raise CheckpointError(f"{self.ckpt_path} holds weights only (no optimizer state); it cannot be resumed")
        stored = {"rules": data["rules"], **{f"network {k}": v for k, v in data["model_kwargs"].items()}}
        wanted = {"rules": self.rules.to_dict(), **{f"network {k}": v for k, v in self.model.kwargs().items()}}
        differ = [f"{k}: checkpoint {stored.get(k)!r}, config {wanted.get(k)!r}"
                  for k in dict.fromkeys([*stored, *wanted]) if stored.get(k) != wanted.get(k)]
        if differ:
            raise CheckpointError(f"--resume: {self.ckpt_path} does not fit this config ({'; '.join(differ)}); set "
                                  f"the config's rules / hidden to the checkpoint's, or start a new run "
                                  f"(another --run-name, or --overwrite)")
        self.model.load_state_dict(data["model"])
        self.optimizer.load_state_dict(data["optimizer"])
        state = data["trainer_state"]
        self.global_step = int(data["train_step"])
        self.env_steps = int(state["env_steps"])
        self.update = int(state["update"])
        self.train_seconds = float(state["train_seconds"])
        self.pool.specs = list(state["pool"])
        self.last_eval = dict(state["last_eval"])
        self.rng.bit_generator.state = state["numpy_rng"]
        self.torch_gen.set_state(state["torch_rng"])
        torch.set_rng_state(state["torch_global_rng"])

    # -------------------------------------------------------------- acting

    @torch.no_grad()
    def _policy(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dev = self.device
        logits, values = self.model(torch.from_numpy(obs).to(dev), torch.from_numpy(mask).to(dev))
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
        self.buffer = self.buffer.carry_over()
        n = len(idx)
        mb = max(1, n // cfg.num_minibatches)
        stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(n, generator=self.torch_gen).to(self.device)
            for start in range(0, n, mb):
                j = perm[start:start + mb]
                logits, value = self.model(b_obs[j], b_mask[j])
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
                loss = pg_loss - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
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

    # -------------------------------------------------------------- evaluation

    def evaluate_now(self) -> dict[str, float]:
        out = win_rates(TorchAgent(self.model, self.rules, name="policy", device=self.device), self.rules,
                        {opp: self.pool.agent(opp) for opp in self.cfg.eval_opponents}, self.cfg.eval_deal_sets)
        self.model.train()
        return out

    def snapshot(self) -> None:
        path = self.run_dir / "pool" / f"update_{self.update:06d}.pt"
        save_checkpoint(path, self._payload(with_optimizer=False))
        if self.pool.add_snapshot(str(path)) is not None:
            self.collector.forget_unseated()

    # -------------------------------------------------------------- the loop

    def run(self) -> dict[str, Any]:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm.auto import tqdm

        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        writer = SummaryWriter(str(self.run_dir))
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in cfg.to_dict().items()))
        if self.update == 0 and cfg.init_checkpoint:
            self.warm_start(cfg.init_checkpoint)
        elif self.update == 0 and cfg.bc_games:
            t0 = time.time()
            bc, bc_steps = behaviour_clone(self.model, self.optimizer, self.rules, cfg, self.rng, self.torch_gen,
                                           self.progress)
            self.env_steps += bc_steps
            self.train_seconds += time.time() - t0
            for k, v in bc.items():
                writer.add_scalar(f"losses/{k}", v, 0)
        self.collector.start()
        # the bar counts learner steps, or training seconds when the time limit will stop the run first
        by_time = bool(cfg.time_limit_minutes)
        bar_total = int(cfg.time_limit_minutes * 60) if by_time else cfg.total_steps

        def bar_position() -> int:
            return min(int(self.train_seconds) if by_time else self.global_step, bar_total)

        bar = tqdm(total=bar_total, initial=bar_position(),
                   desc="train", unit="s" if by_time else "step", disable=not self.progress, dynamic_ncols=True,
                   mininterval=1.0)  # at most one redraw a second: updates come several times a second
        start_time = time.time() - self.train_seconds
        steps_at_start, env_steps_at_start = self.global_step, self.env_steps
        run_start = time.time()
        stop_reason = "total_steps"
        stop = _StopSignals()
        stop.install()
        try:
            while self.global_step < cfg.total_steps:
                if stop.received:
                    stop_reason = f"interrupted ({stop.received})"
                    break
                if cfg.time_limit_minutes and self.train_seconds >= cfg.time_limit_minutes * 60:
                    stop_reason = "time_limit_minutes"
                    break
                frac = 1.0 - self.global_step / cfg.total_steps
                if cfg.anneal_lr:
                    self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
                learner_steps, env_steps = self.collector.collect(self._policy, self.buffer, cfg.rollout_steps)
                self.global_step += learner_steps
                self.env_steps += env_steps
                stats = self.learn()
                self.update += 1
                self.train_seconds = time.time() - start_time
                elapsed = max(time.time() - run_start, 1e-9)
                sps = (self.global_step - steps_at_start) / elapsed
                env_sps = (self.env_steps - env_steps_at_start) / elapsed
                for k, v in stats.items():
                    writer.add_scalar(f"losses/{k}", v, self.global_step)
                writer.add_scalar("charts/learning_rate", self.optimizer.param_groups[0]["lr"], self.global_step)
                writer.add_scalar("charts/learner_steps_per_second", sps, self.global_step)
                writer.add_scalar("charts/env_steps_per_second", env_sps, self.global_step)
                wins, points = self.collector.episode_wins, self.collector.episode_points
                if wins:
                    writer.add_scalar("charts/win_rate_vs_pool", float(np.mean(wins[-200:])), self.global_step)
                    writer.add_scalar("charts/points_vs_pool", float(np.mean(points[-200:])), self.global_step)
                if self.update % cfg.snapshot_every == 0:
                    self.snapshot()
                if self.update % cfg.eval_every == 0:
                    self.last_eval = self.evaluate_now()
                    for k, v in self.last_eval.items():
                        writer.add_scalar(f"eval/{k}", v, self.global_step)
                if self.update % cfg.checkpoint_every == 0:
                    self.save()
                latest = {k.replace("win_rate_vs_", "vs_"): f"{v:.2f}" for k, v in self.last_eval.items()}
                bar.set_postfix({"steps": self.global_step, "env_sps": f"{env_sps:.0f}", **latest}, refresh=False)
                bar.update(bar_position() - bar.n)  # redraws only when mininterval has passed
            bar.close()
            if not stop.received:  # an interrupted run saves at once: no final evaluation, no final.pt
                self.last_eval = self.evaluate_now()
                for k, v in self.last_eval.items():
                    writer.add_scalar(f"eval/{k}", v, self.global_step)
            path = self.save()
        finally:
            stop.restore()
        if stop.received:  # also when it came during the final evaluation
            stop_reason = f"interrupted ({stop.received})"
        final = self.run_dir / "final.pt"
        if not stop.received:
            save_checkpoint(final, self._payload(with_optimizer=False))
        writer.close()
        elapsed = max(time.time() - run_start, 1e-9)
        return {
            "checkpoint": str(path), "final": None if stop.received else str(final), "learner_steps": self.global_step,
            "env_steps": self.env_steps, "updates": self.update, "train_seconds": self.train_seconds,
            "env_steps_per_second": (self.env_steps - env_steps_at_start) / elapsed,
            "learner_steps_per_second": (self.global_step - steps_at_start) / elapsed,
            "stop_reason": stop_reason, "signal": stop.received, "eval": self.last_eval,
        }


def jsonable(state: Any) -> Any:
    """numpy's bit-generator state as plain Python values (torch's weights_only loader takes them)."""
    if isinstance(state, dict):
        return {k: jsonable(v) for k, v in state.items()}
    if isinstance(state, np.integer):
        return int(state)
    return state


def load_weights(model: ActorCritic, rules: RulesConfig, spec: str) -> None:
    """Copy a checkpoint's weights (a path or ``zoo:NAME``: a run's ``init_checkpoint``) into
    ``model``, on whatever device it is; the rules and network sizes must match."""
    path = zoo_path(spec[4:]) if spec.startswith("zoo:") else Path(spec)
    data = load_checkpoint(path)
    if data["rules"] != rules.to_dict():
        raise CheckpointError(f"init_checkpoint {spec} was trained with rules {data['rules']}, "
                              f"the config says {rules.to_dict()}")
    if data["model_kwargs"] != model.kwargs():
        raise CheckpointError(f"init_checkpoint {spec} has network {data['model_kwargs']}, "
                              f"the config builds {model.kwargs()}; set hidden to match")
    model.load_state_dict(data["model"])  # copies the CPU weights onto the model's device


def claim_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """A new run never lands in a folder that holds another: refuse, or clear it on ``overwrite``."""
    if resume and overwrite:
        raise TrainConfigError("--resume continues the run in the folder and --overwrite deletes it: choose one")
    if resume or not run_dir.is_dir():
        return
    held = sorted(p.name for p in run_dir.iterdir())
    if not held:
        return
    if not overwrite:
        raise RunExistsError(
            f"{run_dir} already holds a run ({', '.join(held[:4])}{', ...' if len(held) > 4 else ''}); pass --resume "
            f"to continue it, --overwrite to delete it and start again, or choose another --run-name")
    shutil.rmtree(run_dir)


class _StopSignals:
    """Ctrl-C (SIGINT) or SIGTERM asks the loop to stop after the current update and checkpoint;
    a second one stops at once. Installed only in the main thread (signals reach no other)."""

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received:  # the second signal: give up on a clean stop
            self.restore()
            raise KeyboardInterrupt
        self.received = signal.Signals(signum).name
        print(f"\n{self.received}: stopping after this update and writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}


def train(cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
    """Train with ``cfg``; returns a summary (paths, step counts, throughput, final eval, and
    ``stop_reason``: ``total_steps``, ``time_limit_minutes`` or ``interrupted (SIGINT|SIGTERM)``)."""
    return Trainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
