"""The life of a training run, written once for every trainer (as Stable-Baselines3's
``BaseAlgorithm`` holds ``learn``/``save``/``load`` for each of its algorithms).

:class:`TrainingRun` is the base of :class:`training.ppo.Trainer` and
:class:`training.expert.ExpertTrainer`. It owns what every run does the same way:

* **the folder**: ``runs_dir/run_name``; a new run never lands in a folder that holds another
  (:func:`claim_run_dir`: refuse, or clear it on ``overwrite``);
* **seeding**: one numpy generator and one torch generator from ``seed``, torch's global seed and
  its thread count;
* **the network and its optimiser** on the configured device;
* **checkpoints**: ``checkpoint.pt`` (weights, optimiser, the trainer's state and every
  generator's state: resumable) and weights-only payloads for snapshots and ``final.pt``;
* **resuming**: the checkpoint must come from the same trainer, rules and network, and a mismatch
  names each difference;
* **the warm start**: ``init_checkpoint`` weights, or behaviour cloning of the heuristic;
* **stop signals**: Ctrl-C or SIGTERM stops after the current update or iteration, with a
  checkpoint (:class:`StopSignals`; the command line then prints the command that resumes);
* **TensorBoard**: a writer with the config as a table.

A trainer adds what it collects and how it learns: its ``run`` loop, :meth:`TrainingRun.trainer_state`
/ :meth:`TrainingRun.load_trainer_state` for its own counters, and its ``train_step``.

:class:`training.workers.WorkerPool` is the one pool of worker processes the trainers and the
evaluation use.
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

from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, resolve_device
from cf_env import ObservationEncoder, RulesConfig
from training.config import NetworkTrainerConfig, TrainConfigError

__all__ = ["RunCompleteError", "RunExistsError", "StopSignals", "TrainingRun", "claim_run_dir", "jsonable", "load_weights"]


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
    ``model``, on whatever device it is; the rules and network sizes must match. A network of an
    older observation version is widened to ``model``'s (:func:`agents.torch_policy.widen_weights`:
    it plays as before and the new features start at weight zero), and a narrower network of the
    same depth is grown into ``model``'s wider layers (:func:`agents.torch_policy.grow_hidden`:
    it plays as before, the new units start unread)."""
    from agents import zoo_path
    from agents.torch_policy import grow_hidden, model_from_checkpoint, widen_weights

    path = zoo_path(spec[4:]) if spec.startswith("zoo:") else Path(spec)
    data = load_checkpoint(path)
    if data["rules"] != rules.to_dict():
        raise CheckpointError(f"init_checkpoint {spec} was trained with rules {data['rules']}, "
                              f"the config says {rules.to_dict()}")
    old = model_from_checkpoint(data, rules, path)
    grows = len(old.hidden) == len(model.hidden) and all(o <= n for o, n in zip(old.hidden, model.hidden))
    if not grows or old.num_actions != model.num_actions:
        raise CheckpointError(f"init_checkpoint {spec} has network {old.kwargs()}, "
                              f"the config builds {model.kwargs()}; set hidden to match (or wider, layer by layer)")
    if old.action_head not in (0, model.action_head):
        raise CheckpointError(f"init_checkpoint {spec} has an action head of width {old.action_head}, the config "
                              f"builds {model.action_head or 'none'}; set action_head to match")
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


class StopSignals:
    """Ctrl-C (SIGINT) or SIGTERM asks the loop to stop after the current update and checkpoint;
    a second one stops at once. Installed only in the main thread (signals reach no other). Use
    as a context manager: the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.received: str | None = None
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

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received:  # the second signal: give up on a clean stop
            self.__exit__()
            raise KeyboardInterrupt
        self.received = signal.Signals(signum).name
        print(f"\n{self.received}: stopping after this step of the run and writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)


class TrainingRun:
    """The run's life (see the module docstring); subclasses set ``trainer`` (the name stored in
    their checkpoints) and implement ``run``, ``train_step``, ``trainer_state`` and
    ``load_trainer_state``."""

    trainer = ""  #: the trainer's name in its checkpoints ("ppo", "expert")

    def __init__(self, cfg: NetworkTrainerConfig, resume: bool = False, progress: bool = True,
                 overwrite: bool = False) -> None:
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
        # --- the network and its optimiser (on cfg.device; games stay on the CPU)
        self.device = resolve_device(cfg.device)
        self.encoder = ObservationEncoder(self.rules)
        self.model = ActorCritic.for_rules(self.rules, tuple(cfg.hidden), cfg.action_head).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.env_steps = 0  # every decision of every seat
        self.train_seconds = 0.0
        self.last_eval: dict[str, float] = {}

    # -------------------------------------------------------------- what a trainer adds

    @property
    def train_step(self) -> int:
        """The step count stored as the checkpoint's ``train_step``."""
        raise NotImplementedError

    @property
    def started(self) -> bool:
        """Whether the run has made progress (a warm start happens only before)."""
        raise NotImplementedError

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

    def refuse_complete(self, done: int, target: int, unit: str, key: str) -> None:
        """After a resume: a run that has already done its ``target`` (``done`` >= it) has nothing
        left to do; say so, and how to give it more (the config ``key``'s flag)."""
        if done >= target:
            flag = "--" + key.replace("_", "-")
            raise RunCompleteError(f"{self.run_dir} is complete: {done} {unit} of {key} {target}; to train it "
                                   f"further, resume it with a larger budget, e.g. --resume {flag} {2 * target}")

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

    def open_writer(self) -> Any:
        """A TensorBoard writer in the run folder, the config logged as a table."""
        from torch.utils.tensorboard import SummaryWriter

        self.run_dir.mkdir(parents=True, exist_ok=True)
        writer = SummaryWriter(str(self.run_dir))
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in self.cfg.to_dict().items()))
        return writer
