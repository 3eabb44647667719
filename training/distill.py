"""Distillation: fit a policy network to the throughput teacher's labels.

``chickenfoot distill --config configs/distill.yaml`` (:func:`distill_run`, :class:`DistillConfig`)
is the whole job: collect labels for ``collect_minutes`` in ``workers`` processes (resumable
shards in the run folder), fit a network to them, save ``final.pt`` and evaluate it.

:func:`fit` trains an :class:`agents.torch_policy.ActorCritic` (from a checkpoint, or from
scratch) on labels collected by :mod:`training.labels`: cross-entropy to the teacher's targets
(:func:`training.labels.soft_targets`: its choice at temperature 0, else a softmax over its
per-action values) and, for the value head, the seat's discounted return. The labels' last
``holdout`` fraction (whole shards: other games) is never trained on; the student's agreement
with the teacher there is what :func:`agreement` reports.

``chickenfoot labels fit`` fits one network to label folders by hand::

    chickenfoot labels fit runs/labels-4p --limit 100000 --temperature 0.02 --out net.pt

(Learning curves over label counts are lab code: ``python -m lab.distill_curve``.)
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import Field, field_validator, model_validator
from torch import nn

from agents.checkpoint import model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent
from cf_env import ConfigError, RulesConfig
from cf_env.observation import SCORE_FACTOR, SCORE_SCALE
from training.config import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    RunConfig,
    TrainConfigError,
    check_agent_specs,
    check_teacher,
)
from training.labels import (
    DEFAULT_TEACHER,
    collect_shards,
    collection_settings,
    imitation_labels,
    shard_paths,
    soft_targets,
)
from training.run import load_weights

__all__ = ["DistillConfig", "PackedObs", "agreement", "distill_run", "fit", "imitate", "label_rules", "save_model",
           "split_labels", "split_paths", "strength", "teacher_regret"]


def split_labels(folder: str | Path | Sequence[str | Path], holdout: float = 0.1, limit: int | None = None,
                 temperature: float | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The training labels (the first ``limit`` of the shards before the held-out ones) and the
    held-out labels (the last ``holdout`` fraction of the last folder's shards, at least one).

    With ``temperature``, the training labels come ready for :func:`fit` in less than half the
    memory (about 1.5 kB a label for the 4-player double-9 rules, 3.2 kB without): the soft
    targets at that temperature replace ``q`` and ``worlds``, and the observations are a
    :class:`PackedObs`. Without it, every array is as the shards hold it.

    ``folder`` may be several collections of one rule set (say a heuristic-played one and DAgger
    rounds played by networks fitted to it): their shards are read in the order given."""
    folders = [Path(folder)] if isinstance(folder, (str, Path)) else [Path(f) for f in folder]
    if not folders:
        raise ConfigError("no label folders given")
    label_rules(folders)  # one rule set
    train_paths, test_paths = split_paths(folders, holdout)
    return _read_shards(train_paths, limit, temperature), _read_shards(test_paths, None)


def split_paths(folders: Sequence[Path], holdout: float) -> tuple[list[Path], list[Path]]:
    """:func:`split_labels`'s training and held-out shards."""
    last = shard_paths(folders[-1])
    paths = [p for f in folders[:-1] for p in shard_paths(f)] + last
    if len(paths) < 2 or not last:
        raise ConfigError(f"{', '.join(map(str, folders))}: {len(paths)} label shard(s), {len(last)} in the last "
                          f"folder; held-out agreement needs at least 2, one of them in the last folder")
    held = max(1, int(round(len(last) * holdout)))
    return paths[:-held], paths[-held:]


def _read_shards(paths: list[Path], cap: int | None, temperature: float | None = None) -> dict[str, Any]:
    """The first ``cap`` labels of ``paths`` in one array per key, filled shard by shard (no
    second copy at the peak). With ``temperature``: ready for :func:`fit` (its targets instead of
    ``q`` and ``worlds``; its observations a :class:`PackedObs` when every shard packs exactly)."""
    sizes: list[int] = []
    total = 0
    for path in paths:
        with np.load(path) as data:
            sizes.append(len(data["ret"]))
        total += sizes[-1]
        if cap is not None and total >= cap:
            break
    total = total if cap is None else min(cap, total)
    out: dict[str, Any] = {}
    row = 0
    packed = temperature is not None
    for path, size in zip(paths, sizes):
        take = min(size, total - row)
        with np.load(path) as data:
            part = {k: data[k][:take] for k in data.files}
        if temperature is not None:
            part["target"] = soft_targets(part.pop("q"), part["mask"], part["choice"], temperature)
            part.pop("worlds", None)
        if packed:
            codes = PackedObs.pack(part["obs"])
            if codes is not None:
                part["obs"] = codes
            else:  # a value no code holds (a score past int16): float32 from here, the rows so far unpacked
                packed = False
                if out:
                    out["obs"] = np.concatenate([PackedObs(out["obs"][:row])[:], out["obs"][row:].astype(np.float32)])
        if not out:
            out = {k: np.empty((total,) + v.shape[1:], v.dtype) for k, v in part.items()}
        for k, v in part.items():
            out[k][row:row + take] = v
        row += take
    if temperature is not None:
        out["target_temperature"] = float(temperature)
        if packed and "obs" in out:
            out["obs"] = PackedObs(out["obs"])
    return out


class PackedObs:
    """Training observations in half of float32's memory, read back exactly: int16 codes
    ``round(obs * SCORE_SCALE)``. Every feature is a count (an integer) or the ``scores`` block's
    points / ``SCORE_SCALE``, rounded once to float32 from the float64 product, which the decoding
    repeats. Indexing (an integer array, a slice) gives float32 rows."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes

    @staticmethod
    def pack(obs: np.ndarray) -> np.ndarray | None:
        """``obs``'s codes, or None when some value would not read back exactly (other encoders)."""
        scaled = np.rint(obs.astype(np.float64) * SCORE_SCALE)
        if len(obs) and (np.abs(scaled).max() > np.iinfo(np.int16).max):
            return None
        codes = scaled.astype(np.int16)
        return codes if np.array_equal(_unpack(codes), obs) else None

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    def __getitem__(self, index: Any) -> np.ndarray:
        return _unpack(self.codes[index])


def _unpack(codes: np.ndarray) -> np.ndarray:
    return (codes.astype(np.float64) * SCORE_FACTOR).astype(np.float32)


def label_rules(folders: str | Path | Sequence[str | Path]) -> RulesConfig:
    """The rules of one or more label folders (their ``collection.json``); a
    :class:`~cf_env.ConfigError` when a folder is not a collection or they differ."""
    paths = [Path(folders)] if isinstance(folders, (str, Path)) else [Path(f) for f in folders]
    found: list[RulesConfig] = []
    for path in paths:
        meta = path / "collection.json"
        if not meta.is_file():
            raise ConfigError(f"{path} is not a label collection (no collection.json): "
                              f"make one with chickenfoot labels collect --out {path}")
        found.append(RulesConfig.from_dict(json.loads(meta.read_text())["rules"]))
    if any(rules != found[0] for rules in found[1:]):
        raise ConfigError(f"label folders of different rules: {', '.join(map(str, paths))}")
    return found[0]


def _initial_model(init: str | ActorCritic | None, config: RulesConfig, hidden: Sequence[int],
                   action_head: int = 0) -> ActorCritic:
    """A new network, with ``init``'s weights when given (a path or ``zoo:NAME``, of these rules
    and ``hidden`` sizes or narrower; an older observation version is widened; an action head
    ``init`` lacks starts at zero), or ``init`` itself when it is a network (trained on from there)."""
    if isinstance(init, ActorCritic):
        return init
    model = ActorCritic.for_rules(config, tuple(hidden), action_head)
    if init is not None:
        load_weights(model, config, init)
    return model


@torch.no_grad()
def _network_choices(model: ActorCritic, labels: dict[str, np.ndarray]) -> np.ndarray:
    """The network's most likely legal action on each labelled state."""
    model.eval()
    obs = torch.from_numpy(labels["obs"])
    mask = torch.from_numpy(labels["mask"])
    out = [model(obs[start:start + 4096], mask[start:start + 4096])[0].argmax(-1).numpy()
           for start in range(0, len(obs), 4096)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def agreement(model: ActorCritic, labels: dict[str, np.ndarray]) -> float:
    """How often the network's most likely legal action is the teacher's choice."""
    return float((_network_choices(model, labels) == labels["choice"]).sum()) / max(len(labels["choice"]), 1)


def teacher_regret(model: ActorCritic, labels: dict[str, np.ndarray]) -> float:
    """The teacher's value lost by the network's choices, on average: ``max q - q[network's action]``
    over the labelled states (0 when it always picks a best-valued action). Unlike the agreement,
    it counts a near-tie missed as almost nothing and a blunder as much as it costs; each ``q`` is
    the teacher's PIMC mean, so it is as noisy as the teacher's worlds."""
    return _regret(_network_choices(model, labels), labels)


def _regret(picked: np.ndarray, labels: dict[str, np.ndarray]) -> float:
    q = labels["q"]
    best = np.where(labels["mask"], q, -np.inf).max(axis=1)
    return float((best - q[np.arange(len(q)), picked]).mean()) if len(q) else 0.0


def _held_out(model: ActorCritic, test: dict[str, np.ndarray]) -> dict[str, float]:
    """The agreement and, when the labels keep the teacher's values, the regret: one forward pass."""
    picked = _network_choices(model, test)
    out = {"test_agreement": float((picked == test["choice"]).sum()) / max(len(picked), 1)}
    return out | ({"test_regret": _regret(picked, test)} if "q" in test else {})


def fit(train: dict[str, Any], config: RulesConfig, init: str | ActorCritic | None = None, temperature: float = 0.02,
        epochs: int = 4, learning_rate: float = 3e-4, minibatch: int = 256, hidden: Sequence[int] = (256, 256),
        vf_coef: float = 0.5, max_grad_norm: float = 0.5, seed: int = 0, test: dict[str, np.ndarray] | None = None,
        progress: bool = True, action_head: int = 0) -> tuple[ActorCritic, dict[str, Any]]:
    """A network fitted to ``train`` (see the module docstring); with ``test``, its held-out
    agreement after each epoch is in the statistics. ``init``: a checkpoint to start from, or a
    network to train on (:func:`imitate`'s). ``train`` is :func:`split_labels`'s (read at
    ``temperature`` or not: the same network either way). ``action_head``: the width of an
    :class:`~agents.torch_policy.ActionScorer` for a new network (0: none)."""
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = _initial_model(init, config, hidden, action_head)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    if isinstance(train["obs"], PackedObs):
        packed: PackedObs = train["obs"]
        obs_rows = lambda j: torch.from_numpy(packed[j.numpy()])  # noqa: E731
    else:
        whole = torch.from_numpy(train["obs"])
        obs_rows = lambda j: whole[j]  # noqa: E731
    mask = torch.from_numpy(train["mask"])
    if "target" in train:
        if train.get("target_temperature") != temperature:
            raise ConfigError(f"these labels' targets are at temperature {train.get('target_temperature')}, not "
                              f"{temperature}: read them with split_labels(..., temperature={temperature})")
        target = torch.from_numpy(train["target"])
    else:
        target = torch.from_numpy(soft_targets(train["q"], train["mask"], train["choice"], temperature))
    ret = torch.from_numpy(train["ret"])
    n = len(ret)
    if n == 0:
        raise ConfigError("no training labels")
    history: list[dict[str, float]] = []
    before = _held_out(model, test) if test is not None and init is not None else {}  # where a fine-tune starts
    start = time.perf_counter()
    steps = epochs * ((n + minibatch - 1) // minibatch)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: max(0.0, 1.0 - k / steps))
    with tqdm(total=steps, desc=f"fit {n} labels", unit="batch", disable=not progress, leave=False) as bar:
        for epoch in range(epochs):
            model.train()
            perm = torch.randperm(n, generator=gen)
            ce_sum = v_sum = 0.0
            batches = 0
            for s in range(0, n, minibatch):
                j = perm[s:s + minibatch]
                logits, value = model(obs_rows(j), mask[j])
                logp = torch.log_softmax(logits, dim=-1).masked_fill(~mask[j], 0.0)
                ce = -(target[j] * logp).sum(-1).mean()
                v = 0.5 * ((value - ret[j]) ** 2).mean()
                loss = ce + vf_coef * v
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                optimizer.step()
                schedule.step()
                ce_sum += ce.item()
                v_sum += v.item()
                batches += 1
                bar.update(1)
            row = {"epoch": epoch + 1, "cross_entropy": ce_sum / batches, "value_loss": v_sum / batches,
                   "train_agreement": agreement(model, {k: train[k][:20_000] for k in ("obs", "mask", "choice")})}
            if test is not None:
                row |= _held_out(model, test)
            history.append(row)
    model.eval()
    return model, {"labels": n, "temperature": temperature, "epochs": epochs, "seconds": time.perf_counter() - start,
                   "history": history} | ({"start": before} if before else {})


def imitate(agent: str, config: RulesConfig, games: int, epochs: int, hidden: Sequence[int] = (256, 256),
            seed: int = 0, learning_rate: float = 1e-3, progress: bool = True,
            action_head: int = 0) -> tuple[ActorCritic, dict[str, Any]]:
    """A warm start: a network fitted from scratch to ``games`` games of ``agent``'s own play
    (:func:`training.labels.imitation_labels`, its choices as targets), before the teacher's
    labels. With the heuristic it costs no search and starts the network from the heuristic's
    play, so fewer teacher labels go to learning what the heuristic already does."""
    from agents import load

    labels = imitation_labels(load(agent, config), config, games, seed)
    model, stats = fit(labels, config, temperature=0.0, epochs=epochs, learning_rate=learning_rate,
                       hidden=hidden, seed=seed, progress=progress, action_head=action_head)
    return model, {"agent": agent, "games": games, **stats}


def save_model(model: ActorCritic, config: RulesConfig, path: str | Path, stats: dict[str, Any]) -> Path:
    """A checkpoint ``chickenfoot eval`` and ``agents.load`` read."""
    return save_checkpoint(path, model_payload(model, config, int(stats["labels"]),
                                               {"trainer": "distill", **{k: v for k, v in stats.items()
                                                                         if k != "history"}}))


def strength(model: ActorCritic, config: RulesConfig, opponent: str, deal_sets: int, seed: int,
             workers: int = 1) -> dict[str, Any]:
    """The network (deterministic) in one seat against ``opponent`` in the others, duplicate deals;
    ``workers`` > 1 plays them in that many processes (the network goes to a temporary checkpoint
    they load), with the same result."""
    import tempfile

    from training.evaluate import evaluate

    with tempfile.TemporaryDirectory(prefix="cf-strength-") as tmp:
        net: str | TorchAgent = TorchAgent(model, config, name="distilled") if workers <= 1 else \
            str(save_checkpoint(Path(tmp) / "net.pt", model_payload(model, config, 0, {"trainer": "distill"})))
        report = evaluate([net] + [opponent] * (config.num_players - 1), config, deal_sets=deal_sets, seed=seed,
                          progress=False, workers=workers)
    r = report.results[0]
    return {"win_rate": r.win_rate, "win_rate_ci95": list(r.win_rate_ci95), "games": r.seat_games,
            "mean_points": r.mean_points}


class DistillConfig(RunConfig):
    """Distillation from scratch (and :class:`~training.config.RunConfig`'s fields: run_name,
    runs_dir, seed, rules, hidden, device).

    Collection (:mod:`training.labels`)
        teacher: a PIMC ``search`` spec; behaviour: the agent that plays the labelled seats
            (seat 0, and each other seat with ``self_play_prob``): ``heuristic`` by default, so
            nothing shipped is needed; opponents: the other seats' agent specs;
        workers (processes; with address, Ray actors on the cluster whose head is at
            ``HOST:PORT``), collect_minutes (no shard starts after that; 0 = max_shards only),
            max_shards, shard_games, slots (games in lockstep per worker).
    Learning (:func:`fit`)
        imitate (an agent spec, e.g. ``heuristic``; empty: none): first fit a network from
            scratch to ``imitation_games`` games of its play for ``imitation_epochs`` epochs
            (:func:`imitate`), then to the teacher's labels from there;
        init_checkpoint (empty: from scratch; not with imitate), temperature (0: the teacher's choice; else a
            softmax over its values), epochs, learning_rate (annealed to 0), minibatch, vf_coef,
            holdout (the last shards' share kept out for the agreement), torch_threads.
    DAgger rounds (:func:`distill_run`)
        dagger_rounds: after the first fit, this many rounds in which the latest network plays the
            labelled seats instead of ``behaviour`` (its own states, labelled by the same teacher)
            for ``dagger_minutes`` (empty: collect_minutes; at most max_shards shards), then a
            network is fitted again, from the same start, to every label so far. 0: none.
    Evaluation
        eval_deal_sets per opponent in eval_opponents, 1 vs the rest (0 = none).
    """

    teacher: str = DEFAULT_TEACHER
    behaviour: str = "heuristic"
    opponents: list[str] = Field(default_factory=lambda: ["heuristic"], min_length=1)
    self_play_prob: Probability = 0.5
    workers: PositiveInt = 2
    address: str | None = None
    collect_minutes: NonNegativeFloat = 8.0
    max_shards: PositiveInt = 10_000
    shard_games: PositiveInt = 8
    slots: PositiveInt = 8
    imitate: str = ""
    imitation_games: PositiveInt = 1000
    imitation_epochs: PositiveInt = 4
    init_checkpoint: str = ""
    temperature: NonNegativeFloat = 0.03
    epochs: PositiveInt = 10
    learning_rate: PositiveFloat = 1e-3
    minibatch: PositiveInt = 256
    vf_coef: NonNegativeFloat = 0.5
    holdout: Probability = 0.05
    torch_threads: PositiveInt = 2
    dagger_rounds: NonNegativeInt = 0
    dagger_minutes: NonNegativeFloat | None = None
    eval_deal_sets: NonNegativeInt = 25
    eval_opponents: list[str] = Field(default_factory=lambda: ["heuristic"])

    @field_validator("opponents", "eval_opponents")
    @classmethod
    def _known_agents(cls, specs: list[str]) -> list[str]:
        return check_agent_specs(specs)

    @field_validator("behaviour")
    @classmethod
    def _known_behaviour(cls, spec: str) -> str:
        check_agent_specs([spec])
        return spec

    @field_validator("imitate")
    @classmethod
    def _known_imitated(cls, spec: str) -> str:
        if spec:
            check_agent_specs([spec])
        return spec

    @model_validator(mode="after")
    def _one_start(self) -> DistillConfig:
        if self.imitate and self.init_checkpoint:
            raise ValueError(f"imitate ({self.imitate!r}) and init_checkpoint ({self.init_checkpoint!r}) "
                                   f"both choose the starting network: set one of them")
        return self

    @field_validator("teacher")
    @classmethod
    def _pimc_teacher(cls, spec: str) -> str:
        return check_teacher(spec)


def distill_run(cfg: DistillConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict:
    """Collect labels, fit, then ``dagger_rounds`` times collect the latest network's own
    decisions and fit again to every label; save ``final.pt`` and evaluate it. Returns the summary
    (also written to ``summary.json`` in the run folder).

    The run folder holds ``labels/`` (played by ``behaviour``), ``labels-dagger-K/`` (played by
    ``round-{K-1}.pt``) and each stage's network ``round-K.pt``. Every fit starts from the same
    network (the imitation warm start, a checkpoint or scratch) and holds out the same shards, the
    last ``holdout`` of ``labels/``, so the stages' agreements compare. ``resume`` keeps every
    label: it collects on in the last stage that has labels (the stages before it are kept as
    they are) and fits from there."""
    import copy
    import shutil

    torch.set_num_threads(cfg.torch_threads)
    folder = cfg.run_dir
    if folder.exists() and any(folder.iterdir()) and not resume:
        if not overwrite:
            raise TrainConfigError(f"{folder} already holds a run: --resume continues it (its labels are kept), "
                                   f"--overwrite deletes it first")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = cfg.rules_config
    stages = [folder / "labels"] + [folder / f"labels-dagger-{k}" for k in range(1, cfg.dagger_rounds + 1)]
    networks = [folder / f"round-{k}.pt" for k in range(len(stages))]
    first = max((k for k, f in enumerate(stages) if shard_paths(f)), default=0) if resume else 0
    if first and not networks[first - 1].exists():
        first -= 1  # the network that played the last stage is gone: its stage is fitted again
    start: ActorCritic | str | None = cfg.init_checkpoint or None
    warm: dict[str, Any] = {}
    if cfg.imitate:
        start, warm = imitate(cfg.imitate, config, cfg.imitation_games, cfg.imitation_epochs, cfg.hidden, cfg.seed,
                              progress=progress, action_head=cfg.action_head)
        warm = {k: v for k, v in warm.items() if k != "history"}
    rounds: list[dict[str, Any]] = []
    model: ActorCritic | None = None
    stats: dict[str, Any] = {}
    for k in range(first, len(stages)):
        behaviour = cfg.behaviour if k == 0 else str(networks[k - 1].resolve())
        minutes = cfg.collect_minutes if k == 0 or cfg.dagger_minutes is None else cfg.dagger_minutes
        settings = collection_settings(behaviour, cfg.teacher, cfg.opponents, config, cfg.seed + k, cfg.shard_games,
                                       cfg.self_play_prob, cfg.slots)
        collected = collect_shards(stages[k], settings, cfg.max_shards, cfg.workers, minutes, progress=progress,
                                   address=cfg.address)
        train, test = split_labels(stages[1:k + 1] + stages[:1], cfg.holdout, temperature=cfg.temperature)
        init = copy.deepcopy(start) if isinstance(start, ActorCritic) else start
        if isinstance(init, ActorCritic) and cfg.imitate and "test_agreement" not in warm:
            warm["test_agreement"] = agreement(init, test)
        model, stats = fit(train, config, init=init, temperature=cfg.temperature, epochs=cfg.epochs,
                           learning_rate=cfg.learning_rate, minibatch=cfg.minibatch, hidden=cfg.hidden,
                           vf_coef=cfg.vf_coef, seed=cfg.seed, test=test, progress=progress,
                           action_head=cfg.action_head)
        save_model(model, config, networks[k], {**stats, "imitation": warm, "config": cfg.to_dict(), "round": k})
        rounds.append({"round": k, "behaviour": behaviour, "collection": collected, "labels": len(train["ret"]),
                       "test_agreement": stats["history"][-1].get("test_agreement")})
    assert model is not None
    final = save_model(model, config, folder / "final.pt", {**stats, "imitation": warm, "config": cfg.to_dict()})
    evaluation = {f"win_rate_vs_{opp}": strength(model, config, opp, cfg.eval_deal_sets, cfg.seed)
                  for opp in cfg.eval_opponents} if cfg.eval_deal_sets else {}
    summary = {"final": str(final), "labels": rounds[-1]["labels"], "test_labels": len(test["ret"]),
               "collection": rounds[-1]["collection"], "imitation": warm, "fit": stats, "rounds": rounds,
               "eval": evaluation}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary
