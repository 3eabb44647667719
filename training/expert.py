"""Expert iteration: distil the search agent into the policy network (DAgger).

Each iteration of :class:`ExpertTrainer.run`:

1. **Collect.** The current network (the *student*) plays ``games_per_iteration`` games in
   ``workers`` processes. Seat 0 is the student and each other seat is too with probability
   ``self_play_prob``; the rest are drawn from ``opponents``. At every decision of a student seat
   with more than one legal action the *teacher* (a PIMC search spec, :mod:`agents.search`: its
   worlds are played out on the batched engine's compiled kernels; by default the racing search,
   :mod:`agents.search.racing`) searches that seat's observation and its per-action mean values
   are kept. The games of a worker run in lockstep on the batched engine
   (:func:`training.labels.collect_labels`); a teacher that reads the observation's history
   (``infer=policy``) is fed by the PettingZoo env instead, one game at a time. The student's own
   action is played (the teacher's with probability ``beta``), so the samples are the states the
   network reaches and it learns to recover from its own mistakes (DAgger: Ross, Gordon & Bagnell,
   AISTATS 2011).
2. **Learn.** The network is fitted to every sample so far (the newest ``max_samples``):
   cross-entropy to the targets for the policy head, made from the kept values
   (:func:`training.labels.soft_targets`: all weight on the teacher's choice at
   ``target_temperature: 0``, else ``softmax(values / target_temperature)``), the seat's discounted
   returns (the env's ``win`` reward) for the value head, so a PPO fine-tune can start from it.
3. A checkpoint (``checkpoint.pt``, resumable with the samples in ``samples.npz``), an evaluation
   against ``eval_opponents`` and TensorBoard scalars: the student's agreement with the teacher on
   the fresh samples before it learns from them, teacher decisions per second, losses.

Usage: ``chickenfoot expert --config configs/expert-4p.yaml``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import Field, field_validator
from torch import nn

from agents import load
from agents.base import needs_history
from agents.checkpoint import CheckpointError, atomic_write
from agents.torch_policy import ActorCritic, TorchAgent
from cf_env import RulesConfig, raw_env
from training.config import (
    NetworkTrainerConfig,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    Probability,
    check_agent_specs,
    check_teacher,
)
from training.evaluate import warm_up, win_rates
from training.labels import DEFAULT_TEACHER, collect_labels, collect_labels_env, soft_targets
from training.run import StopSignals, TrainingRun
from training.workers import WorkerPool, worker_state

__all__ = ["ExpertConfig", "ExpertTrainer", "expert_iteration"]


class ExpertConfig(NetworkTrainerConfig):
    """Expert iteration (and :class:`~training.config.NetworkTrainerConfig`'s fields: the warm
    start, gamma, vf_coef, max_grad_norm, eval_deal_sets, torch_threads).

    Teacher
        teacher: a ``search`` spec with ``algo=pimc`` (the default is reproducible: no clock, at
        most ``sims`` worlds per decision, racing); target_temperature: 0 = the teacher's
        choice, else a softmax over its action values at this temperature.
    Collection
        iterations, games_per_iteration, workers (processes that play the games, spawned once per
        run; 1 = in this process); address: ``HOST:PORT`` of a Ray cluster's head to play them on
        instead, ``workers`` Ray actors over its CPUs (:class:`training.workers.WorkerPool`);
        self_play_prob: chance each seat after seat 0 is the student too; opponents: the other
        seats' agent specs; beta: chance a student decision plays the teacher's action instead.
    Learning
        learning_rate, epochs over the samples per iteration, minibatch, max_samples (the newest kept).
    Evaluation
        eval_opponents (after each iteration, ``eval_deal_sets`` deal sets each).
    """

    teacher: str = DEFAULT_TEACHER
    target_temperature: NonNegativeFloat = 0.0
    iterations: PositiveInt = 10
    games_per_iteration: PositiveInt = 32
    workers: PositiveInt = 2
    address: str | None = None
    self_play_prob: Probability = 0.5
    opponents: list[str] = Field(default_factory=lambda: ["heuristic"], min_length=1)
    beta: Probability = 0.0
    learning_rate: PositiveFloat = 1e-4
    epochs: PositiveInt = 2
    minibatch: PositiveInt = 512
    max_samples: PositiveInt = 500_000
    eval_opponents: list[str] = Field(default_factory=lambda: ["heuristic"])

    @field_validator("opponents", "eval_opponents")
    @classmethod
    def _known_agents(cls, specs: list[str]) -> list[str]:
        return check_agent_specs(specs)

    @field_validator("teacher")
    @classmethod
    def _pimc_teacher(cls, spec: str) -> str:
        return check_teacher(spec)


# ------------------------------------------------------------------------------ collection (workers)

def collector_state(config_dict: dict, teacher: str, opponents: list[str], hidden: list[int],
                    action_head: int = 0) -> dict[str, Any]:
    """A collecting worker's state (:class:`training.run.WorkerPool`'s initializer): the rules, the
    teacher, the opponents, a student network to load weights into, an env."""
    config = RulesConfig.from_dict(config_dict)
    model = ActorCritic.for_rules(config, tuple(hidden), action_head)
    built = {s: load(s, config) for s in dict.fromkeys([teacher, *opponents])}
    warm_up(built, config)  # compile the search kernels before the clock runs
    return {"config": config, "teacher": built[teacher], "model": model, "opponents": built,
            "opponent_specs": opponents, "env": raw_env(**config.to_dict(), history=needs_history(built.values()))}


SAMPLE_KEYS = ("obs", "mask", "q", "choice", "ret")  #: what a sample keeps (samples.npz)


def collect_games(weights: dict, seeds: list[int], cfg: dict) -> dict[str, Any]:
    """Play one game per seed in this worker (:func:`collector_state`); returns the samples
    (student decisions with a choice: :data:`SAMPLE_KEYS`) and counts. The games run in lockstep
    (:func:`training.labels.collect_labels`) unless the teacher reads the history or
    ``cfg["one_by_one"]`` asks for the env loop (``lab/benchmarks/expert.py`` times both)."""
    state = worker_state()
    config, teacher, model = state["config"], state["teacher"], state["model"]
    model.load_state_dict(weights)
    student = TorchAgent(model, config, name="student")
    if getattr(teacher, "needs_history", False) or cfg.get("one_by_one", False):
        return _collect_one_by_one(student, seeds, cfg)
    opponents = [state["opponents"][spec] for spec in state["opponent_specs"]]
    out = collect_labels(student, teacher, opponents, config, len(seeds), seed=seeds[0],
                         self_play_prob=cfg["self_play_prob"], gamma=cfg["gamma"], slots=len(seeds), beta=cfg["beta"])
    return {**{k: out[k] for k in SAMPLE_KEYS}, "agree": int(out["agree"].sum()), "games": list(seeds),
            "teacher_decisions": len(out["ret"]), "teacher_seconds": out["teacher_seconds"],
            "decisions": out["decisions"]}


def _collect_one_by_one(student: TorchAgent, seeds: list[int], cfg: dict) -> dict[str, Any]:
    """:func:`collect_games` on the PettingZoo env, one game and one decision at a time
    (:func:`training.labels.collect_labels_env`: a teacher that reads the observation's history,
    which the batched engine does not keep)."""
    state = worker_state()
    opponents = [state["opponents"][spec] for spec in state["opponent_specs"]]
    out = collect_labels_env(student, state["teacher"], opponents, state["config"], seeds, cfg["self_play_prob"],
                             cfg["gamma"], cfg["beta"], env=state["env"])
    return {**{k: out[k] for k in SAMPLE_KEYS}, "agree": int(out["agree"].sum()), "games": list(seeds),
            "teacher_decisions": len(out["ret"]), "teacher_seconds": out["teacher_seconds"],
            "decisions": out["decisions"]}


# ------------------------------------------------------------------------------ the trainer

class ExpertTrainer(TrainingRun):
    """Expert iteration (see the module docstring). The run's life (folder, seeding, network,
    checkpoints, resume, warm start, stop signals) is :class:`training.run.TrainingRun`'s; this
    class adds the samples (kept in ``samples.npz`` beside the checkpoint), the collection in a
    :class:`~training.run.WorkerPool`, the fit to the teacher's targets (:meth:`learn`) and the
    loop (:meth:`run`)."""

    trainer = "expert"

    def __init__(self, cfg: ExpertConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        self.cfg: ExpertConfig = cfg
        self.samples_path = self.run_dir / "samples.npz"
        self.iteration = 0
        self.games = 0
        self.history: list[dict[str, float]] = []  # every iteration's statistics, across resumes
        a = self.rules.num_actions
        self.data = {"obs": np.zeros((0, self.encoder.size), np.float32), "mask": np.zeros((0, a), bool),
                     "q": np.zeros((0, a), np.float32), "choice": np.zeros(0, np.int16),
                     "ret": np.zeros(0, np.float32)}
        if resume:
            self.resume()
            self.refuse_complete(self.iteration, cfg.iterations, "iterations", "iterations")

    # -------------------------------------------------------------- the run's state

    @property
    def train_step(self) -> int:
        return self.env_steps

    @property
    def started(self) -> bool:
        return self.iteration > 0

    def trainer_state(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "games": self.games, "history": self.history}

    def load_trainer_state(self, state: dict[str, Any]) -> None:
        self.iteration, self.games = int(state["iteration"]), int(state["games"])
        self.history = list(state.get("history", []))
        if self.samples_path.exists():
            with np.load(self.samples_path) as stored:
                missing = sorted(set(self.data) - set(stored.files))
                if missing:
                    raise CheckpointError(f"{self.samples_path} lacks {missing}: it was written before the teacher's "
                                          f"values were kept (targets only); start a new run (another --run-name, "
                                          f"or --overwrite)")
                self.data = {k: stored[k] for k in self.data}

    def save(self) -> Path:
        """The samples, then the resumable checkpoint (both atomically)."""
        atomic_write(self.samples_path, lambda f: np.savez(f, **self.data))  # type: ignore[arg-type]  # numpy's stub
        return super().save()

    # -------------------------------------------------------------- learning

    def learn(self) -> dict[str, float]:
        cfg = self.cfg
        dev = self.device
        obs = torch.from_numpy(self.data["obs"]).to(dev)
        mask = torch.from_numpy(self.data["mask"]).to(dev)
        target = torch.from_numpy(soft_targets(self.data["q"], self.data["mask"], self.data["choice"],
                                               cfg.target_temperature)).to(dev)
        ret = torch.from_numpy(self.data["ret"]).to(dev)
        n = len(ret)
        self.model.train()
        ce_hist, v_hist = [], []
        for _ in range(cfg.epochs):
            perm = torch.randperm(n, generator=self.torch_gen).to(dev)
            for start in range(0, n, cfg.minibatch):
                j = perm[start:start + cfg.minibatch]
                logits, value = self.model(obs[j], mask[j])
                logp = torch.log_softmax(logits, dim=-1).masked_fill(~mask[j], 0.0)
                ce = -(target[j] * logp).sum(-1).mean()
                v = 0.5 * ((value - ret[j]) ** 2).mean()
                loss = ce + cfg.vf_coef * v
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                ce_hist.append(ce.item())
                v_hist.append(v.item())
        self.model.eval()
        return {"cross_entropy": float(np.mean(ce_hist[-20:])), "value_loss": float(np.mean(v_hist[-20:])),
                "samples": float(n)}

    def evaluate_now(self) -> dict[str, float]:
        opponents = {opp: load(opp, self.rules) for opp in self.cfg.eval_opponents} if self.cfg.eval_deal_sets else {}
        return win_rates(TorchAgent(self.model, self.rules, name="policy", device=self.device), self.rules,
                         opponents, self.cfg.eval_deal_sets)

    # -------------------------------------------------------------- the loop

    def run(self) -> dict[str, Any]:
        from tqdm.auto import tqdm

        cfg = self.cfg
        writer = self.open_writer()
        self.warm_start()
        self.model.eval()
        collect_cfg = {"self_play_prob": cfg.self_play_prob, "beta": cfg.beta, "gamma": cfg.gamma}
        stop_reason = "iterations"
        start_time = time.time() - self.train_seconds
        init_args = (self.rules.to_dict(), cfg.teacher, cfg.opponents, list(cfg.hidden), cfg.action_head)
        with StopSignals() as stop, WorkerPool(cfg.workers, collector_state, init_args,
                                                             address=cfg.address) as pool:
            while self.iteration < cfg.iterations:
                if stop.received:
                    stop_reason = f"interrupted ({stop.received})"
                    break
                if cfg.time_limit_minutes and self.train_seconds >= cfg.time_limit_minutes * 60:
                    stop_reason = "time_limit_minutes"
                    break
                t0 = time.time()
                weights = {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}
                seeds = [int(s) for s in self.rng.integers(2**63, size=cfg.games_per_iteration)]
                size = max(2, len(seeds) // (2 * cfg.workers))  # lockstep games per task; two tasks a worker keep them even
                chunks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
                with tqdm(total=len(seeds), desc=f"iteration {self.iteration + 1} games", unit="game",
                          disable=not self.progress, leave=False) as bar:
                    fresh = []  # in submission order: reproducible; a dead worker's chunk runs again elsewhere
                    for done in pool.imap(collect_games, ((weights, chunk, collect_cfg) for chunk in chunks)):
                        fresh.append(done)
                        bar.update(len(done["games"]))
                collect_seconds = time.time() - t0
                new = {k: np.concatenate([f[k] for f in fresh]) for k in self.data}
                self.data = {k: np.concatenate([self.data[k], new[k]])[-cfg.max_samples:] for k in self.data}
                teacher_decisions = sum(f["teacher_decisions"] for f in fresh)
                stats = self.learn()
                self.iteration += 1
                self.games += len(seeds)
                self.env_steps += sum(f["decisions"] for f in fresh)
                self.train_seconds = time.time() - start_time
                stats.update({
                    "agreement": sum(f["agree"] for f in fresh) / max(teacher_decisions, 1),
                    "teacher_decisions": float(teacher_decisions),
                    "teacher_decisions_per_second": teacher_decisions / max(collect_seconds, 1e-9),
                    "teacher_ms_per_decision": 1000 * sum(f["teacher_seconds"] for f in fresh) / max(teacher_decisions, 1),
                    "iteration_seconds": time.time() - t0,
                })
                self.last_eval = self.evaluate_now()
                stats.update(self.last_eval)
                for k, v in stats.items():
                    writer.add_scalar(f"expert/{k}", v, self.iteration)
                self.history.append({"iteration": self.iteration, **stats})
                self.save()
                self.save_weights(self.run_dir / "pool" / f"iteration_{self.iteration:03d}.pt")
                if self.progress:
                    shown = {k: round(v, 3) for k, v in stats.items() if k in (
                        "agreement", "cross_entropy", "teacher_decisions_per_second", "samples") or k.startswith("win")}
                    tqdm.write(f"iteration {self.iteration}: {shown}")
            if stop.received:  # also when it came during the last iteration
                stop_reason = f"interrupted ({stop.received})"
                self.save()
        final = self.run_dir / "final.pt"
        if not stop.received:  # an interrupted run keeps its checkpoint and writes no final.pt
            self.save_weights(final)
        writer.close()
        return {"checkpoint": str(self.ckpt_path), "final": None if stop.received else str(final),
                "iterations": self.iteration, "games": self.games, "samples": int(len(self.data["ret"])),
                "env_steps": self.env_steps, "train_seconds": self.train_seconds, "stop_reason": stop_reason,
                "signal": stop.received, "eval": self.last_eval, "history": self.history}


def expert_iteration(cfg: ExpertConfig, resume: bool = False, progress: bool = True,
                     overwrite: bool = False) -> dict[str, Any]:
    """Run expert iteration with ``cfg``; returns a summary with each iteration's statistics."""
    return ExpertTrainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
