"""The throughput teacher: search labels for distillation, many games in lockstep on the batched engine.

:func:`collect_labels` plays ``games`` games in ``slots`` slots of one
:class:`cf_env.vector.VectorGame`, every slot stepped together: the student network acts for all
of its seats in one batched forward pass, each opponent spec for all of its seats in one
``act_batch`` call, and at every student decision with a choice the teacher (a PIMC search spec,
by default the racing search ``search:ms=0:sims=256:race=2``, :mod:`agents.search.racing`)
searches that seat's observation on the compiled kernels. What a label keeps:

==========  ================  ================================================================
key         shape             what
==========  ================  ================================================================
``obs``     (N, D) float32    the student's observation
``mask``    (N, A) bool       its legal actions
``q``       (N, A) float32    the teacher's value of each legal action (its PIMC mean; 0 elsewhere)
``worlds``  (N, A) int16      the worlds each action was tried in (a racing search drops some early)
``choice``  (N,) int16        the teacher's action
``ret``     (N,) float32      the seat's discounted return from there (the env's ``win`` reward)
``agree``   (N,) bool         whether the student's own action was the teacher's
==========  ================  ================================================================

Targets are made from ``q`` when a network learns (:func:`soft_targets`): all weight on the
choice (temperature 0) or a softmax over the legal actions' values at a temperature, so one set
of labels serves every temperature.

A teacher whose world sampler ``needs_hands`` (:class:`agents.search.WorldSampler`; the lab's
oracle, ``search:...:infer=lab.samplers:Oracle``) is shown the labelled seat's opponents' true
hands as the observation's ``hands`` entry: labels of what a search that sees every hand would
play, each kept with the seat's own observation only, so the student still learns from what it
may see (Suphx's oracle guiding; lab/results/oracle-teacher.md).

``chickenfoot labels collect --out DIR`` collects in shards of ``--shard-games`` games,
each written atomically as ``DIR/shard_NNNNN.npz`` with its own seed, so a stopped collection
resumes where it stopped (run the same command again) and keeps every label it made; ``chickenfoot labels fit DIR``
(:mod:`training.distill`) learns from them.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents import load
from agents.base import act_batch
from agents.checkpoint import atomic_write
from cf_env import ConfigError, ObservationEncoder, RulesConfig, raw_env
from cf_env.vector import VectorGame
from training.bc import discount_per_seat
from training.config import DEFAULT_TEACHER

__all__ = ["DEFAULT_TEACHER", "LABEL_KEYS", "WEIGHTINGS", "collect_labels", "collect_labels_env", "collect_shards",
           "collection_settings", "imitation_labels", "label_weights", "load_labels", "read_collection", "shard_paths",
           "soft_targets"]

LABEL_KEYS = ("obs", "mask", "q", "worlds", "choice", "ret", "agree")
RETIRED = -1  #: a slot whose games are all played: the heuristic moves it on, unlabelled


def soft_targets(q: np.ndarray, mask: np.ndarray, choice: np.ndarray, temperature: float) -> np.ndarray:
    """Target distributions from the teacher's values: one-hot on ``choice`` at temperature 0,
    else ``softmax(q / temperature)`` over each row's legal actions."""
    if temperature < 0:
        raise ConfigError(f"the target temperature must be >= 0, got {temperature}")
    target = np.zeros(q.shape, np.float32)
    if temperature == 0:
        target[np.arange(len(q)), choice.astype(np.int64)] = 1.0
        return target
    z = np.where(mask, q.astype(np.float64) / temperature, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)


WEIGHTINGS = ("none", "stakes")  #: how :func:`label_weights` weighs each label in a fit


def label_weights(q: np.ndarray, mask: np.ndarray, weighting: str) -> np.ndarray:
    """Each label's weight in a fit's cross-entropy (mean 1 is the caller's business).

    ``"none"``: 1 for every label. ``"stakes"``: the teacher's value that a uniformly random legal
    choice would lose there, the mean over the legal actions of ``max q - q[a]``. A state whose
    actions the teacher values alike (ties, which racing stops on, and near-ties that are mostly
    its worlds' noise) then counts for little, and one where a choice costs much counts most: the
    student spends its capacity where the teacher's value gaps say the choice matters."""
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if weighting == "none":
        return np.ones(len(q), np.float32)
    qf = np.where(mask, q.astype(np.float64), np.nan)
    with np.errstate(invalid="ignore"):
        stakes = np.nanmean(np.nanmax(qf, axis=1, keepdims=True) - qf, axis=1)
    return np.nan_to_num(stakes, nan=0.0).astype(np.float32)


_LABEL_DTYPES = {"obs": np.float32, "mask": bool, "q": np.float32, "worlds": np.int16, "choice": np.int16,
                "ret": np.float32, "agree": bool}


def _label_arrays(rows: dict[str, list], obs_size: int, a_count: int) -> dict[str, np.ndarray]:
    """A collection's label rows (one list per :data:`LABEL_KEYS` key) as arrays of their dtypes
    and shapes (empty ones shaped too)."""
    def shape(key: str) -> tuple[int, ...]:
        return (obs_size,) if key == "obs" else (a_count,) if key in ("mask", "q", "worlds") else ()

    return {k: np.asarray(rows[k], _LABEL_DTYPES[k]).reshape((len(rows[k]),) + shape(k)) for k in LABEL_KEYS}


def load_teacher(spec: str, config: RulesConfig) -> Any:
    """The teacher ``spec`` names, refused unless it is a PIMC search agent (a search spec with
    ``algo=pimc``, or ``module:Class`` of a :class:`~agents.search.SearchAgent` subclass): its
    labels are the search's per-action values."""
    from agents.search import SearchAgent

    teacher = load(spec, config)
    if not isinstance(teacher, SearchAgent) or teacher.algo != "pimc":
        raise ConfigError(f"the teacher {spec!r} is not a PIMC search agent (a search spec with algo=pimc, or "
                          f"module:Class of a SearchAgent subclass): its labels are the search's per-action values")
    return teacher


def _search_label(teacher: Any, observation: dict, rng: np.random.Generator,
                  a_count: int) -> tuple[int, np.ndarray, np.ndarray, float, int]:
    """The teacher's choice at one decision, its value of each legal action (``q``) and the worlds
    each was tried in (0 elsewhere), with the seconds and rollout decisions the search took."""
    t0 = time.perf_counter()
    best = int(teacher.act(observation, rng))
    seconds = time.perf_counter() - t0
    info = teacher.last_search
    q = np.zeros(a_count, np.float32)
    q[info["actions"]] = info["scores"]
    worlds = np.zeros(a_count, np.int16)
    worlds[info["actions"]] = info["worlds"]
    return best, q, worlds, seconds, int(info["rollout_decisions"])


def collect_labels(student: Any, teacher: Any, opponents: Sequence[Any], config: RulesConfig, games: int,
                   seed: int, self_play_prob: float = 0.5, gamma: float = 0.99, slots: int = 16,
                   beta: float = 0.0, on_game: Callable[[], None] | None = None) -> dict[str, Any]:
    """Play ``games`` games in lockstep and label the student's decisions (module docstring).

    ``student``: an agent with ``act_batch`` (a :class:`agents.torch_policy.TorchAgent`); it
    takes seat 0 of every game and each other seat with chance ``self_play_prob``, the rest from
    ``opponents`` (agents, each with ``act_batch`` or ``act``; drawn uniformly per seat).
    ``teacher``: a PIMC :class:`agents.search.SearchAgent` (or a subclass); one that reads the observation's
    history (``infer=policy``) is fed by the PettingZoo env instead, one game at a time
    (:func:`collect_labels_env`; ``slots`` does not apply). ``beta``: chance a labelled decision
    plays the teacher's action instead of the student's. ``on_game`` is called as each game ends (a progress bar). Returns the label
    arrays (:data:`LABEL_KEYS`) and counts: ``games``, ``decisions``, ``teacher_seconds``,
    ``rollout_decisions``, ``seconds``."""
    if games < 1 or slots < 1:
        raise ConfigError(f"games and slots must be >= 1, got {games} and {slots}")
    if getattr(teacher, "needs_history", False):  # the batched engine keeps no history: the env loop
        seeds = [int(x) for x in np.random.default_rng(seed).integers(2**63, size=games)]
        return collect_labels_env(student, teacher, opponents, config, seeds, self_play_prob, gamma, beta, on_game)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    n, a_count, t_count = config.num_players, config.num_actions, config.num_tiles
    built = list(opponents)
    if not built:
        raise ConfigError("collect_labels needs at least one opponent agent")
    heuristic = load("heuristic", config)
    slots = min(slots, games)
    vg = VectorGame(config, num_games=slots, reward="win", seed=np.random.default_rng(rng.integers(2**63)))
    obs, mask, seat = vg.reset()
    who = np.zeros((slots, n), np.int64)  # 0: the student, i > 0: opponents[i - 1], RETIRED
    started = 0

    def seat_game(slot: int) -> None:
        nonlocal started
        if started >= games:
            who[slot] = RETIRED
            return
        started += 1
        who[slot, 0] = 0
        for p in range(1, n):
            who[slot, p] = 0 if rng.random() < self_play_prob else 1 + int(rng.integers(len(built)))

    for slot in range(slots):
        seat_game(slot)
    rows: dict[str, list] = {k: [] for k in LABEL_KEYS}
    latest = np.full((slots, n), -1, np.int64)  # each seat's newest label in its slot's game
    per_seat: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(slots)]
    finished = decisions = rollout_decisions = 0
    teacher_seconds = 0.0
    oracle = bool(getattr(teacher, "needs_hands", False))  # a teacher shown the opponents' true hands
    while finished < games:
        actor = who[np.arange(slots), seat]
        actions = np.zeros(slots, np.int64)
        for kind in np.unique(actor):
            idx = np.flatnonzero(actor == kind)
            agent = student if kind == 0 else heuristic if kind == RETIRED else built[kind - 1]
            actions[idx] = act_batch(agent, obs[idx], mask[idx], rng)
        for b in np.flatnonzero((actor == 0) & (mask.sum(axis=1) > 1)):
            view = {"observation": obs[b].copy(), "action_mask": mask[b].copy()}
            if oracle:  # for the teacher only: the label keeps the seat's own view
                view["hands"] = vg.hidden_tiles(np.array([b]), seat[b:b + 1])[0, : (n - 1) * t_count].reshape(n - 1, t_count)
            best, q, worlds, seconds, steps = _search_label(teacher, view, rng, a_count)
            teacher_seconds += seconds
            rollout_decisions += steps
            latest[b, seat[b]] = len(rows["obs"])
            per_seat[b][seat[b]].append(len(rows["obs"]))
            for key, value in (("obs", view["observation"]), ("mask", view["action_mask"] != 0), ("q", q),
                               ("worlds", worlds), ("choice", best), ("ret", 0.0),
                               ("agree", int(actions[b]) == best)):
                rows[key].append(value)
            if beta and rng.random() < beta:
                actions[b] = best
        obs, mask, seat, rewards, done = vg.step(actions)
        decisions += slots
        for b, p in zip(*np.nonzero((latest >= 0) & (rewards != 0))):  # a reward lands on the seat's newest label
            rows["ret"][latest[b, p]] += float(rewards[b, p])
        for b in np.flatnonzero(done):
            if who[b, 0] != RETIRED:
                finished += 1
                discount_per_seat(rows["ret"], per_seat[b], gamma)  # along each seat's own labels
                for idxs in per_seat[b]:
                    idxs.clear()
                if on_game is not None:
                    on_game()
            latest[b] = -1
            seat_game(int(b))
    out: dict[str, Any] = _label_arrays(rows, obs.shape[1], a_count)
    out.update({"games": finished, "decisions": decisions, "teacher_seconds": teacher_seconds,
                "rollout_decisions": rollout_decisions, "seconds": time.perf_counter() - start})
    return out


def collect_labels_env(student: Any, teacher: Any, opponents: Sequence[Any], config: RulesConfig, seeds: Sequence[int],
                       self_play_prob: float = 0.5, gamma: float = 0.99, beta: float = 0.0,
                       on_game: Callable[[], None] | None = None, env: Any = None) -> dict[str, Any]:
    """:func:`collect_labels` on the PettingZoo env, one game per seed and one decision at a time:
    for a teacher that reads the observation's ``history`` (``infer=policy``), which the batched
    engine does not keep (a teacher that ``needs_hands`` is shown the opponents' hands here too).
    Game ``i`` draws its seats and its deal from ``np.random.default_rng(seeds[i])`` (the student
    in seat 0 and each other seat with chance ``self_play_prob``, else one of ``opponents``), and
    that generator drives the game's every choice. Returns what
    :func:`collect_labels` returns. ``env``: an AEC env of these rules to reuse (built with the
    history when the teacher reads it, when not given)."""
    if not opponents:
        raise ConfigError("collect_labels_env needs at least one opponent agent")
    start = time.perf_counter()
    n, a_count, t_count = config.num_players, config.num_actions, config.num_tiles
    if env is None:
        env = raw_env(config=config, history=bool(getattr(teacher, "needs_history", False)))
    rows: dict[str, list] = {k: [] for k in LABEL_KEYS}
    decisions = rollout_decisions = 0
    teacher_seconds = 0.0
    oracle = bool(getattr(teacher, "needs_hands", False))  # a teacher shown the opponents' true hands
    for seed in seeds:
        rng = np.random.default_rng(seed)
        seats: list[Any] = [student] + [student if rng.random() < self_play_prob
                                        else opponents[int(rng.integers(len(opponents)))] for _ in range(n - 1)]
        env.reset(seed=int(rng.integers(2**63)))
        per_seat: dict[int, list[int]] = {p: [] for p in range(n)}  # each seat's labels in this game
        while not env.game_over:
            seat = env.agent_name_mapping[env.agent_selection]
            observation = env.observe(env.agent_selection)
            agent = seats[seat]
            mask = observation["action_mask"]
            if agent is student and int(mask.sum()) > 1:
                view = observation
                if oracle:  # for the teacher only: the label keeps the seat's own view
                    hidden = env.hidden_tiles(env.agent_selection)
                    view = {**observation, "hands": hidden[: (n - 1) * t_count].reshape(n - 1, t_count)}
                best, q, worlds, seconds, steps = _search_label(teacher, view, rng, a_count)
                teacher_seconds += seconds
                rollout_decisions += steps
                own = student.act(observation, rng)
                action = best if rng.random() < beta else own
                per_seat[seat].append(len(rows["ret"]))
                for key, value in (("obs", observation["observation"]), ("mask", mask != 0), ("q", q),
                                   ("worlds", worlds), ("choice", best), ("ret", 0.0), ("agree", own == best)):
                    rows[key].append(value)
            else:
                action = agent.act(observation, rng)
            env.step(action)
            decisions += 1
            for p, idxs in per_seat.items():  # each seat's reward lands on its latest label
                if idxs:
                    rows["ret"][idxs[-1]] += env.rewards[env.possible_agents[p]]
        discount_per_seat(rows["ret"], per_seat.values(), gamma)
        if on_game is not None:
            on_game()
    out: dict[str, Any] = _label_arrays(rows, ObservationEncoder(config).size, a_count)
    out.update({"games": len(seeds), "decisions": decisions, "teacher_seconds": teacher_seconds,
                "rollout_decisions": rollout_decisions, "seconds": time.perf_counter() - start})
    return out


def imitation_labels(agent: Any, config: RulesConfig, games: int, seed: int, gamma: float = 0.99,
                     slots: int = 64) -> dict[str, np.ndarray]:
    """Labels of ``agent``'s own play, for a warm start before the teacher's labels: ``games``
    games of ``agent`` in every seat, in lockstep, every decision with a choice labelled with the
    agent's action (``q`` is 1 there and 0 elsewhere, so :func:`soft_targets` puts all but about
    ``exp(-1/T)`` of the weight on it; ``worlds`` is 0) and the seat's discounted return. Costs no search: the
    heuristic's 1000 4-player games (about 250k labels) take about 30 s on one core."""
    if games < 1 or slots < 1:
        raise ConfigError(f"games and slots must be >= 1, got {games} and {slots}")
    rng = np.random.default_rng(seed)
    slots = min(slots, games)
    n, a_count = config.num_players, config.num_actions
    vg = VectorGame(config, num_games=slots, reward="win", seed=np.random.default_rng(rng.integers(2**63)))
    obs, mask, seat = vg.reset()
    obs_rows: list[np.ndarray] = []
    mask_rows: list[np.ndarray] = []
    choice_rows: list[np.ndarray] = []
    ret: list[float] = []
    latest = np.full((slots, n), -1, np.int64)
    per_seat: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(slots)]
    started, finished = slots, 0
    live = np.ones(slots, bool)  # slots past the last game still step (moved on by the agent), unlabelled
    while finished < games:
        actions = act_batch(agent, obs, mask, rng)
        labelled = np.flatnonzero(live & (mask.sum(axis=1) > 1))
        for b in labelled:
            latest[b, seat[b]] = len(ret)
            per_seat[b][seat[b]].append(len(ret))
            ret.append(0.0)
        obs_rows.append(obs[labelled].copy())
        mask_rows.append(mask[labelled] != 0)
        choice_rows.append(actions[labelled])
        obs, mask, seat, rewards, done = vg.step(actions)
        for b, p in zip(*np.nonzero((latest >= 0) & (rewards != 0))):
            ret[latest[b, p]] += float(rewards[b, p])
        for b in np.flatnonzero(done):
            if live[b]:
                finished += 1
                discount_per_seat(ret, per_seat[b], gamma)
                for idxs in per_seat[b]:
                    idxs.clear()
            latest[b] = -1
            live[b] = started < games
            started += int(live[b])
    choice = np.concatenate(choice_rows).astype(np.int16)
    q = np.zeros((len(choice), a_count), np.float32)
    q[np.arange(len(choice)), choice] = 1.0
    return {"obs": np.concatenate(obs_rows).astype(np.float32), "mask": np.concatenate(mask_rows), "q": q,
            "worlds": np.zeros((len(choice), a_count), np.int16), "choice": choice,
            "ret": np.asarray(ret, np.float32), "agree": np.ones(len(choice), bool)}


# ------------------------------------------------------------------------------ shards on disk

def read_collection(folder: str | Path) -> dict[str, Any]:
    """A label folder's settings (its ``collection.json``, :func:`collection_settings`'s dict); a
    :class:`~cf_env.ConfigError` when the folder is not a collection."""
    meta = Path(folder) / "collection.json"
    if not meta.is_file():
        raise ConfigError(f"{folder} is not a label collection (no collection.json): "
                          f"make one with chickenfoot labels collect --out {folder}")
    return json.loads(meta.read_text())


def shard_paths(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).glob("shard_*.npz"))


def load_labels(folder: str | Path, limit: int | None = None) -> dict[str, np.ndarray]:
    """The labels of a collection folder's shards, in shard order (the first ``limit``)."""
    parts: dict[str, list[np.ndarray]] = {k: [] for k in LABEL_KEYS}
    count = 0
    paths = shard_paths(folder)
    if not paths:
        raise FileNotFoundError(f"{folder}: no label shards (shard_*.npz); collect some with "
                                f"chickenfoot labels collect --out {folder}")
    for path in paths:
        with np.load(path) as data:
            for k in LABEL_KEYS:
                parts[k].append(data[k])
            count += len(data["ret"])
        if limit is not None and count >= limit:
            break
    return {k: np.concatenate(v)[:limit] for k, v in parts.items()}


def _labeller_state(settings: dict[str, Any]) -> dict[str, Any]:
    """A collecting worker's state (:class:`training.workers.WorkerPool`'s initializer): the
    rules, the student, the teacher and the opponents, built once."""
    config = RulesConfig.from_dict(settings["rules"])
    return {"config": config, "settings": settings, "student": load(settings["student"], config),
            "teacher": load_teacher(settings["teacher"], config),
            "opponents": [load(spec, config) for spec in settings["opponents"]]}


def shard_path(folder: str | Path, index: int) -> Path:
    return Path(folder) / f"shard_{index:05d}.npz"


def label_shard(index: int) -> dict[str, Any]:
    """Collect shard ``index`` of the worker's collection (its games seeded by ``(seed, index)``);
    returns its label arrays and counts. The caller writes the shard, so workers on other
    machines of a Ray cluster need no shared disk."""
    from training.workers import worker_state

    state = worker_state()
    settings = state["settings"]
    labels = collect_labels(state["student"], state["teacher"], state["opponents"], state["config"],
                            settings["shard_games"], seed=int(np.random.SeedSequence([settings["seed"], index])
                                                              .generate_state(1)[0]),
                            self_play_prob=settings["self_play_prob"], slots=settings["slots"])
    return {"index": index, "arrays": {k: labels[k] for k in LABEL_KEYS}, "labels": len(labels["ret"]),
            "games": labels["games"], "teacher_seconds": labels["teacher_seconds"], "seconds": labels["seconds"]}


def write_shard(folder: str | Path, shard: dict[str, Any]) -> None:
    """Write :func:`label_shard`'s arrays atomically as its shard in ``folder``."""
    atomic_write(shard_path(folder, shard["index"]), lambda f: np.savez_compressed(f, **shard["arrays"]))


def collection_settings(student: str, teacher: str, opponents: Sequence[str], config: RulesConfig, seed: int,
                        shard_games: int = 16, self_play_prob: float = 0.5, slots: int = 16) -> dict[str, Any]:
    """What fixes a collection's labels (kept in its ``collection.json``)."""
    return {"student": student, "teacher": teacher, "opponents": list(opponents), "rules": config.to_dict(),
            "seed": int(seed), "shard_games": int(shard_games), "self_play_prob": float(self_play_prob),
            "slots": int(slots)}


def collect_shards(out: str | Path, settings: dict[str, Any], shards: int | None, workers: int = 1,
                   minutes: float = 0.0, progress: bool = True, address: str | None = None) -> dict[str, Any]:
    """Shards ``0 .. shards - 1`` (``None``: until ``minutes`` or Ctrl-C) of the collection in ``out`` (:func:`collection_settings`), in
    ``workers`` processes (or Ray actors at ``address``); shards already there are kept, so a
    stopped collection resumes. With ``minutes`` > 0 no shard is started after that much time.
    The settings are kept in ``out/collection.json``; resuming with other settings is refused."""
    from tqdm.auto import tqdm

    from training.workers import WorkerPool

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    meta = folder / "collection.json"
    if meta.exists():
        kept = json.loads(meta.read_text())
        differ = sorted(k for k in settings if kept.get(k) != settings[k])
        if differ:
            raise ConfigError(f"{folder} holds a collection with other settings ({', '.join(differ)}: "
                              f"{[kept.get(k) for k in differ]}); use another folder")
    else:
        from training.provenance import with_provenance

        recorded = with_provenance(settings, [settings.get("teacher"), settings.get("student")])
        atomic_write(meta, lambda f: f.write(json.dumps(recorded, indent=2).encode()))
    kept_shards = {int(p.stem.rpartition("_")[2]) for p in shard_paths(folder)}
    missing = None if shards is None else shards - sum(1 for i in kept_shards if i < shards)
    totals = {"labels": 0, "games": 0, "teacher_seconds": 0.0, "worker_seconds": 0.0}
    start = time.perf_counter()

    def tasks() -> Iterator[tuple[int]]:
        for shard in itertools.count() if shards is None else range(shards):  # lazily: None is unlimited
            if minutes and time.perf_counter() - start > 60 * minutes:
                return
            if shard not in kept_shards:
                yield (shard,)

    with WorkerPool(workers, _labeller_state, (settings,), address=address) as pool, \
            tqdm(total=None if minutes or missing is None else missing * settings["shard_games"], unit="game",
                 desc=f"labels -> {folder}" + (f" for {minutes:g} min" if minutes else ""), disable=not progress) as bar:
        lanes = pool.workers or 1  # shards in flight: one a worker
        for done in pool.imap(label_shard, tasks(), window=lanes):  # a dead worker's shard runs again elsewhere
            write_shard(folder, done)
            totals["labels"] += done["labels"]
            totals["games"] += done["games"]
            totals["teacher_seconds"] += done["teacher_seconds"]
            totals["worker_seconds"] += done["seconds"]
            bar.update(done["games"])
            bar.set_postfix(labels=totals["labels"])
    seconds = time.perf_counter() - start
    return {**totals, "seconds": seconds, "labels_per_second": totals["labels"] / max(seconds, 1e-9),
            "labels_per_second_per_worker": totals["labels"] / max(totals["worker_seconds"], 1e-9),
            "shards": len(shard_paths(folder))}
