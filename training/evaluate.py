"""Evaluate agents against each other with rotated seats and duplicate deals.

A *lineup* names one agent spec per seat (``["runs/x/ckpt.pt", "greedy", "greedy", "greedy"]``).
Each *deal set* is a full game's deals (every round shuffled up front from the seed); it is
played once per seat rotation, so every agent holds every seat's cards and the luck of the deal
cancels. Win rates count a shared win as ``1/len(winners)``. The 95% intervals are t-intervals
over deal sets: a deal set's rotations share its deals and draws, so they are one paired sample,
not independent games (win-rate intervals are kept inside [0, 1]; Wilson's score interval over the
agent's seat-games, the earlier figure, is kept as ``win_rate_wilson_ci95``). Ratings are OpenSkill
(Plackett-Luce) ordinals over all games.

Code that needs more of each game than the report keeps (a variance-reduction study, extra
statistics) plugs in through ``on_deal_set`` (:class:`DealSetHook`): it runs where the games are
played, in every worker, and sees each deal set's finished games with every hand in view.
"""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from agents import Agent, load
from agents.base import needs_history
from cf_env import ConfigError, Game, RulesConfig, raw_env
from cf_env.engine import validate_deals
from cf_env.engine.scoring import win_share
from training.arena import (
    Played,
    fill_lineup,
    generate_deals,
    play,
    play_game,
    play_rotations,
    warm_up,
)
from training.results import ResultsFile
from training.stats import standard_error, t_interval, wilson_interval
from training.workers import WorkerLostError, WorkerPool, shared_pool, worker_state

__all__ = ["AgentResult", "DealSetHook", "EvalReport", "GameSaver", "SaveGames", "evaluate", "fill_lineup", "generate_deals",
           "Played", "play", "play_game", "short_name", "warm_up", "win_rates"]


def short_name(spec: str, width: int = 18) -> str:
    """A spec as a label fits a progress bar or a chart: a checkpoint path as its folder and
    file stem (``default/final``), anything longer than ``width`` cut at the end with an ellipsis
    (``zoo:strong-4p`` stays whole)."""
    if ".py:" in spec:  # your own class in a file: its name and arguments
        spec = spec.rsplit(".py:", 1)[1]
    elif "/" in spec or "\\" in spec:
        path = Path(spec)
        spec = f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem
    return spec if len(spec) <= width else spec[: width - 1] + "…"


class DealSetHook(Protocol):
    """Called by :func:`evaluate` after each deal set, in the process that played it (so it must
    pickle for ``workers`` > 1 or a Ray cluster): ``d`` the deal set's index, ``games`` its
    finished engine games (one per seat rotation, every hand and the whole event log in view),
    ``seatings[r]`` the spec at each seat of game ``r``, ``agents`` the loaded agents by spec.
    What it returns (anything picklable) is kept in :attr:`EvalReport.hook_results` in deal-set
    order."""

    def __call__(self, d: int, games: list[Game], seatings: list[list[str]], agents: dict[str, Agent]) -> Any: ...


@dataclass
class AgentResult:
    """One agent's figures. Intervals are 95% t-intervals over deal sets (the independent units:
    the rotations of one deal set are one paired sample; with a single deal set, Wilson's and
    the t-interval over its seat-games), kept inside [0, 1] for win rates;
    ``win_rate_wilson_ci95`` is Wilson's interval over seat-games, as if they were independent.
    ``*_se``: standard errors over deal sets; ``*_seat_se``: over seat-games."""

    spec: str
    seat_games: int = 0
    win_rate: float = 0.0
    win_rate_ci95: tuple[float, float] = (0.0, 0.0)
    mean_points: float = 0.0
    mean_points_ci95: tuple[float, float] = (0.0, 0.0)
    win_rate_wilson_ci95: tuple[float, float] = (0.0, 1.0)
    win_rate_se: float = 0.0
    win_rate_seat_se: float = 0.0
    mean_points_se: float = 0.0
    mean_points_seat_se: float = 0.0
    rating: float = 0.0  # OpenSkill ordinal (mu - 3 sigma)
    rating_mu: float = 0.0
    rating_sigma: float = 0.0
    ms_per_decision: float = 0.0  # mean time in ``act`` over all its decisions
    ms_per_choice: float = 0.0  # the same over decisions with more than one legal action


@dataclass
class EvalReport:
    config: dict
    lineup: list[str]
    deal_sets: int
    games: int
    seed: int
    results: list[AgentResult] = field(default_factory=list)
    ms_per_game: float = 0.0  #: playing time per game (in the workers)
    #: per spec, per deal set: its mean win share and mean total over its seats
    per_deal_set: dict[str, list[list[float]]] = field(default_factory=dict)
    #: what ``on_deal_set`` returned for each deal set (empty without one; not written by :meth:`write`)
    hook_results: list[Any] = field(default_factory=list, repr=False)
    #: the deal sets asked for, when a stop (Ctrl-C) ended the evaluation after ``deal_sets`` of them
    stopped_of: int | None = None

    def table(self) -> str:
        head = (f"{'agent':<40} {'seat-games':>10} {'win rate':>9} {'95% CI':>17} {'mean pts':>9} {'OpenSkill':>9} "
                f"{'ms/dec':>7} {'ms/choice':>9}")
        lines = [head, "-" * len(head)]
        for r in self.results:
            lo, hi = r.win_rate_ci95
            lines.append(f"{r.spec[-40:]:<40} {r.seat_games:>10} {r.win_rate:>9.3f} "
                         f"{f'[{lo:.3f}, {hi:.3f}]':>17} {r.mean_points:>9.1f} {r.rating:>9.2f} "
                         f"{r.ms_per_decision:>7.2f} {r.ms_per_choice:>9.2f}")
        sets = f"{self.deal_sets} deal set{'s' if self.deal_sets != 1 else ''}"
        if self.stopped_of is not None:
            sets += f" of {self.stopped_of} (stopped)"
        lines.append(f"{self.games} games = {sets} x {len(self.lineup)} seat rotations; "
                     f"{self.config['num_players']} players, double-{self.config['max_pip']}, "
                     f"{self.config['rounds']} rounds; parity win rate {1 / len(self.lineup):.3f}; "
                     f"intervals: t over deal sets" + ("" if self.deal_sets > 1 else " (one deal set: Wilson over its "
                                                       "games instead)"))
        lines.append("OpenSkill: the ordinal (mu - 3 sigma) of a Plackett-Luce rating fitted to the finishing order "
                     "(winners, then by points) of these games only; it ranks this table's agents by place, not by "
                     "wins, so it can order two agents otherwise than their win rates. For a rating that compares "
                     "across runs, use chickenfoot ladder (Elo).")
        return "\n".join(lines)

    def to_json(self) -> dict:
        out = asdict(self)
        del out["hook_results"]
        return out

    def write(self, path: str | Path) -> None:
        """Write ``.json`` or ``.csv`` (by suffix)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".csv":
            with path.open("w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["agent", "seat_games", "win_rate", "ci_low", "ci_high", "mean_points", "openskill_ordinal",
                                 "ms_per_decision", "ms_per_choice"])
                for r in self.results:
                    writer.writerow([r.spec, r.seat_games, r.win_rate, *r.win_rate_ci95, r.mean_points, r.rating,
                                     r.ms_per_decision, r.ms_per_choice])
        else:
            from training.provenance import write_report

            write_report(path, self.to_json(), [r.spec for r in self.results])

    def plot(self, path: str | Path) -> None:
        """Bar chart of win rates with their 95% intervals and the parity line."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(self.results), 3.6))
        names = [short_name(r.spec) for r in self.results]
        rates = [r.win_rate for r in self.results]
        err = np.array([[r.win_rate - r.win_rate_ci95[0] for r in self.results],
                        [r.win_rate_ci95[1] - r.win_rate for r in self.results]])
        ax.bar(names, rates, yerr=err, capsize=4, color="#3a7d44")
        ax.axhline(1 / len(self.lineup), color="grey", linestyle="--", label="parity")
        ax.set_ylabel("win rate")
        ax.set_title(f"{self.games} games, duplicate deals")
        ax.legend()
        fig.tight_layout()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        plt.close(fig)


def _evaluator_state(config: RulesConfig, built: dict[str, Agent] | None = None, run: str | None = None) -> dict:
    """An evaluating worker's state (:class:`training.workers.WorkerPool`'s initializer): the rules,
    and the agents of the evaluation it plays for (``run``; ``built`` ones as given, the others
    loaded by its first task, :func:`_agents_for`). A pool kept between evaluations
    (:func:`training.workers.shared_pool`) starts with none and loads each evaluation's afresh."""
    return {"config": config, "run": run, "built": dict(built or {}), "envs": {}}


def _agents_for(state: dict, run: str, specs: list[str]) -> tuple[dict[str, Agent], raw_env]:
    """The agents of ``specs`` for evaluation ``run`` (loaded and warmed up on its first task in this
    worker; a new run starts from fresh agents, as a new pool would) and an env for them."""
    if state["run"] != run:
        state.update(run=run, built={}, envs={})
    built, config = state["built"], state["config"]
    new = {spec: load(spec, config) for spec in dict.fromkeys(specs) if spec not in built}
    if new:
        warm_up(new, config)
        built.update(new)
    history = needs_history([built[s] for s in specs])
    if history not in state["envs"]:
        state["envs"][history] = raw_env(config=config, history=history)
    return built, state["envs"][history]


def _play_deal_sets(run: str, specs: list[str], seed: int, keep: bool, hook: DealSetHook | None, first: int,
                    chunk: list[list[dict]]) -> list[tuple[list[tuple[list[str], list[int], list[int], np.ndarray,
                                                                     dict | None, float]], Any]]:
    """Deal sets ``first, first + 1, ...`` (``chunk`` holds their deals), each in every seat rotation:
    per deal set, per game (seat specs, winners, totals, clock, the game's record when ``keep``,
    seconds the game took), and what the hook returned."""
    built, env = _agents_for(worker_state(), run, specs)
    out = []
    for d, given_deals in enumerate(chunk, start=first):
        deals = validate_deals(given_deals, env.config)  # once for every rotation (the games do not check them again)
        games: list[Game] | None = [] if keep or hook is not None else None  # the engine's Games are wanted
        rows = play_rotations(env, built, specs, deals, seed, d, engine_games=games)
        played_games = [(r.seats, r.winners, r.totals, r.clock, games[i].to_record() if keep and games else None,
                         r.seconds) for i, r in enumerate(rows)]
        hooked = hook(d, games or [], [r.seats for r in rows], {s: built[s] for s in specs}) if hook is not None else None
        out.append((played_games, hooked))
    return out


def deal_set_chunks(deal_sets: int, workers: int) -> int:
    """Deal sets a task of a parallel evaluation plays: up to 8, so that each worker gets at least
    eight tasks (fewer round trips for short games, and the last tasks still spread evenly)."""
    return max(1, min(8, deal_sets // (8 * workers)))


def _ranks(winners: list[int], totals: list[int]) -> list[int]:
    """0 for the winners (R16), then by total points."""
    order = sorted({t for p, t in enumerate(totals) if p not in winners})
    return [0 if p in winners else 1 + order.index(totals[p]) for p in range(len(totals))]


class SaveGames(NamedTuple):
    """Which game records an evaluation keeps, and where (``evaluate(save_games=...)``; a folder
    alone means every game): every game (``worst`` = 0), or the ``worst`` games of ``agent``
    (default: the lineup's first spec)."""

    folder: str | Path
    worst: int = 0
    agent: str | None = None


class GameSaver:
    """Writes game records (:mod:`cf_env.replay`) of an evaluation into ``folder``: every game
    (``worst`` = 0), or the ``worst`` games of ``agent`` (default: the lineup's first spec), judged
    by how far its total is behind the best other seat (its mean over its seats). Files are
    ``game_DDDDD_R.json`` (deal set, seat rotation) plus ``index.json`` listing them."""

    def __init__(self, folder: str | Path, lineup: Sequence[str], worst: int = 0, agent: str | None = None,
                 seed: int = 0) -> None:
        if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
            raise ConfigError(f"worst must be an int >= 0 (0 saves every game), got {worst!r}")
        agent = lineup[0] if agent is None else agent
        if agent not in lineup:
            raise ConfigError(f"the agent whose worst games to keep, {agent!r}, is not in the lineup {list(lineup)}")
        if len(set(lineup)) == 1 and worst:
            raise ConfigError(f"{agent!r} holds every seat: no game is worse for it than for the others; save "
                              f"every game (worst 0) or evaluate it against another agent")
        self.folder, self.worst, self.agent, self.seed = Path(folder), worst, agent, seed
        self.folder.mkdir(parents=True, exist_ok=True)
        self.kept: list[tuple[float, int, int, dict]] = []  # (margin, deal set, rotation, record)
        self.index: list[dict] = []

    def margin(self, seat_specs: Sequence[str], totals: Sequence[int]) -> float:
        mine = [t for s, t in zip(seat_specs, totals) if s == self.agent]
        others = [t for s, t in zip(seat_specs, totals) if s != self.agent]
        return float(np.mean(mine) - min(others)) if others else 0.0

    def add(self, d: int, rot: int, seat_specs: list[str], winners: list[int], totals: list[int], game: dict) -> None:
        from cf_env.replay import make_record

        margin = self.margin(seat_specs, totals)
        record = make_record(game, seat_specs, {"totals": list(totals), "winners": list(winners)},
                             source="chickenfoot eval", seed=self.seed, deal_set=d, rotation=rot, agent=self.agent,
                             behind_best_other=margin)
        if not self.worst:
            self._write(record)
            return
        self.kept.append((margin, d, rot, record))
        self.kept.sort(key=lambda k: (-k[0], k[1], k[2]))
        del self.kept[self.worst:]

    def _write(self, record: dict) -> None:
        from cf_env.replay import save_record

        meta = record["meta"]
        name = f"game_{meta['deal_set']:05d}_{meta['rotation']}.json"
        save_record(record, self.folder / name)
        self.index.append({"file": name, "players": record["players"], "totals": record["result"]["totals"],
                           "winners": record["result"]["winners"], "behind_best_other": meta["behind_best_other"]})

    def close(self) -> list[Path]:
        for _, _, _, record in self.kept:
            self._write(record)
        (self.folder / "index.json").write_text(json.dumps({"agent": self.agent, "worst": self.worst,
                                                            "games": self.index}, indent=1), encoding="utf-8")
        return [self.folder / item["file"] for item in self.index]


def evaluate(lineup: Sequence[str | Agent], config: RulesConfig, deal_sets: int = 100, seed: int = 0,
             progress: bool = True, agents_by_spec: dict[str, Agent] | None = None, workers: int | None = 1,
             save_games: str | Path | SaveGames | None = None, address: str | None = None,
             on_deal_set: DealSetHook | None = None, save: str | Path | None = None) -> EvalReport:
    """Play ``deal_sets`` duplicate deal sets, each once per seat rotation of ``lineup``.

    ``lineup``: agent specs or agents, one per seat; a shorter lineup is filled with its last
    agent (:func:`fill_lineup`).

    ``save_games``: a folder for every game's record (:class:`GameSaver`), or a :class:`SaveGames`
    such as ``SaveGames(folder, worst=N, agent=spec)`` for the N games where ``agent`` (default:
    the first spec) did worst.

    ``on_deal_set``: a :class:`DealSetHook` called after each deal set where it was played; what
    it returns is kept in the report's ``hook_results``.

    ``save``: a JSON-lines file (:class:`training.results.ResultsFile`) that keeps every deal set's
    games as they are played; given the file of an earlier run of the same lineup, seed and rules,
    the evaluation resumes after its deal sets (a file of another evaluation is refused).

    Ctrl-C (KeyboardInterrupt) after at least one deal set ends the evaluation with the report of
    the deal sets played (``stopped_of`` says how many were asked for).

    ``workers`` > 1 plays deal sets in that many processes (the lineup must then be specs, which
    each process loads); the report is the same as with one process, timings aside. ``address``:
    play them on the Ray cluster whose head is there instead, ``workers`` actors (default: one per
    CPU of the cluster; checkpoint paths must be readable on every node). The processes
    are spawned, so a script that calls this must guard its entry point with
    ``if __name__ == "__main__":`` (the ``chickenfoot`` command does).

    Raises:
        ConfigError: a bad lineup, count or seed (nothing is played).
    """
    from openskill.models import PlackettLuce
    from tqdm.auto import tqdm

    n = config.num_players
    lineup = fill_lineup(lineup, n)
    if isinstance(deal_sets, bool) or not isinstance(deal_sets, int) or deal_sets < 1:
        raise ConfigError(f"deal_sets must be a positive int, got {deal_sets!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be an int >= 0, got {seed!r}")
    if workers is None and not address:
        workers = 1
    elif workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers must be a positive int, got {workers!r}")
    if on_deal_set is not None and not callable(on_deal_set):
        raise ConfigError(f"on_deal_set must be callable (d, games, seatings, agents), got {on_deal_set!r}")
    specs = [x if isinstance(x, str) else x.name for x in lineup]
    remote = address is not None or (workers or 1) > 1
    if remote and (agents_by_spec or not all(isinstance(x, str) for x in lineup)):
        raise ConfigError("workers > 1 or a cluster address needs a lineup of agent specs (each process loads "
                          "its own agents)")
    if address:  # a relative checkpoint path means nothing in a Ray worker's folder
        specs = [str(Path(x).resolve()) if Path(x).is_file() else x for x in specs]
    distinct = list(dict.fromkeys(specs))
    if save is not None and (save_games is not None or on_deal_set is not None):
        raise ConfigError("save (the results file that resumes an evaluation) keeps the games' results only; "
                          "it cannot be combined with save_games or on_deal_set")
    results = (ResultsFile(save, {"lineup": specs, "seed": seed, "rules": config.to_dict()}, kind="evaluation")
               if save is not None else None)
    if isinstance(save_games, (str, Path)):
        save_games = SaveGames(save_games)
    saver = (GameSaver(save_games.folder, specs, save_games.worst, save_games.agent, seed)
             if save_games is not None else None)
    rng = np.random.default_rng(seed)
    all_deals = [generate_deals(config, rng) for _ in range(deal_sets)]
    model = PlackettLuce()
    ratings = {s: model.rating(name=s) for s in distinct}
    rows: dict[str, list[tuple[int, float, float]]] = {s: [] for s in distinct}  # deal set, win share, total
    clocks = {s: np.zeros(4) for s in distinct}
    play_seconds = [0.0]
    hooked: list[Any] = []
    bar = tqdm(total=deal_sets * n, desc="eval", unit="game", disable=not progress, leave=False)

    def record(games: list, d: int) -> None:
        for rot, (seat_specs, winners, totals, clock, game, played) in enumerate(games):
            if saver is not None:
                saver.add(d, rot, seat_specs, winners, totals, game)
            play_seconds[0] += played
            for seat, spec in enumerate(seat_specs):
                rows[spec].append((d, win_share(seat in winners, len(winners)), totals[seat]))
                clocks[spec] += clock[seat]
            # every seat is a one-player team holding its spec's rating; a spec's new rating is
            # the mean of its seats' updates
            teams = [[ratings[s]] for s in seat_specs]
            new = model.rate(teams, ranks=[float(r) for r in _ranks(winners, totals)])
            for spec in distinct:
                mine = [new[i][0] for i, s in enumerate(seat_specs) if s == spec]
                ratings[spec] = model.rating(mu=float(np.mean([r.mu for r in mine])),
                                             sigma=float(np.mean([r.sigma for r in mine])), name=spec)
            bar.update(1)
        if progress:
            bar.set_postfix({short_name(s): f"{np.mean([r[1] for r in rows[s]]):.3f}" for s in distinct})

    given: dict[str, Agent] = dict(agents_by_spec or {})
    for item, spec in zip(lineup, specs):
        if not isinstance(item, str):
            given.setdefault(spec, item)
    run = uuid.uuid4().hex
    pool_context: AbstractContextManager[WorkerPool]
    if address:  # Ray actors for this evaluation only: kept, they would hold the cluster's CPUs
        chunk = deal_set_chunks(deal_sets, workers or 2)
        pool_context = WorkerPool(workers, _evaluator_state, (config,), address=address)
    elif remote:  # worker processes that stay for the next evaluation of these rules
        chunk = deal_set_chunks(deal_sets, workers or 2)
        pool_context = shared_pool(("evaluate", workers, json.dumps(config.to_dict(), sort_keys=True)),
                                   workers, _evaluator_state, (config,))
    else:
        chunk = 1
        pool_context = WorkerPool(1, _evaluator_state, (config, given, run))
    played = 0
    for row in results.rows[:deal_sets] if results is not None else []:  # an earlier run's deal sets
        record([(specs_, winners, totals, np.array(clock), None, seconds)
                for specs_, winners, totals, clock, seconds in row["games"]], played)
        played += 1
    tasks = ((run, specs, seed, saver is not None, on_deal_set, d, all_deals[d:d + chunk])
             for d in range(played, deal_sets, chunk))
    stopped = False
    try:
        with pool_context as pool:
            for chunk_results in pool.imap(_play_deal_sets, tasks):
                for games, hook_result in chunk_results:
                    record(games, played)  # in deal-set order: the ratings do not depend on the workers
                    if results is not None:
                        results.add(games=[[s, w, t, c.tolist(), p] for s, w, t, c, _, p in games])
                    played += 1
                    if on_deal_set is not None:
                        hooked.append(hook_result)
    except WorkerLostError as exc:
        raise WorkerLostError(f"{exc} ({played} of {deal_sets} deal sets were played; `--save FILE` keeps them "
                              f"as they come, and resumes)") from exc
    except KeyboardInterrupt:
        if played == 0:
            raise
        stopped = True  # the report of the deal sets played so far
    finally:
        bar.close()
        if saver is not None:
            saver.close()
        if results is not None:
            results.close()
    asked, deal_sets = deal_sets, played
    report = EvalReport(config=config.to_dict(), lineup=specs, deal_sets=deal_sets, games=deal_sets * n, seed=seed,
                        ms_per_game=1000 * play_seconds[0] / (deal_sets * n), hook_results=hooked,
                        stopped_of=asked if stopped else None)
    for spec in distinct:
        r = ratings[spec]
        c = clocks[spec]
        table = np.array(rows[spec], float)
        sets = deal_set_means(table[:, 0].astype(int), table[:, 1:], deal_sets)  # (deal sets, 2)
        m = float(table[:, 1].mean())
        report.results.append(AgentResult(
            spec=spec, seat_games=len(table), win_rate=m,
            win_rate_ci95=t_interval(sets[:, 0], 0.0, 1.0) if deal_sets > 1 else wilson_interval(m, len(table)),
            mean_points=float(table[:, 2].mean()), mean_points_ci95=points_interval(sets[:, 1], table[:, 2]),
            win_rate_wilson_ci95=wilson_interval(m, len(table)), win_rate_se=standard_error(sets[:, 0]),
            win_rate_seat_se=standard_error(table[:, 1]), mean_points_se=standard_error(sets[:, 1]),
            mean_points_seat_se=standard_error(table[:, 2]), rating=float(r.ordinal()),
            rating_mu=float(r.mu), rating_sigma=float(r.sigma), ms_per_decision=1000 * c[0] / max(c[1], 1),
            ms_per_choice=1000 * c[2] / max(c[3], 1)))
        report.per_deal_set[spec] = sets.round(6).tolist()
    return report


def deal_set_means(deal_set: np.ndarray, values: np.ndarray, deal_sets: int) -> np.ndarray:
    """``(deal sets, k)``: the mean of each column of ``values`` (one row per seat-game) over the
    seat-games of each deal set (``deal_set[i]`` is row ``i``'s)."""
    sums = np.zeros((deal_sets, values.shape[1]))
    counts = np.zeros(deal_sets)
    np.add.at(sums, deal_set, values)
    np.add.at(counts, deal_set, 1)
    return sums / counts[:, None]


def points_interval(per_deal_set: np.ndarray, per_game: np.ndarray) -> tuple[float, float]:
    """The t-interval of mean points over deal sets; with one deal set, over its seat-games (as
    if they were independent: the only spread there is)."""
    return t_interval(per_deal_set if len(per_deal_set) > 1 else per_game, 0.0)


def win_rates(agent: Agent, config: RulesConfig, opponents: dict[str, Agent], deal_sets: int,
              seed: int = 12345) -> dict[str, float]:
    """A trainer's periodic check: ``agent`` in one seat against each opponent in the others, over
    ``deal_sets`` duplicate deal sets (0: none); ``{"win_rate_vs_SPEC": rate}``."""
    out: dict[str, float] = {}
    if not deal_sets:
        return out
    for spec, opponent in opponents.items():
        lineup = [agent] + [opponent] * (config.num_players - 1)
        report = evaluate(lineup, config, deal_sets=deal_sets, seed=seed, progress=False,
                          agents_by_spec={spec: opponent})
        out[f"win_rate_vs_{spec}"] = report.results[0].win_rate
    return out


def __getattr__(name: str) -> Any:
    """``compare`` and ``Comparison`` live in :mod:`training.compare` (both build on
    :mod:`training.arena`); this name stays for code written against 0.1."""
    if name in ("compare", "Comparison"):
        from training import compare as module

        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
