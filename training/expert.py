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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents import load
from agents.base import needs_history
from agents.checkpoint import CheckpointError, atomic_write
from agents.torch_policy import ActorCritic, TorchAgent
from cf_env import RulesConfig, raw_env
from training.config import ExpertConfig
from training.evaluate import warm_up, win_rates
from training.labels import collect_labels, collect_labels_env, load_teacher, soft_targets
from training.optim import descend
from training.run import NetworkRun, StopSignals
from training.workers import WorkerPool, worker_state

__all__ = ["ExpertConfig", "ExpertTrainer", "expert_iteration"]


# ------------------------------------------------------------------------------ collection (workers)

def collector_state(config: RulesConfig, teacher: str, opponents: list[str], hidden: list[int],
                    action_head: int = 0, trunk: str = "tanh") -> dict[str, Any]:
    """A collecting worker's state (:class:`training.run.WorkerPool`'s initializer): the rules, the
    teacher, the opponents, a student network to load weights into, an env."""
    model = ActorCritic.for_rules(config, tuple(hidden), action_head, trunk)
    built = {s: load(s, config) for s in dict.fromkeys(opponents)}
    built[teacher] = load_teacher(teacher, config)
    warm_up(built, config)  # compile the search kernels before the clock runs
    return {"config": config, "teacher": built[teacher], "model": model, "opponents": built,
            "opponent_specs": opponents, "env": raw_env(config=config, history=needs_history(built.values()))}


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

class ExpertTrainer(NetworkRun):
    """Expert iteration (see the module docstring). The run's life (folder, seeding, network,
    checkpoints, resume, warm start, stop signals, the loop) is :class:`training.run.NetworkRun`'s;
    this class adds the samples (kept in ``samples.npz`` beside the checkpoint), the collection in a
    :class:`~training.workers.WorkerPool`, the fit to the teacher's targets (:meth:`learn`) and
    the steps of the loop (:meth:`step`: one iteration)."""

    trainer = "expert"

    def __init__(self, cfg: ExpertConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        self.cfg: ExpertConfig = cfg
        self.samples_path = self.run_dir / "samples.npz"
        self.games = 0
        self.pool: WorkerPool | None = None  # while the loop runs
        self.history: list[dict[str, float]] = []  # every iteration's statistics, across resumes
        a = self.rules.num_actions
        self.data = {"obs": np.zeros((0, self.encoder.size), np.float32), "mask": np.zeros((0, a), bool),
                     "q": np.zeros((0, a), np.float32), "choice": np.zeros(0, np.int16),
                     "ret": np.zeros(0, np.float32)}
        if resume:
            self.resume()
            self.refuse_complete()

    # -------------------------------------------------------------- the run's state

    @property
    def train_step(self) -> int:
        return self.env_steps

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
                descend(self.optimizer, loss, self.model, cfg.max_grad_norm)
                ce_hist.append(ce.item())
                v_hist.append(v.item())
        self.model.eval()
        return {"cross_entropy": float(np.mean(ce_hist[-20:])), "value_loss": float(np.mean(v_hist[-20:])),
                "samples": float(n)}

    def evaluate_now(self) -> dict[str, float]:
        opponents = {opp: load(opp, self.rules) for opp in self.cfg.eval_opponents} if self.cfg.eval_deal_sets else {}
        return win_rates(TorchAgent(self.model, self.rules, name="policy", device=self.device), self.rules,
                         opponents, self.cfg.eval_deal_sets)

    # -------------------------------------------------------------- the loop's steps (TrainingRun.run)

    @property
    def eval_every(self) -> int:
        return 1  # after every iteration: each network of the run is measured

    @property
    def final_eval(self) -> bool:
        return False  # the last iteration's evaluation is the final one

    def checkpoint_due(self) -> bool:
        return True  # an iteration is minutes of search: each one is kept

    def begin(self, writer: Any, stop: StopSignals) -> None:
        self.warm_start()
        self.model.eval()

    @contextmanager
    def workers(self) -> Iterator[WorkerPool]:
        cfg = self.cfg
        init_args = (self.rules, cfg.teacher, cfg.opponents, list(cfg.hidden), cfg.action_head, cfg.trunk)
        with WorkerPool(cfg.workers, collector_state, init_args, address=cfg.address) as pool:
            self.pool = pool
            try:
                yield pool
            finally:
                self.pool = None

    def step(self, stop: StopSignals) -> dict[str, float]:
        """One iteration: the student's games with the teacher's labels, then the fit to every sample."""
        from tqdm.auto import tqdm

        cfg = self.cfg
        assert self.pool is not None
        t0 = time.time()
        collect_cfg = {"self_play_prob": cfg.self_play_prob, "beta": cfg.beta, "gamma": cfg.gamma}
        weights = {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}
        seeds = [int(s) for s in self.rng.integers(2**63, size=cfg.games_per_iteration)]
        size = max(2, len(seeds) // (2 * cfg.workers))  # lockstep games per task; two tasks a worker keep them even
        chunks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
        with tqdm(total=len(seeds), desc=f"iteration {self.iteration + 1} games", unit="game",
                  disable=not self.progress, leave=False) as bar:
            fresh = []  # in submission order: reproducible; a dead worker's chunk runs again elsewhere
            for done in self.pool.imap(collect_games, ((weights, chunk, collect_cfg) for chunk in chunks)):
                fresh.append(done)
                bar.update(len(done["games"]))
        collect_seconds = time.time() - t0
        new = {k: np.concatenate([f[k] for f in fresh]) for k in self.data}
        self.data = {k: np.concatenate([self.data[k], new[k]])[-cfg.max_samples:] for k in self.data}
        teacher_decisions = sum(f["teacher_decisions"] for f in fresh)
        stats = self.learn()
        self.games += len(seeds)
        self.env_steps += sum(f["decisions"] for f in fresh)
        stats.update({
            "agreement": sum(f["agree"] for f in fresh) / max(teacher_decisions, 1),
            "teacher_decisions": float(teacher_decisions),
            "teacher_decisions_per_second": teacher_decisions / max(collect_seconds, 1e-9),
            "teacher_ms_per_decision": 1000 * sum(f["teacher_seconds"] for f in fresh) / max(teacher_decisions, 1),
            "iteration_seconds": time.time() - t0,
        })
        return {f"expert/{k}": v for k, v in stats.items()}

    def record(self, stats: dict[str, float]) -> None:
        """The iteration's statistics (its evaluation included) join the run's history; its network
        is kept in ``pool/``."""
        from tqdm.auto import tqdm

        row = {k.split("/", 1)[1]: v for k, v in stats.items()}
        self.history.append({"iteration": self.iteration, **row})
        self.save_weights(self.run_dir / "pool" / f"iteration_{self.iteration:03d}.pt")
        if self.progress:
            shown = {k: round(v, 3) for k, v in row.items() if k in (
                "agreement", "cross_entropy", "teacher_decisions_per_second", "samples") or k.startswith("win")}
            tqdm.write(f"iteration {self.iteration}: {shown}")

    def save(self) -> Path:
        """The samples, then the resumable checkpoint (both atomically)."""
        atomic_write(self.samples_path, lambda f: np.savez(f, **self.data))  # type: ignore[arg-type]  # numpy's stub
        return super().save()

    def summary(self) -> dict[str, Any]:
        return {"iterations": self.iteration, "games": self.games, "samples": int(len(self.data["ret"])),
                "history": self.history}


def expert_iteration(cfg: ExpertConfig, resume: bool = False, progress: bool = True,
                     overwrite: bool = False) -> dict[str, Any]:
    """Run expert iteration with ``cfg``; returns a summary with each iteration's statistics."""
    return ExpertTrainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
