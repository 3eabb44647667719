"""Distillation: fit a policy network to the throughput teacher's labels.

``chickenfoot distill --config configs/distill.yaml`` (:class:`DistillRun`, its config
:class:`training.config.DistillConfig`) is the whole job, and what ``make train`` runs: collect
labels for ``collect_minutes`` in ``workers`` processes (resumable shards in the run folder), fit a
network to them, save ``final.pt`` and evaluate it. It runs in the loop every trainer shares
(:class:`training.run.TrainingRun`): Ctrl-C keeps every label and prints the command that resumes.

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

import copy
import json
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.checkpoint import atomic_write, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent
from cf_env import ConfigError, RulesConfig
from cf_env.observation import SCORE_FACTOR, SCORE_SCALE
from training.config import DistillConfig
from training.fit import FitSettings
from training.labels import (
    collect_shards,
    collection_settings,
    imitation_labels,
    label_weights,
    read_collection,
    shard_paths,
    soft_targets,
)
from training.optim import descend
from training.run import StopSignals, TrainingRun, load_weights

__all__ = ["DistillConfig", "DistillRun", "FitSettings", "PackedObs", "agreement", "choice_regret", "distill_run", "fit",
           "imitate", "label_rules", "read_shards", "save_model", "split_labels", "split_paths", "strength",
           "teacher_regret"]


def split_labels(folder: str | Path | Sequence[str | Path], holdout: float = 0.1, limit: int | None = None,
                 temperature: float | None = None, weighting: str = "none",
                 heldout: str | Path | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The training labels (the first ``limit`` of the shards before the held-out ones) and the
    held-out labels (the last ``holdout`` fraction of the last folder's shards, at least one).
    With ``heldout`` (a label folder of the same rules, not one of ``folder``), the held-out
    labels are all of its shards and the training labels every shard of ``folder``
    (``holdout`` unused): fits to collections of any size are then scored on the same states.

    With ``temperature``, the training labels come ready for :func:`fit` in less than half the
    memory (about 1.5 kB a label for the 4-player double-9 rules, 3.2 kB without): the soft
    targets at that temperature replace ``q`` and ``worlds``, and the observations are a
    :class:`PackedObs`; with a ``weighting`` other than ``none``, each label's ``weight``
    (:func:`training.labels.label_weights`) is kept beside them. Without it, every array is as the shards hold it.

    ``folder`` may be several collections of one rule set (say a heuristic-played one and DAgger
    rounds played by networks fitted to it): their shards are read in the order given."""
    folders = [Path(folder)] if isinstance(folder, (str, Path)) else [Path(f) for f in folder]
    if not folders:
        raise ConfigError("no label folders given")
    every = folders if heldout is None else [*folders, Path(heldout)]
    settings = [read_collection(f) for f in every]
    _one_rule_set(every, settings)
    if temperature:
        _warn_overruled_values(folders, settings, temperature)
    train_paths, test_paths = split_paths(folders, holdout, heldout)
    return read_shards(train_paths, limit, temperature, weighting), read_shards(test_paths, None)


def _warn_overruled_values(folders: Sequence[Path], settings: Sequence[dict[str, Any]], temperature: float) -> None:
    """Warn when a folder's teacher (``settings``: the folders' collections, in order) is an agent
    class whose choices overrule its values (class attribute ``choices_overrule_values``, as the
    lab's SPARTA search, ``lab.sparta:Sparta``, sets): its ``q`` are the search's own means, so
    targets at a temperature above 0 learn the means rather than the choices it played
    (``temperature=0`` learns the choices)."""
    from agents.spec import AgentSpecError, import_target, parse_spec

    for path, collection in zip(folders, settings):
        teacher = collection.get("teacher", "")
        parsed = parse_spec(teacher)
        if parsed.kind != "python":
            continue  # a search spec: its q are what it chose by
        try:
            overrules = getattr(import_target(parsed.argument), "choices_overrule_values", False)
        except AgentSpecError:  # its class cannot be imported here: reading its labels needs nothing of it
            continue
        if not overrules:
            continue
        warnings.warn(f"{path}: the teacher {teacher!r} keeps its blueprint's choice unless the search beats it by "
                      f"a margin, but its labels' q are the search's own means: targets at temperature "
                      f"{temperature:g} learn the means, not its choices (fit at temperature 0 to learn those)",
                      stacklevel=3)


def split_paths(folders: Sequence[Path], holdout: float,
                heldout: str | Path | None = None) -> tuple[list[Path], list[Path]]:
    """:func:`split_labels`'s training and held-out shards."""
    if heldout is not None:
        heldout = Path(heldout)
        if any(heldout.resolve() == Path(f).resolve() for f in folders):
            raise ConfigError(f"{heldout} is both a training folder and the held-out one: collect the held-out "
                              f"labels into a folder of their own (another --seed)")
        train, test = [p for f in folders for p in shard_paths(f)], shard_paths(heldout)
        if not train or not test:
            raise ConfigError(f"no label shards in {', '.join(map(str, folders)) if not train else heldout}")
        return train, test
    last = shard_paths(folders[-1])
    paths = [p for f in folders[:-1] for p in shard_paths(f)] + last
    if len(paths) < 2 or not last:
        raise ConfigError(f"{', '.join(map(str, folders))}: {len(paths)} label shard(s), {len(last)} in the last "
                          f"folder; held-out agreement needs at least 2, one of them in the last folder")
    held = max(1, int(round(len(last) * holdout)))
    return paths[:-held], paths[-held:]


def read_shards(paths: list[Path], cap: int | None, temperature: float | None = None,
                 weighting: str = "none") -> dict[str, Any]:
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
            if weighting != "none":
                part["weight"] = label_weights(part["q"], part["mask"], weighting)
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
        out["weighting"] = weighting
        if packed and "obs" in out:
            out["obs"] = PackedObs(out["obs"])
    return out


def _label_weights(train: dict[str, Any], weighting: str) -> torch.Tensor | None:
    """Each training label's weight in :func:`fit`'s cross-entropy, scaled to mean 1 (``None``
    for ``weighting="none"``: every label alike, no product in the loop): read ready by
    :func:`split_labels`, or computed here from the values."""
    if weighting == "none":
        return None
    weight = train["weight"] if "weight" in train else label_weights(train["q"], train["mask"], weighting)
    if not weight.sum() > 0:
        raise ConfigError(f"every training label weighs 0 under weighting={weighting!r} (the teacher values all "
                          f"of their actions alike)")
    return torch.from_numpy(weight / weight.mean(dtype=np.float64)).float()


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
    return _one_rule_set(paths, [read_collection(p) for p in paths])


def _one_rule_set(paths: Sequence[Path], settings: Sequence[dict[str, Any]]) -> RulesConfig:
    """The rules the collections ``settings`` (of ``paths``) share; a ConfigError when they differ."""
    found = [RulesConfig.from_dict(collection["rules"]) for collection in settings]
    if any(rules != found[0] for rules in found[1:]):
        raise ConfigError(f"label folders of different rules: {', '.join(map(str, paths))}")
    return found[0]


def _initial_model(init: str | ActorCritic | None, config: RulesConfig, hidden: Sequence[int],
                   action_head: int = 0, trunk: str = "tanh") -> ActorCritic:
    """A new network, with ``init``'s weights when given (a path or ``zoo:NAME``, of these rules
    and ``hidden`` sizes or narrower; an older observation version is widened; an action head
    ``init`` lacks starts at zero), or ``init`` itself when it is a network (trained on from there)."""
    if isinstance(init, ActorCritic):
        return init
    model = ActorCritic.for_rules(config, tuple(hidden), action_head, trunk)
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
    return choice_regret(_network_choices(model, labels), labels)


def choice_regret(picked: np.ndarray, labels: dict[str, np.ndarray]) -> float:
    """The teacher's value lost, on average, by choosing ``picked`` (one action a label) instead
    of the teacher's best: ``labels`` must keep the teacher's values (``q``) and masks."""
    q = labels["q"]
    best = np.where(labels["mask"], q, -np.inf).max(axis=1)
    return float((best - q[np.arange(len(q)), picked]).mean()) if len(q) else 0.0


def _held_out(model: ActorCritic, test: dict[str, np.ndarray]) -> dict[str, float]:
    """The agreement and, when the labels keep the teacher's values, the regret: one forward pass."""
    picked = _network_choices(model, test)
    out = {"test_agreement": float((picked == test["choice"]).sum()) / max(len(picked), 1)}
    return out | ({"test_regret": choice_regret(picked, test)} if "q" in test else {})


def fit(train: dict[str, Any], config: RulesConfig, settings: FitSettings | None = None,
        init: str | ActorCritic | None = None, test: dict[str, np.ndarray] | None = None,
        progress: bool = True) -> tuple[ActorCritic, dict[str, Any]]:
    """A network fitted to ``train`` as ``settings`` say (see the module docstring); with
    ``test``, its held-out agreement after each epoch is in the statistics. ``init``: a checkpoint
    to start from, or a network to train on (:func:`imitate`'s). ``train`` is
    :func:`split_labels`'s (read at ``settings.temperature`` or not: the same network either
    way)."""
    from tqdm.auto import tqdm

    settings = settings if settings is not None else FitSettings()
    temperature, epochs, minibatch = settings.temperature, settings.epochs, settings.minibatch
    seed = settings.seed
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = _initial_model(init, config, settings.hidden, settings.action_head, settings.trunk)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
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
        if train.get("weighting", "none") != settings.weighting:
            raise ConfigError(f"these labels' weights are {train.get('weighting', 'none')!r}, not "
                              f"{settings.weighting!r}: read them with split_labels(..., "
                              f"weighting={settings.weighting!r})")
        target = torch.from_numpy(train["target"])
    else:
        target = torch.from_numpy(soft_targets(train["q"], train["mask"], train["choice"], temperature))
    weights = _label_weights(train, settings.weighting)
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
                per_label = (target[j] * logp).sum(-1)
                ce = -(per_label.mean() if weights is None else (weights[j] * per_label).mean())
                v = 0.5 * ((value - ret[j]) ** 2).mean()
                loss = ce + settings.vf_coef * v
                descend(optimizer, loss, model, settings.max_grad_norm)
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
    return model, {"labels": n, "temperature": temperature, "weighting": settings.weighting, "epochs": epochs,
                   "seconds": time.perf_counter() - start,
                   "history": history} | ({"start": before} if before else {})


def imitate(agent: str, config: RulesConfig, games: int, epochs: int, hidden: Sequence[int] = (256, 256),
            seed: int = 0, learning_rate: float = 1e-3, progress: bool = True,
            action_head: int = 0, trunk: str = "tanh") -> tuple[ActorCritic, dict[str, Any]]:
    """A warm start: a network fitted from scratch to ``games`` games of ``agent``'s own play
    (:func:`training.labels.imitation_labels`, its choices as targets), before the teacher's
    labels. With the heuristic it costs no search and starts the network from the heuristic's
    play, so fewer teacher labels go to learning what the heuristic already does."""
    from agents import load

    labels = imitation_labels(load(agent, config), config, games, seed)
    model, stats = fit(labels, config, FitSettings(temperature=0.0, epochs=epochs, learning_rate=learning_rate,
                                                   hidden=tuple(hidden), seed=seed, action_head=action_head,
                                                   trunk=trunk),
                       progress=progress)
    return model, {"agent": agent, "games": games, **stats}


def save_model(model: ActorCritic, config: RulesConfig, path: str | Path, stats: dict[str, Any],
               precision: str = "float32") -> Path:
    """A checkpoint ``chickenfoot eval`` and ``agents.load`` read (``precision``: how its weights
    are stored, see :func:`agents.checkpoint.store_weights`)."""
    return save_checkpoint(path, model_payload(model, config, int(stats["labels"]),
                                               {"trainer": "distill", **{k: v for k, v in stats.items()
                                                                         if k != "history"}}, precision=precision))


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


class DistillRun(TrainingRun):
    """Distillation as a run of :class:`training.run.TrainingRun`'s loop (the run's folder, stop
    signals, time limit, TensorBoard, the summary): round 0 collects labels played by
    ``behaviour`` and fits a network; each of the ``dagger_rounds`` after it collects the latest
    network's own decisions and fits again to every label.

    The run folder holds ``labels/`` (played by ``behaviour``), ``labels-dagger-K/`` (played by
    ``round-{K-1}.pt``), each round's network ``round-K.pt``, ``rounds.json`` (what each round
    collected and fitted) and, at the end, ``final.pt`` and ``summary.json``. Every fit starts
    from the same network (the imitation warm start, a checkpoint or scratch) and holds out the
    same shards, the last ``holdout`` of ``labels/``, so the rounds' agreements compare.

    Ctrl-C or SIGTERM stops at once, during a collection or a fit: every label shard written is
    kept. ``resume`` goes on with the first round whose network is missing (a finished run: its
    last round, collecting on and fitting again); shards are played from their own seeds and fits
    from the run's, so with a shard budget (``collect_minutes: 0``) a resumed run ends with the
    network an uninterrupted one would have."""

    trainer = "distill"
    budget_key = "dagger_rounds"
    unit = "round"

    def __init__(self, cfg: DistillConfig, resume: bool = False, progress: bool = True,
                 overwrite: bool = False) -> None:
        super().__init__(cfg, resume=resume, progress=progress, overwrite=overwrite)
        self.cfg: DistillConfig = cfg
        torch.set_num_threads(cfg.torch_threads)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.stages = [self.run_dir / "labels"] + [self.run_dir / f"labels-dagger-{k}"
                                                   for k in range(1, cfg.dagger_rounds + 1)]
        self.networks = [self.run_dir / f"round-{k}.pt" for k in range(len(self.stages))]
        self.rounds_path = self.run_dir / "rounds.json"
        self.rounds: list[dict[str, Any]] = []
        if resume:
            self.iteration = next((k for k, net in enumerate(self.networks) if not net.exists()), len(self.stages) - 1)
            if self.rounds_path.exists():
                self.rounds = [r for r in json.loads(self.rounds_path.read_text()) if r["round"] < self.iteration]
        self.start: ActorCritic | str | None = cfg.init_checkpoint or None
        self.warm: dict[str, Any] = {}
        self.model: ActorCritic | None = None
        self.fit_stats: dict[str, Any] = {}
        self.test_labels = 0
        self.strengths: dict[str, dict[str, Any]] = {}

    # -------------------------------------------------------------- the loop's steps (TrainingRun.run)

    @property
    def budget(self) -> int:
        return len(self.stages)  # round 0, then the dagger rounds

    def begin(self, writer: Any, stop: StopSignals) -> None:
        """The imitation warm start (redone on resume: it is seeded, and every round starts from it)."""
        cfg = self.cfg
        if cfg.imitate:
            with stop.at_once():
                self.start, warm = imitate(cfg.imitate, self.rules, cfg.imitation_games, cfg.imitation_epochs,
                                           cfg.hidden, cfg.seed, progress=self.progress, action_head=cfg.action_head,
                                           trunk=cfg.trunk)
            self.warm = {k: v for k, v in warm.items() if k != "history"}

    def step(self, stop: StopSignals) -> dict[str, float]:
        """Round ``k``: collect its labels, then fit a network to every label so far."""
        cfg, k = self.cfg, self.iteration
        behaviour = cfg.behaviour if k == 0 else str(self.networks[k - 1].resolve())
        minutes = cfg.collect_minutes if k == 0 or cfg.dagger_minutes is None else cfg.dagger_minutes
        settings = collection_settings(behaviour, cfg.teacher, cfg.opponents, self.rules, cfg.seed + k,
                                       cfg.shard_games, cfg.self_play_prob, cfg.slots)
        with stop.at_once():  # the shards written are kept; a fit is redone exactly from them
            collected = collect_shards(self.stages[k], settings, cfg.max_shards, cfg.workers, minutes,
                                       progress=self.progress, address=cfg.address)
            train, test = split_labels(self.stages[1:k + 1] + self.stages[:1], cfg.holdout,
                                       temperature=cfg.temperature, weighting=cfg.weighting)
            init = copy.deepcopy(self.start) if isinstance(self.start, ActorCritic) else self.start
            if isinstance(init, ActorCritic) and cfg.imitate and "test_agreement" not in self.warm:
                self.warm["test_agreement"] = agreement(init, test)
            model, stats = fit(train, self.rules, cfg.fit_settings(), init=init, test=test, progress=self.progress)
        save_model(model, self.rules, self.networks[k], {**stats, "imitation": self.warm, "config": cfg.to_dict(),
                                                         "round": k})
        self.model, self.fit_stats, self.test_labels = model, stats, len(test["ret"])
        last = stats["history"][-1]
        self.rounds.append({"round": k, "behaviour": behaviour, "collection": collected, "labels": len(train["ret"]),
                            "test_agreement": last.get("test_agreement")})
        return {"distill/labels": float(len(train["ret"])), "distill/labels_per_second": collected["labels_per_second"],
                "distill/cross_entropy": last["cross_entropy"], "distill/value_loss": last["value_loss"],
                **({"distill/test_agreement": last["test_agreement"]} if "test_agreement" in last else {})}

    def checkpoint_due(self) -> bool:
        return True

    def save(self) -> Path:
        """``rounds.json`` (the shards and round networks are written as they come)."""
        atomic_write(self.rounds_path, lambda f: f.write(json.dumps(self.rounds, indent=2, default=str).encode()))
        return self.run_dir

    def evaluate_now(self) -> dict[str, float]:
        if self.model is None or not self.cfg.eval_deal_sets:
            return {}
        self.strengths = {f"win_rate_vs_{opp}": strength(self.model, self.rules, opp, self.cfg.eval_deal_sets,
                                                         self.cfg.seed) for opp in self.cfg.eval_opponents}
        return {k: v["win_rate"] for k, v in self.strengths.items()}

    def save_final(self) -> Path:
        assert self.model is not None
        return save_model(self.model, self.rules, self.run_dir / "final.pt",
                          {**self.fit_stats, "imitation": self.warm, "config": self.cfg.to_dict()})

    def summary(self) -> dict[str, Any]:
        last = self.rounds[-1] if self.rounds else {}
        return {"round": self.iteration, "labels": last.get("labels", 0), "test_labels": self.test_labels,
                "collection": last.get("collection", {}), "imitation": self.warm, "fit": self.fit_stats,
                "rounds": self.rounds, "eval": self.strengths}


def distill_run(cfg: DistillConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict:
    """Run distillation with ``cfg`` (:class:`DistillRun`); returns the summary (also written to
    ``summary.json`` in the run folder)."""
    return DistillRun(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
