"""The life of a training run, written once for every trainer (as Stable-Baselines3's
``BaseAlgorithm.learn`` runs each of its algorithms).

:class:`TrainingRun` is the base of all three trainers: :class:`training.ppo.Trainer`,
:class:`training.expert.ExpertTrainer` and :class:`training.distill.DistillRun`. It owns the loop
(:meth:`TrainingRun.run`) and what every run does the same way:

* **the folder**: ``runs_dir/run_name``; a new run never lands in a folder that holds another
  (:func:`claim_run_dir`: refuse, or clear it on ``overwrite``);
* **the loop**: iterations until the trainer's budget is spent or ``time_limit_minutes`` of
  training time have passed; evaluation every ``eval_every`` iterations and at the end;
  checkpoints; TensorBoard scalars; a progress bar; the summary;
* **stop signals**: Ctrl-C or SIGTERM stops after the current iteration, with a checkpoint
  (:class:`StopSignals`); a step that a trainer marks :meth:`StopSignals.at_once` (a collection, a
  fit: work it can redo exactly) stops in the middle. The command line then prints the command
  that resumes the run and exits 130 or 143.

A trainer supplies its steps: :meth:`TrainingRun.step` (one iteration: PPO's collect and update,
expert iteration's games and fit, distillation's DAgger round: collect shards, fit),
its ``budget_key`` (or :attr:`TrainingRun.budget` and :attr:`TrainingRun.spent`), and optionally
:meth:`TrainingRun.begin`, :meth:`TrainingRun.workers`, :meth:`TrainingRun.evaluate_now`, :meth:`TrainingRun.save`,
:meth:`TrainingRun.save_final` and :meth:`TrainingRun.summary`.

:class:`NetworkRun` adds what the two trainers that fit one network in place share: seeding (one
numpy and one torch generator from ``seed``), the network and its optimiser on the configured
device, ``checkpoint.pt`` (weights, optimiser, the trainer's counters and every generator's
state) with resuming from it (same trainer, rules and network, or each difference is named), and
the warm start (``init_checkpoint`` or behaviour cloning of the heuristic).

:class:`training.workers.WorkerPool` is the one pool of worker processes the trainers and the
evaluation use.
"""

from __future__ import annotations

import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, resolve_device
from cf_env import ObservationEncoder, RulesConfig
from training.config import NetworkTrainerConfig, RunConfig, TrainConfigError

__all__ = ["NetworkRun", "RunCompleteError", "RunExistsError", "StopSignals", "TrainingRun", "claim_run_dir", "jsonable", "load_weights"]


class RunExistsError(TrainConfigError):
    """The run folder already holds a run and neither resuming nor overwriting it was asked for."""


class RunCompleteError(TrainConfigError):
    """A run was resumed that has already reached its budget; the message says how to extend it."""


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


def jsonable(state: Any) -> Any:
    """numpy's bit-generator state as plain Python values (torch's weights_only loader takes them)."""
    if isinstance(state, dict):
        return {k: jsonable(v) for k, v in state.items()}
    if isinstance(state, np.integer):
        return int(state)
    return state


def load_weights(model: ActorCritic, rules: RulesConfig, spec: str) -> None:
    """Copy a checkpoint's weights (a path or ``zoo:NAME``: a run's ``init_checkpoint``) into
    ``model``, on whatever device it is; the rules and network sizes must match. With
    ``:temperature=T`` (the spec that samples from ``softmax(logits / T)``) the policy head is
    scaled by ``1 / T`` (:meth:`ActorCritic.sharpen`), so that the network's own softmax is that
    policy: what PPO then improves. A network of an
    older observation version is widened to ``model``'s (:func:`agents.torch_policy.widen_weights`:
    it plays as before and the new features start at weight zero), and a narrower network of the
    same depth is grown into ``model``'s wider layers (:func:`agents.torch_policy.grow_hidden`:
    it plays as before, the new units start unread)."""
    from agents import checkpoint_file, checkpoint_temperature, parse_spec
    from agents.torch_policy import grow_hidden, model_from_checkpoint, widen_weights

    temperature = checkpoint_temperature(spec)
    path = checkpoint_file(parse_spec(spec).argument)
    data = load_checkpoint(path)
    if data["rules"] != rules.to_dict():
        raise CheckpointError(f"init_checkpoint {spec} was trained with rules {data['rules']}, "
                              f"the config says {rules.to_dict()}")
    old = model_from_checkpoint(data, rules, path)
    if not isinstance(old, ActorCritic):
        raise CheckpointError(f"init_checkpoint {spec} is an ensemble of {len(old.members)} networks, which plays but "
                              f"is not trained; start from one of its members instead")
    grows = len(old.hidden) == len(model.hidden) and all(o <= n for o, n in zip(old.hidden, model.hidden))
    if not grows or old.num_actions != model.num_actions:
        raise CheckpointError(f"init_checkpoint {spec} has network {old.kwargs()}, "
                              f"the config builds {model.kwargs()}; set hidden to match (or wider, layer by layer)")
    if old.action_head not in (0, model.action_head):
        raise CheckpointError(f"init_checkpoint {spec} has an action head of width {old.action_head}, the config "
                              f"builds {model.action_head or 'none'}; set action_head to match")
    if old.trunk_kind != model.trunk_kind:
        raise CheckpointError(f"init_checkpoint {spec} has a {old.trunk_kind} trunk, the config builds "
                              f"{model.trunk_kind}; set trunk to match")
    if old.observation_version != model.observation_version:
        widened = ActorCritic(**{**model.kwargs(), "hidden": tuple(old.hidden), "action_head": 0},
                              obs_scale=model.state_dict()["obs_scale"].cpu().numpy())
        widen_weights(old, widened, rules)
        old = widened
    if old.hidden != model.hidden or old.action_head != model.action_head:
        grown = ActorCritic(**{**model.kwargs(), "hidden": tuple(model.hidden)},
                            obs_scale=model.state_dict()["obs_scale"].cpu().numpy())
        grown.load_state_dict(model.state_dict())  # the new units' init is the model's own
        grow_hidden(old, grown)
        old = grown
    model.load_state_dict(old.state_dict())  # copies the CPU weights onto the model's device
    if temperature is not None:
        model.sharpen(1.0 / temperature)


class StopSignals:
    """Ctrl-C (SIGINT) or SIGTERM asks the loop to stop after the current iteration and
    checkpoint; a second one stops at once. Inside :meth:`at_once` the first one already stops at
    once (a :class:`KeyboardInterrupt` that :meth:`TrainingRun.run` catches): for steps whose work
    is kept as it goes or redone exactly on resume. Installed only in the main thread (signals
    reach no other). Use as a context manager: the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.received: str | None = None
        self.cut_short = False  #: a signal stopped a step in the middle (inside at_once)
        self._urgent = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    @contextmanager
    def at_once(self) -> Iterator[None]:
        """Within this block a stop signal interrupts the work at once."""
        if self.received:  # it came before the block: do not start it
            self.cut_short = True
            raise KeyboardInterrupt
        self._urgent = True
        try:
            yield
        finally:
            self._urgent = False

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received:  # the second signal: give up on a clean stop
            self.__exit__()
            raise KeyboardInterrupt
        self.received = signal.Signals(signum).name
        if self._urgent:
            print(f"\n{self.received}: stopping now; what was kept so far stays for --resume", file=sys.stderr,
                  flush=True)
            self.cut_short = True
            raise KeyboardInterrupt
        print(f"\n{self.received}: stopping after this step of the run and writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)


class TrainingRun:
    """The run's life and its loop (see the module docstring). A subclass sets ``trainer`` (its
    name, stored in checkpoints), ``budget_key`` (the config field that bounds the run, named as
    the stop reason when it is spent) and ``unit`` (what :attr:`spent` counts), and implements
    :meth:`step`. The run ends when :attr:`spent` reaches :attr:`budget`."""

    trainer = ""  #: the trainer's name ("ppo", "expert", "distill")
    budget_key = "iterations"  #: the config field that bounds the run
    unit = "iteration"  #: what :attr:`spent` counts

    def __init__(self, cfg: RunConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        self.cfg = cfg
        self.progress = progress
        self.rules: RulesConfig = cfg.rules_config
        self.run_dir = cfg.run_dir
        claim_run_dir(self.run_dir, resume, overwrite)
        self.iteration = 0  # steps of the loop done, across resumes
        self.env_steps = 0  # every decision of every seat
        self.train_seconds = 0.0
        self.last_eval: dict[str, float] = {}

    # -------------------------------------------------------------- what a trainer adds

    @property
    def spent(self) -> int:
        """How much of :attr:`budget` the run has done (iterations unless a trainer counts other units)."""
        return self.iteration

    @property
    def budget(self) -> int:
        """What the config asks of the run, counted in ``unit`` (its ``budget_key`` field)."""
        return int(getattr(self.cfg, self.budget_key))

    def step(self, stop: StopSignals) -> dict[str, float]:
        """One iteration; returns its TensorBoard scalars by tag (``losses/policy_loss``...)."""
        raise NotImplementedError

    def begin(self, writer: Any, stop: StopSignals) -> None:
        """Before the first iteration of this process (a warm start, games to deal); a start that
        may be cut short runs inside ``stop.at_once()``."""

    def workers(self) -> AbstractContextManager[Any]:
        """What the loop holds open while it runs (a pool of worker processes)."""
        return nullcontext()

    def evaluate_now(self) -> dict[str, float]:
        """The current network's evaluation, by name (``win_rate_vs_heuristic``...)."""
        return {}

    @property
    def eval_every(self) -> int:
        """Iterations between evaluations (0: none during the run)."""
        return 0

    @property
    def final_eval(self) -> bool:
        """Whether a run that ends without a signal is evaluated once more at its end."""
        return True

    def checkpoint_due(self) -> bool:
        """Whether to write a checkpoint after this iteration."""
        return self.iteration % self.cfg.checkpoint_every == 0

    @property
    def log_step(self) -> int:
        """The x-axis of the TensorBoard scalars."""
        return self.iteration

    def record(self, stats: dict[str, float]) -> None:
        """After an iteration and its evaluation (``stats`` holds both): the trainer's own log."""

    def progress_total(self) -> tuple[int, str]:
        """The progress bar's total and unit: the budget, or training seconds when the time limit
        will stop the run first (the bar counts :meth:`progress_position`)."""
        by_time = bool(self.cfg.time_limit_minutes)
        return (int(self.cfg.time_limit_minutes * 60), "s") if by_time else (self.budget, self.unit)

    def progress_position(self) -> int:
        return int(self.train_seconds) if self.cfg.time_limit_minutes else self.spent

    def postfix(self, stats: dict[str, float]) -> dict[str, Any]:
        """What the bar shows beside its count: the latest evaluation."""
        return {k.replace("win_rate_vs_", "vs_"): f"{v:.2f}" for k, v in self.last_eval.items()}

    def save(self) -> Path:
        """Write what a resume needs; returns the path the summary names as the checkpoint."""
        raise NotImplementedError

    def save_final(self) -> Path:
        """Write ``final.pt`` (a run that ends without a signal)."""
        raise NotImplementedError

    def summary(self) -> dict[str, Any]:
        """The trainer's own entries of the summary :meth:`run` returns."""
        return {}

    # -------------------------------------------------------------- the loop

    def run(self) -> dict[str, Any]:
        """Iterate until the budget is spent, the time limit passes or a signal comes; evaluate,
        checkpoint and write ``final.pt``. Returns the summary: ``checkpoint``, ``final`` (None
        when stopped by a signal), ``stop_reason`` (the budget's key, ``time_limit_minutes`` or
        ``interrupted (SIGINT|SIGTERM)``), ``signal``, ``eval``, ``env_steps``,
        ``train_seconds`` and the trainer's own entries."""
        from tqdm.auto import tqdm

        cfg = self.cfg
        writer = self.open_writer()
        stop_reason = self.budget_key
        total, unit = self.progress_total()
        start_time = time.time() - self.train_seconds
        with StopSignals() as stop:
            try:
                self.begin(writer, stop)
            except KeyboardInterrupt:  # a start the trainer made interruptible (at_once)
                if not stop.cut_short:
                    raise
            bar = tqdm(total=total, initial=min(self.progress_position(), total), desc=f"{self.trainer} run",
                       unit=unit, disable=not self.progress, dynamic_ncols=True, mininterval=1.0)
            with self.workers():
                while not stop.received and self.spent < self.budget:
                    if cfg.time_limit_minutes and self.train_seconds >= cfg.time_limit_minutes * 60:
                        stop_reason = "time_limit_minutes"
                        break
                    try:
                        stats = self.step(stop)
                    except KeyboardInterrupt:
                        if not stop.cut_short:
                            raise
                        break
                    self.iteration += 1
                    self.train_seconds = time.time() - start_time
                    if self.eval_every and self.iteration % self.eval_every == 0:
                        self.last_eval = self.evaluate_now()
                        stats |= {f"eval/{k}": v for k, v in self.last_eval.items()}
                    for tag, value in stats.items():
                        writer.add_scalar(tag, value, self.log_step)
                    self.record(stats)
                    if self.checkpoint_due():
                        self.save()
                    bar.set_postfix(self.postfix(stats), refresh=False)
                    bar.update(min(self.progress_position(), total) - bar.n)  # redraws at most once a second
            bar.close()
            if not stop.received and self.final_eval:
                self.last_eval = self.evaluate_now()
                for k, v in self.last_eval.items():
                    writer.add_scalar(f"eval/{k}", v, self.log_step)
            checkpoint = self.save()
        if stop.received:  # also when it came during the final evaluation
            stop_reason = f"interrupted ({stop.received})"
        final = None if stop.received else self.save_final()
        writer.close()
        summary = {"checkpoint": str(checkpoint), "final": None if final is None else str(final),
                   "env_steps": self.env_steps, "train_seconds": self.train_seconds, "stop_reason": stop_reason,
                   "signal": stop.received, "eval": self.last_eval, **self.summary()}
        self.write_summary(summary)
        return summary

    def write_summary(self, summary: dict[str, Any]) -> None:
        """``summary.json`` in the run folder: the summary with its provenance (the files the run
        started from, learned from and wrote, hashed)."""
        from training.provenance import write_report

        specs = [getattr(self.cfg, "init_checkpoint", ""), getattr(self.cfg, "teacher", ""),
                 summary["final"] or summary["checkpoint"]]
        write_report(self.run_dir / "summary.json", summary, [s for s in specs if s])

    def refuse_complete(self) -> None:
        """After a resume: a run that has already spent its budget has nothing left to do; say so,
        and how to give it more (the budget field's flag)."""
        if self.spent >= self.budget:
            flag = "--" + self.budget_key.replace("_", "-")
            raise RunCompleteError(f"{self.run_dir} is complete: {self.spent} {self.unit}s of {self.budget_key} "
                                   f"{self.budget}; to train it further, resume it with a larger budget, e.g. "
                                   f"--resume {flag} {2 * self.budget}")

    def open_writer(self) -> Any:
        """A TensorBoard writer in the run folder, the config logged as a table."""
        from torch.utils.tensorboard import SummaryWriter

        self.run_dir.mkdir(parents=True, exist_ok=True)
        writer = SummaryWriter(str(self.run_dir))
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in self.cfg.to_dict().items()))
        return writer


class NetworkRun(TrainingRun):
    """A run that fits one network in place (PPO, expert iteration): seeding, the network and its
    optimiser, ``checkpoint.pt`` and resuming from it, the warm start (module docstring). A
    subclass adds :attr:`train_step`, :attr:`started`, :meth:`trainer_state` and
    :meth:`load_trainer_state`."""

    def __init__(self, cfg: NetworkTrainerConfig, resume: bool = False, progress: bool = True,
                 overwrite: bool = False) -> None:
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        self.cfg: NetworkTrainerConfig = cfg
        self.ckpt_path = self.run_dir / "checkpoint.pt"
        # --- seeding: one numpy generator for games and opponents, torch seeded alongside
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.torch_threads)
        self.torch_gen = torch.Generator().manual_seed(cfg.seed)  # on the CPU: draws move to the device
        # --- the network and its optimiser (on cfg.device; games stay on the CPU)
        self.device = resolve_device(cfg.device)
        self.encoder = ObservationEncoder(self.rules)
        self.model = ActorCritic.for_rules(self.rules, tuple(cfg.hidden), cfg.action_head, cfg.trunk).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)

    # -------------------------------------------------------------- what a trainer adds

    @property
    def train_step(self) -> int:
        """The step count stored as the checkpoint's ``train_step``."""
        raise NotImplementedError

    @property
    def started(self) -> bool:
        """Whether the run has made progress (a warm start happens only before)."""
        return self.iteration > 0

    def trainer_state(self) -> dict[str, Any]:
        """The trainer's own counters, stored in the checkpoint beside the shared ones."""
        raise NotImplementedError

    def load_trainer_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`trainer_state`'s counters (``state`` also holds the checkpoint's
        ``train_step``)."""
        raise NotImplementedError

    # -------------------------------------------------------------- checkpoints

    def payload(self, with_optimizer: bool) -> dict[str, Any]:
        """A checkpoint's contents: the weights (every checkpoint), and with ``with_optimizer``
        the optimiser, the counters and every generator's state (a resumable one)."""
        payload = model_payload(self.model, self.rules, self.train_step, self.cfg.to_dict())
        if with_optimizer:
            payload["optimizer"] = self.optimizer.state_dict()
            payload["trainer_state"] = {
                "trainer": self.trainer, "env_steps": self.env_steps, "train_seconds": self.train_seconds,
                "last_eval": self.last_eval, **self.trainer_state(),
                "numpy_rng": jsonable(self.rng.bit_generator.state),
                "torch_rng": self.torch_gen.get_state(), "torch_global_rng": torch.get_rng_state(),
            }
        return payload

    def save(self) -> Path:
        """Write the resumable ``checkpoint.pt`` (atomically)."""
        return save_checkpoint(self.ckpt_path, self.payload(with_optimizer=True))

    def save_weights(self, path: Path) -> Path:
        """Write a weights-only checkpoint (snapshots, ``final.pt``)."""
        return save_checkpoint(path, self.payload(with_optimizer=False))

    def save_final(self) -> Path:
        return self.save_weights(self.run_dir / "final.pt")

    def resume(self) -> None:
        """Load ``checkpoint.pt``: weights, optimiser, counters and generators; refuse one of
        another trainer, rules or network, naming each difference."""
        if not self.ckpt_path.exists():
            raise CheckpointError(f"--resume: no checkpoint at {self.ckpt_path} to resume from")
        data = load_checkpoint(self.ckpt_path)
        if "trainer_state" not in data or "optimizer" not in data:
            raise CheckpointError(f"{self.ckpt_path} holds weights only (no optimizer state); it cannot be resumed")
        state = data["trainer_state"]
        # checkpoints written before the trainer's name was stored: expert iteration counted iterations
        made_by = state.get("trainer") or ("expert" if "iteration" in state else "ppo")
        if made_by != self.trainer:
            raise CheckpointError(f"--resume: {self.ckpt_path} was written by the {made_by} trainer, this is the "
                                  f"{self.trainer} trainer; resume it with its own command, or start a new run "
                                  f"(another --run-name, or --overwrite)")
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
        self.env_steps = int(state["env_steps"])
        self.train_seconds = float(state["train_seconds"])
        self.last_eval = dict(state["last_eval"])
        self.load_trainer_state({**state, "train_step": int(data["train_step"])})
        self.rng.bit_generator.state = state["numpy_rng"]
        self.torch_gen.set_state(state["torch_rng"])
        if "torch_global_rng" in state:
            torch.set_rng_state(state["torch_global_rng"])

    # -------------------------------------------------------------- the start of a run

    def warm_start(self) -> dict[str, float]:
        """Before the first step only: ``init_checkpoint``'s weights, or behaviour cloning of the
        heuristic for ``bc_games`` games (its statistics are returned; its decisions count as
        env steps, its time as training time)."""
        cfg = self.cfg
        if self.started:
            return {}
        if cfg.init_checkpoint:
            load_weights(self.model, self.rules, cfg.init_checkpoint)
            return {}
        if not cfg.bc_games:
            return {}
        from training.bc import behaviour_clone

        t0 = time.time()
        stats, steps = behaviour_clone(self.model, self.optimizer, self.rules, cfg, self.rng, self.torch_gen,
                                       self.progress)
        self.env_steps += steps
        self.train_seconds += time.time() - t0
        return stats
