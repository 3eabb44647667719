"""Evaluate agents against each other with rotated seats and duplicate deals.

A *lineup* names one agent spec per seat (``["runs/x/ckpt.pt", "greedy", "greedy", "greedy"]``).
Each *deal set* is a full game's deals (every round shuffled up front from the seed); it is
played once per seat rotation, so every agent holds every seat's cards and the luck of the deal
cancels. Win rates count a shared win as ``1/len(winners)``. The 95% intervals are t-intervals
over deal sets: a deal set's rotations share its deals and draws, so they are one paired sample,
not independent games (win-rate intervals are kept inside [0, 1]; Wilson's score interval over the
agent's seat-games, the earlier figure, is kept as ``win_rate_wilson_ci95``). With ``luck`` the
report adds luck-corrected figures (AIVAT, :mod:`training.luck`). Ratings are OpenSkill
(Plackett-Luce) ordinals over all games.
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import Agent, load
from agents.base import needs_history
from cf_env import ConfigError, Game, ObservationEncoder, RulesConfig, raw_env
from cf_env.engine.scoring import win_share
from training.luck import t_interval
from training.workers import WorkerPool, worker_state

__all__ = ["AgentResult", "EvalReport", "GameSaver", "evaluate", "generate_deals", "play_game", "short_name",
           "warm_up", "wilson_interval", "win_rates"]


def short_name(spec: str, width: int = 18) -> str:
    """A spec as a label fits a progress bar or a chart: a checkpoint path as its folder and
    file stem (``default/final``), anything longer than ``width`` cut at the end with an ellipsis
    (``zoo:strong-4p`` stays whole)."""
    if "/" in spec or "\\" in spec:
        path = Path(spec)
        spec = f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem
    return spec if len(spec) <= width else spec[: width - 1] + "…"


def wilson_interval(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a win rate measured over ``n`` games (95% for ``z`` 1.96)."""
    if n <= 0:
        return (0.0, 1.0)
    z2 = z * z / n
    centre = (rate + z2 / 2) / (1 + z2)
    half = z * math.sqrt(max(rate * (1 - rate), 0.0) / n + z2 / (4 * n)) / (1 + z2)
    return (max(0.0, centre - half), min(1.0, centre + half))


def generate_deals(config: RulesConfig, rng: np.random.Generator) -> list[dict]:
    """Every round's deal of one game, in the engine's scripted-deal format."""
    deals = []
    n, h = config.num_players, config.hand_size
    for _ in range(config.rounds):
        game = Game(RulesConfig(**{**config.to_dict(), "rounds": 1}), seed=rng)
        deal = game.to_record()["deals"][0]
        deals.append(deal)
        assert len(deal["hands"]) == n and all(len(x) == h for x in deal["hands"])
    return deals


def known_policy(agent: Agent) -> bool:
    """Whether a luck-corrected evaluation corrects ``agent``'s decisions: it says what its
    policy is (``action_probabilities(observation)``) and the policy is not deterministic (a
    deterministic one's terms are all zero)."""
    return hasattr(agent, "action_probabilities") and not getattr(agent, "deterministic", False)


def play_game(env: raw_env, seats: Sequence[Agent], deals: list[dict] | None, rng: np.random.Generator,
              seed: int | None = None, clock: np.ndarray | None = None,
              policies: list[np.ndarray | None] | None = None, boards: list[tuple[int, int]] | None = None) -> Game:
    """Play one whole game with ``seats[i]`` at seat ``i``; returns the finished engine game.
    ``clock``, an ``(n, 4)`` float array, gets per seat: seconds in ``act``, decisions, and the
    same two over decisions with more than one legal action. ``policies``, a list, gets for every
    decision the action probabilities of a seat whose policy is known (:func:`known_policy`), else
    ``None``; ``boards``, a list, gets for every draw the board it was made on (open values as a
    bitmask, forced slots left). :func:`training.luck.corrected_outcomes` reads both."""
    env.reset(seed=seed, options={"deals": deals} if deals is not None else None)
    game = env.game
    names = env.possible_agents
    known = [known_policy(a) for a in seats] if policies is not None else [False] * len(seats)
    draw = game.config.num_actions - 2
    while not game.is_over:
        seat = game.current_player
        obs = env.observe(names[seat])
        if policies is not None:
            policies.append(np.asarray(seats[seat].action_probabilities(obs), np.float64)
                            if known[seat] else None)
        if clock is None and boards is None:
            env.step(seats[seat].act(obs, rng))
            continue
        start = time.perf_counter()
        action = seats[seat].act(obs, rng)
        if clock is not None:
            spent = time.perf_counter() - start
            clock[seat, 0] += spent
            clock[seat, 1] += 1
            if game.legal_bits & (game.legal_bits - 1):  # more than one legal action
                clock[seat, 2] += spent
                clock[seat, 3] += 1
        if boards is not None and action == draw:
            pending = game.pending
            boards.append((game.open_values, pending.count if pending is not None else 0))
        env.step(action)
    return game


@dataclass
class AgentResult:
    """One agent's figures. Intervals are 95% t-intervals over deal sets (the independent units:
    the rotations of one deal set are one paired sample; with a single deal set, Wilson's and
    the t-interval over its seat-games), kept inside [0, 1] for win rates;
    ``win_rate_wilson_ci95`` is Wilson's interval over seat-games, as if they were independent.
    ``*_se``: standard errors over deal sets; ``*_seat_se``: over seat-games. The
    ``*_corrected*`` figures come from a luck-corrected evaluation (:mod:`training.luck`), else
    they are ``None``."""

    spec: str
    seat_games: int = 0
    win_rate: float = 0.0
    win_rate_ci95: tuple[float, float] = (0.0, 0.0)
    mean_points: float = 0.0
    mean_points_ci95: tuple[float, float] = (0.0, 0.0)
    win_rate_corrected: float | None = None
    win_rate_corrected_ci95: tuple[float, float] | None = None
    mean_points_corrected: float | None = None
    mean_points_corrected_ci95: tuple[float, float] | None = None
    win_rate_wilson_ci95: tuple[float, float] = (0.0, 1.0)
    win_rate_se: float = 0.0
    win_rate_seat_se: float = 0.0
    mean_points_se: float = 0.0
    mean_points_seat_se: float = 0.0
    win_rate_corrected_se: float | None = None
    mean_points_corrected_se: float | None = None
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
    luck_corrected: bool = False
    ms_per_game: float = 0.0  #: playing time per game (in the workers; the correction not included)
    luck_ms_per_game: float | None = None  #: the correction's time per game (its own, in the workers)
    #: per spec, per deal set: its mean win share, total, corrected win share and corrected total
    per_deal_set: dict[str, list[list[float]]] = field(default_factory=dict)

    def table(self) -> str:
        head = (f"{'agent':<40} {'seat-games':>10} {'win rate':>9} {'95% CI':>17} {'mean pts':>9} {'rating':>7} "
                f"{'ms/dec':>7} {'ms/choice':>9}")
        lines = [head, "-" * len(head)]
        for r in self.results:
            lo, hi = r.win_rate_ci95
            lines.append(f"{r.spec[-40:]:<40} {r.seat_games:>10} {r.win_rate:>9.3f} "
                         f"{f'[{lo:.3f}, {hi:.3f}]':>17} {r.mean_points:>9.1f} {r.rating:>7.2f} "
                         f"{r.ms_per_decision:>7.2f} {r.ms_per_choice:>9.2f}")
        sets = f"{self.deal_sets} deal set{'s' if self.deal_sets != 1 else ''}"
        lines.append(f"{self.games} games = {sets} x {len(self.lineup)} seat rotations; "
                     f"{self.config['num_players']} players, double-{self.config['max_pip']}, "
                     f"{self.config['rounds']} rounds; parity win rate {1 / len(self.lineup):.3f}; "
                     f"intervals: t over deal sets")
        if self.luck_corrected:
            head = (f"{'luck-corrected (AIVAT)':<40} {'win rate':>9} {'95% CI':>17} {'se':>6} {'raw se':>6} "
                    f"{'mean pts':>9} {'95% CI':>17} {'se':>6} {'raw se':>6}")
            lines += ["", head, "-" * len(head)]
            for r in self.results:
                wl, wh = r.win_rate_corrected_ci95 or (0.0, 1.0)
                pl, ph = r.mean_points_corrected_ci95 or (0.0, 0.0)
                lines.append(f"{r.spec[-40:]:<40} {r.win_rate_corrected:>9.3f} {f'[{wl:.3f}, {wh:.3f}]':>17} "
                             f"{r.win_rate_corrected_se:>6.3f} {r.win_rate_se:>6.3f} {r.mean_points_corrected:>9.1f} "
                             f"{f'[{pl:.1f}, {ph:.1f}]':>17} {r.mean_points_corrected_se:>6.2f} {r.mean_points_se:>6.2f}")
            lines.append(f"the correction took {self.luck_ms_per_game:.1f} ms per game; playing took "
                         f"{self.ms_per_game:.1f}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return asdict(self)

    def write(self, path: str | Path) -> None:
        """Write ``.json`` or ``.csv`` (by suffix)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".csv":
            with path.open("w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["agent", "seat_games", "win_rate", "ci_low", "ci_high", "mean_points", "rating",
                                 "ms_per_decision", "ms_per_choice", "win_rate_corrected", "corrected_ci_low",
                                 "corrected_ci_high", "mean_points_corrected"])
                for r in self.results:
                    corrected = r.win_rate_corrected_ci95 or ("", "")
                    writer.writerow([r.spec, r.seat_games, r.win_rate, *r.win_rate_ci95, r.mean_points, r.rating,
                                     r.ms_per_decision, r.ms_per_choice, "" if r.win_rate_corrected is None else
                                     r.win_rate_corrected, *corrected,
                                     "" if r.mean_points_corrected is None else r.mean_points_corrected])
        else:
            path.write_text(json.dumps(self.to_json(), indent=2))

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


def warm_up(built: dict[str, Agent], config: RulesConfig) -> None:
    """One untimed decision per agent, so that compiling (numba) or loading is not counted in the
    time per decision."""
    game = Game(config, seed=0)
    while len(game.legal_actions()) < 2 and not game.is_over:
        game.apply(game.legal_actions()[0])
    if game.is_over:
        return
    observation = ObservationEncoder(config).observe(game, history=True)
    for agent in built.values():
        agent.act(observation, np.random.default_rng(0))


def _evaluator_state(specs: list[str], config_dict: dict, seed: int, records: bool = False,
                     built: dict[str, Agent] | None = None, luck: Any = None, luck_rollouts: int = 0) -> dict:
    """An evaluating worker's state (:class:`training.run.WorkerPool`'s initializer): the agents
    (``built`` ones as given, the other specs loaded), warmed up, an env, the run's settings and
    the luck correction's value function (``luck``: one, or a path to load it from) with its
    corrector (draws valued by ``luck_rollouts`` rollouts per tile when > 0)."""
    config = RulesConfig.from_dict(config_dict)
    if isinstance(luck, (str, Path)):
        from training.luck import load_luck_value

        luck = load_luck_value(config, luck)
    if luck is not None:
        from training.luck import DUPLICATE_EVENTS, LuckCorrector

        corrector = (LuckCorrector(config, events=DUPLICATE_EVENTS) if not luck_rollouts else
                     LuckCorrector(config, events=DUPLICATE_EVENTS, rollouts=luck_rollouts, draw_samples=0,
                                   round_points=luck.points_per_round()))
        luck = (luck, corrector)
    built = dict(built or {})
    for spec in dict.fromkeys(specs):
        if spec not in built:
            built[spec] = load(spec, config)
    warm_up(built, config)
    env = raw_env(**config.to_dict(), history=needs_history(built.values()))
    return {"built": built, "env": env, "specs": specs, "seed": seed, "records": records, "luck": luck}


def _play_deal_set(d: int, deals: list[dict]) -> list[tuple[list[str], list[int], list[int], np.ndarray, dict | None,
                                                            np.ndarray | None, float, float]]:
    """Every seat rotation of deal set ``d``: (seat specs, winners, totals, clock, the game's record
    when records are kept, the seats' luck-corrected (win share, total) when corrected, seconds
    the correction took, seconds the game took) per game."""
    state = worker_state()
    specs, built, env, seed, keep = state["specs"], state["built"], state["env"], state["seed"], state["records"]
    luck = state["luck"]  # (value function, corrector) or None
    n = len(specs)
    out = []
    games, policies, boards, seatings = [], [], [], []
    for rot in range(n):
        seat_specs = [specs[(s - rot) % n] for s in range(n)]
        seatings.append(seat_specs)
        clock = np.zeros((n, 4))
        known: list | None = [] if luck is not None else None
        drawn_on: list | None = [] if luck is not None else None
        start = time.perf_counter()
        game = play_game(env, [built[s] for s in seat_specs], deals, np.random.default_rng([seed, d, rot]),
                         clock=clock, policies=known, boards=drawn_on)
        played = time.perf_counter() - start
        games.append(game)
        policies.append(known)
        boards.append(drawn_on)
        out.append([seat_specs, game.winners, game.totals, clock, game.to_record() if keep else None, None, 0.0,
                    played])
    if luck is not None:
        from training.luck import corrected_outcomes

        start = time.perf_counter()
        _, corrected = corrected_outcomes(luck[0], games, np.random.default_rng([seed, d, n]), policies, luck[1],
                                          boards, seatings)
        spent = (time.perf_counter() - start) / n
        for rot in range(n):
            out[rot][5:7] = [corrected[rot], spent]
    return [tuple(x) for x in out]  # type: ignore[misc]


def _ranks(winners: list[int], totals: list[int]) -> list[int]:
    """0 for the winners (R16), then by total points."""
    order = sorted({t for p, t in enumerate(totals) if p not in winners})
    return [0 if p in winners else 1 + order.index(totals[p]) for p in range(len(totals))]


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
             save_games: str | Path | None = None, worst: int = 0, worst_agent: str | None = None,
             luck: bool | str | Path | Any = False, address: str | None = None, luck_rollouts: int = 0) -> EvalReport:
    """Play ``deal_sets`` duplicate deal sets, each once per seat rotation of ``lineup``.

    ``luck``: also report luck-corrected win rates and points (AIVAT, :mod:`training.luck`):
    ``True`` for the value function of these rules (:func:`training.luck.load_luck_value`), a
    path to one, or a :class:`training.luck.LuckValue`. ``luck_rollouts`` > 0: value the draws by
    that many compiled rollouts of the round per boneyard tile instead of by the value function
    (:class:`training.luck.LuckCorrector`'s ``rollouts``; seconds per game: a research setting).

    ``save_games``: a folder for game records (:class:`GameSaver`): every game, or with ``worst``
    = N the N games where ``worst_agent`` (default: the first spec) did worst.

    ``workers`` > 1 plays deal sets in that many processes (the lineup must then be specs, which
    each process loads); the report is the same as with one process, timings aside. ``address``:
    play them on the Ray cluster whose head is there instead, ``workers`` actors (default: one per
    CPU of the cluster; checkpoint paths must be readable on every node). The processes
    are spawned, so a script that calls this must guard its entry point with
    ``if __name__ == "__main__":`` (the ``chickenfoot`` command does)."""
    from openskill.models import PlackettLuce
    from tqdm.auto import tqdm

    n = config.num_players
    if len(lineup) != n:
        raise ConfigError(f"the lineup names {len(lineup)} agents but the game has {n} seats")
    if isinstance(deal_sets, bool) or not isinstance(deal_sets, int) or deal_sets < 1:
        raise ConfigError(f"deal_sets must be a positive int, got {deal_sets!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be an int >= 0, got {seed!r}")
    if workers is None and not address:
        workers = 1
    elif workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers must be a positive int, got {workers!r}")
    specs = [x if isinstance(x, str) else x.name for x in lineup]
    remote = address is not None or (workers or 1) > 1
    if remote and (agents_by_spec or not all(isinstance(x, str) for x in lineup)):
        raise ConfigError("workers > 1 or a cluster address needs a lineup of agent specs (each process loads "
                          "its own agents)")
    if address:  # a relative checkpoint path means nothing in a Ray worker's folder
        specs = [str(Path(x).resolve()) if Path(x).is_file() else x for x in specs]
    distinct = list(dict.fromkeys(specs))
    if luck is False or luck is None:
        luck = None
    elif luck is True or isinstance(luck, (str, Path)):  # loaded (or fitted) here, once: workers get it made
        from training.luck import load_luck_value

        luck = load_luck_value(config, None if luck is True else luck, progress=progress)
    elif not hasattr(luck, "values"):
        raise ConfigError(f"luck must be True/False, a path to a value function or a LuckValue, got {luck!r}")
    if isinstance(luck_rollouts, bool) or not isinstance(luck_rollouts, int) or luck_rollouts < 0:
        raise ConfigError(f"luck_rollouts must be an int >= 0 (0: draws valued by the value function), got {luck_rollouts!r}")
    if luck_rollouts and luck is None:
        raise ConfigError("luck_rollouts values the draws of the luck correction: set luck too")
    saver = GameSaver(save_games, specs, worst, worst_agent, seed) if save_games is not None else None
    rng = np.random.default_rng(seed)
    all_deals = [generate_deals(config, rng) for _ in range(deal_sets)]
    model = PlackettLuce()
    ratings = {s: model.rating(name=s) for s in distinct}
    # per spec, one row per seat-game: deal set, win share, total, and the corrected two (nan if none)
    rows: dict[str, list[tuple[int, float, float, float, float]]] = {s: [] for s in distinct}
    clocks = {s: np.zeros(4) for s in distinct}
    luck_seconds, play_seconds = [0.0], [0.0]
    bar = tqdm(total=deal_sets * n, desc="eval", unit="game", disable=not progress, leave=False)

    def record(games: list, d: int) -> None:
        for rot, (seat_specs, winners, totals, clock, game, corrected, spent, played) in enumerate(games):
            if saver is not None:
                saver.add(d, rot, seat_specs, winners, totals, game)
            luck_seconds[0] += spent
            play_seconds[0] += played
            for seat, spec in enumerate(seat_specs):
                fixed = corrected[seat] if corrected is not None else (math.nan, math.nan)
                rows[spec].append((d, win_share(seat in winners, len(winners)), totals[seat], *fixed))
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
    # spawned workers load the value function from a file (a torch module does not cross spawn cheaply)
    with tempfile.TemporaryDirectory(prefix="chickenfoot-luck-") as folder:
        sent: Any = luck
        if address is None and remote and luck is not None:  # a Ray cluster gets the object itself
            if not hasattr(luck, "save"):
                raise ConfigError("workers > 1 send the value function to each process as a file: give a LuckValue "
                                  "(or a path to one), or evaluate with workers=1")
            sent = Path(folder) / "value.pt"
            luck.save(sent)
        with WorkerPool(workers, _evaluator_state, (specs, config.to_dict(), seed, saver is not None, given,
                                                    sent, luck_rollouts), address=address) as pool:
            for d, games in enumerate(pool.map(_play_deal_set, range(deal_sets), all_deals)):
                record(games, d)  # in deal-set order: the ratings do not depend on the workers
    bar.close()
    if saver is not None:
        saver.close()
    report = EvalReport(config=config.to_dict(), lineup=specs, deal_sets=deal_sets, games=deal_sets * n, seed=seed,
                        luck_corrected=luck is not None, ms_per_game=1000 * play_seconds[0] / (deal_sets * n),
                        luck_ms_per_game=1000 * luck_seconds[0] / (deal_sets * n) if luck is not None else None)
    for spec in distinct:
        r = ratings[spec]
        c = clocks[spec]
        table = np.array(rows[spec], float)
        sets = _deal_set_means(table, deal_sets)  # (deal sets, 4)
        m = float(table[:, 1].mean())
        result = AgentResult(
            spec=spec, seat_games=len(table), win_rate=m,
            win_rate_ci95=t_interval(sets[:, 0], 0.0, 1.0) if deal_sets > 1 else wilson_interval(m, len(table)),
            mean_points=float(table[:, 2].mean()), mean_points_ci95=_points_interval(sets[:, 1], table[:, 2]),
            win_rate_wilson_ci95=wilson_interval(m, len(table)), win_rate_se=_se(sets[:, 0]),
            win_rate_seat_se=_se(table[:, 1]), mean_points_se=_se(sets[:, 1]),
            mean_points_seat_se=_se(table[:, 2]), rating=float(r.ordinal()),
            rating_mu=float(r.mu), rating_sigma=float(r.sigma), ms_per_decision=1000 * c[0] / max(c[1], 1),
            ms_per_choice=1000 * c[2] / max(c[3], 1))
        if luck is not None:
            result.win_rate_corrected = float(table[:, 3].mean())
            result.win_rate_corrected_ci95 = t_interval(sets[:, 2], 0.0, 1.0)
            result.mean_points_corrected = float(table[:, 4].mean())
            result.mean_points_corrected_ci95 = _points_interval(sets[:, 3], table[:, 4])
            result.win_rate_corrected_se, result.mean_points_corrected_se = _se(sets[:, 2]), _se(sets[:, 3])
        report.results.append(result)
        report.per_deal_set[spec] = sets.round(6).tolist()
    return report


def _deal_set_means(table: np.ndarray, deal_sets: int) -> np.ndarray:
    """``(deal sets, 4)``: an agent's mean win share, total and their corrected values in each
    deal set, from its seat-game rows ``(deal set, win, total, corrected win, corrected total)``."""
    sums = np.zeros((deal_sets, 4))
    counts = np.zeros(deal_sets)
    d = table[:, 0].astype(int)
    np.add.at(sums, d, table[:, 1:])
    np.add.at(counts, d, 1)
    return sums / counts[:, None]


def _points_interval(per_deal_set: np.ndarray, per_game: np.ndarray) -> tuple[float, float]:
    """The t-interval of mean points over deal sets; with one deal set, over its seat-games (as
    if they were independent: the only spread there is)."""
    return t_interval(per_deal_set if len(per_deal_set) > 1 else per_game, 0.0)


def _se(values: np.ndarray) -> float:
    """The standard error of the mean of ``values`` (0 for fewer than two)."""
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


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
