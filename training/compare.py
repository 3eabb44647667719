"""Is A stronger than B? A paired comparison on common random numbers, fixed-size or sequential.

A and B each take the same seats of the same lineup on the same deal sets: the same deals, the
same boneyard orders and the same random streams for every seat (each game's generator is seeded
from ``(seed, deal set, rotation)`` exactly as :func:`training.evaluate.evaluate` seeds it, so a
comparison's figures are the two evaluations' figures). The statistic is the difference ``A - B``
of each deal set's win rate (and mean points), so the luck of the deal that both agents shared
cancels: :class:`Comparison` reports the mean differences with t-intervals, the correlation of the
two agents' results and the standard error the pairing saved.

With :class:`~training.stats.Sprt` the comparison is sequential: after every deal set the
log-likelihood ratio of ``elo >= elo1`` against ``elo <= elo0`` is updated, and the comparison
stops when it crosses a bound (a verdict with false-verdict rates ``alpha`` and ``beta``) or
after ``deal_sets`` (no verdict). ``save`` keeps every deal set's pair of results in a JSON-lines
file as it comes; a comparison started again with the same file goes on from there.

Head to head (``vs=None``), A holds one seat and B the others, with rotated seats; the
difference is A's win rate less B's (per seat) in the same games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import Agent, load
from agents.base import needs_history
from cf_env import ConfigError, RulesConfig, raw_env
from training.arena import GameRow, fill_lineup, iter_deal_sets, play_rotations, spec_clock, spec_means, warm_up
from training.results import ResultsFile
from training.stats import (
    Sprt,
    elo_of_win_rates,
    head_to_head_elo,
    standard_error,
    t_interval,
)
from training.workers import WorkerPool, worker_state

__all__ = ["Comparison", "ResultsFile", "Sprt", "compare"]


@dataclass
class Comparison:
    """Is ``a`` stronger than ``b`` (see the module docstring). The figures are over the per-deal-set
    differences ``a - b``: the mean difference in win rate and in points with 95% t-intervals, the
    correlation of the two agents' per-deal-set results (what the pairing bought: the paired
    standard error against the one of two independent evaluations), the games each agent played
    and the Elo difference the win rates imply. A sequential comparison adds ``sprt`` (the test's
    settings, its LLR and bounds, the verdict) and ``fixed_deal_sets``: what a fixed-size test with
    the same error rates needs, paired and as two independent evaluations, from the variances
    measured here. ``ms_per_choice`` is each agent's mean time in ``act`` at a decision with more
    than one legal action, over the deal sets played by this call (``None`` when a resumed
    results file held them all: it keeps no times)."""

    a: str
    b: str
    vs: list[str]
    deal_sets: int
    games: int
    seed: int
    win_rate: tuple[float, float] = (0.0, 0.0)  #: a's, b's
    win_rate_diff: float = 0.0
    win_rate_diff_ci95: tuple[float, float] = (0.0, 0.0)
    win_rate_correlation: float = 0.0
    win_rate_se: tuple[float, float] = (0.0, 0.0)  #: of the difference: paired, and as two independent evaluations
    mean_points: tuple[float, float] = (0.0, 0.0)
    mean_points_diff: float = 0.0
    mean_points_diff_ci95: tuple[float, float] = (0.0, 0.0)
    mean_points_correlation: float = 0.0
    mean_points_se: tuple[float, float] = (0.0, 0.0)
    elo: float = 0.0  #: A - B, from the win rates (:func:`training.stats.elo_of_win_rates`)
    elo_ci95: tuple[float, float] = (0.0, 0.0)
    ms_per_choice: tuple[float, float] | None = None  #: a's, b's time in ``act`` at a decision with a choice
    players: int = 2  #: seats at the table (with no ``vs``, one agent in one seat against copies of the other)
    sprt: dict[str, Any] | None = None
    fixed_deal_sets: dict[str, int] | None = None  #: ``paired`` and ``independent``
    per_deal_set: dict[str, list[list[float]]] = field(default_factory=dict, repr=False)  #: a, b: [win rate, points]

    @property
    def verdict(self) -> str | None:
        """``"H1"`` (A is stronger by elo1 or more), ``"H0"`` (not by more than elo0), or ``None``."""
        return self.sprt["verdict"] if self.sprt else None

    def table(self) -> str:
        if self.vs:
            against = f"each as 1 vs {', '.join(self.vs)}"
        elif self.players == 2:
            against = "head to head"
        else:  # the lineup [A, B] filled to the table: A in one seat, B in the others
            against = f"each in one seat against {self.players - 1} copies of the other"
        lines = [f"{self.a} against {self.b}, {against}: {self.deal_sets} deal sets, {self.games} games each, "
                 f"seed {self.seed}"]
        head = f"{'':<12} {'A':>8} {'B':>8} {'A - B':>8} {'95% CI':>18} {'corr':>6} {'se paired/unpaired':>20}"
        lines += [head, "-" * len(head)]
        for label, pair, diff, ci, corr, se, fmt in (
                ("win rate", self.win_rate, self.win_rate_diff, self.win_rate_diff_ci95, self.win_rate_correlation,
                 self.win_rate_se, ".3f"),
                ("mean points", self.mean_points, self.mean_points_diff, self.mean_points_diff_ci95,
                 self.mean_points_correlation, self.mean_points_se, ".1f")):
            lines.append(f"{label:<12} {pair[0]:>8{fmt}} {pair[1]:>8{fmt}} {diff:>+8{fmt}} "
                         f"{f'[{ci[0]:+{fmt}}, {ci[1]:+{fmt}}]':>18} {corr:>6.2f} "
                         f"{f'{se[0]:.4f} / {se[1]:.4f}':>20}")
        lines.append(f"{'elo A - B':<12} {self.elo:>+35.1f} {f'[{self.elo_ci95[0]:+.1f}, {self.elo_ci95[1]:+.1f}]':>18}")
        if self.ms_per_choice is not None:
            lines.append(f"{'ms/choice':<12} {self.ms_per_choice[0]:>8.2f} {self.ms_per_choice[1]:>8.2f}")
        if self.sprt is None:
            lo, hi = self.win_rate_diff_ci95
            verdict = ("A wins more often" if lo > 0 else "B wins more often" if hi < 0 else
                       "no win-rate difference shown at this size")
            lines.append(f"{verdict} (fewer points are better; the intervals are t over deal sets)")
            return "\n".join(lines)
        s = self.sprt
        lines.append(f"SPRT: LLR {s['llr']:.2f} ({s['bounds'][0]:.2f}, {s['bounds'][1]:.2f}) "
                     f"[elo0 {s['elo0']:g}, elo1 {s['elo1']:g}], alpha {s['alpha']:g}, beta {s['beta']:g}, "
                     f"{self.deal_sets} deal sets")
        if s["verdict"] == "H1":
            lines.append(f"verdict H1: A is stronger than B (the data favour elo {s['elo1']:g} over elo "
                         f"{s['elo0']:g}; a test like this says so at most {s['alpha']:.0%} of the time when elo <= "
                         f"{s['elo0']:g})")
        elif s["verdict"] == "H0":
            lines.append(f"verdict H0: A is not stronger than B by elo {s['elo1']:g} (the data favour elo "
                         f"{s['elo0']:g}; a test like this says so at most {s['beta']:.0%} of the time when elo >= "
                         f"{s['elo1']:g})")
        else:
            lines.append(f"no verdict after the maximum of {self.deal_sets} deal sets (raise --deal-sets, or "
                         f"widen elo1 - elo0)")
        if self.fixed_deal_sets:
            fixed = self.fixed_deal_sets
            lines.append(f"a fixed-size test with the same error rates needs {fixed['independent']} deal sets per agent "
                         f"as two independent evaluations, {fixed['paired']} paired; this one used {self.deal_sets} "
                         f"({self.deal_sets / max(fixed['independent'], 1):.2f} of the former)")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return asdict(self)


def _comparer_state(lineups: list[list[str]], config: RulesConfig, seed: int, given: dict[str, Agent]) -> dict:
    """A comparing worker's state (:class:`training.workers.WorkerPool`'s initializer): every
    lineup's agents, warmed up, and an env."""
    built = dict(given)
    for spec in dict.fromkeys(s for lineup in lineups for s in lineup):
        if spec not in built:
            built[spec] = load(spec, config)
    warm_up(built, config)
    env = raw_env(config=config, history=needs_history(built.values()))
    return {"built": built, "env": env, "lineups": lineups, "seed": seed}


def _play_lineups(d: int, deals: list[dict]) -> list[list[GameRow]]:
    """Deal set ``d`` played by every lineup, every seat rotation (:func:`training.arena.play_rotations`)."""
    state = worker_state()
    built, env, seed = state["built"], state["env"], state["seed"]
    return [play_rotations(env, built, lineup, deals, seed, d) for lineup in state["lineups"]]


def compare(a: str | Agent, b: str | Agent, config: RulesConfig, vs: Sequence[str | Agent] | None = ("heuristic",),
            deal_sets: int = 100, seed: int = 0, progress: bool = True, workers: int | None = 1,
            address: str | None = None, sprt: Sprt | None = None, save: str | Path | None = None) -> Comparison:
    """Compare ``a`` with ``b`` on common random numbers (see the module docstring). With ``vs``
    (agents or specs; the last fills the remaining seats) each of ``a`` and ``b`` takes seat 0 of
    that lineup on the same deal sets; with ``vs=None`` they play each other, ``a`` in one seat and
    ``b`` in the rest. ``sprt``: stop at a verdict (``deal_sets`` is then the most it plays).
    ``save``: a JSON-lines file of the per-deal-set results, resumed from when it holds this
    comparison. ``workers``/``address``: as for :func:`training.evaluate.evaluate` (a worker that
    dies loses nothing).

    Raises:
        ConfigError: a bad lineup, count, seed or test, or a ``save`` file of another comparison
            (nothing is played).
    """
    from tqdm.auto import tqdm

    if isinstance(deal_sets, bool) or not isinstance(deal_sets, int) or deal_sets < 1:
        raise ConfigError(f"deal_sets must be a positive int, got {deal_sets!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be an int >= 0, got {seed!r}")
    if sprt is not None and not isinstance(sprt, Sprt):
        raise ConfigError(f"sprt must be a training.stats.Sprt, got {sprt!r}")
    given: dict[str, Agent] = {}

    def spec(x: str | Agent) -> str:
        if isinstance(x, str):
            return x
        given.setdefault(x.name, x)
        return x.name

    first, second = spec(a), spec(b)
    if first == second and not (isinstance(a, str) or a is b):
        raise ConfigError(f"A and B are two agents named {first!r}: give them different names (an agent object's "
                          f"name is its spec here)")
    opponents = [spec(o) for o in vs] if vs is not None else None
    if opponents is not None:
        if not opponents:
            raise ConfigError("vs names no opponent: give one, or None for head to head")
        rows_of = [[first, *opponents], [second, *opponents]]
    else:
        rows_of = [[first, second]]
    lineups = [[str(x) for x in fill_lineup(row, config.num_players)] for row in rows_of]
    others = list(lineups[0][1:]) if vs is not None else [second]
    for agent in ((first,) if vs is None else (first, second)):
        if agent in others:
            raise ConfigError(f"{agent!r} is also among its opponents: an evaluation pools every seat of a spec, "
                              f"so its own figures would be lost; compare against other agents")
    remote = address is not None or (workers or 1) > 1
    if remote and given:
        raise ConfigError("workers > 1 or a cluster address needs agent specs (each process loads its own agents)")
    if address:  # a relative checkpoint path means nothing in a Ray worker's folder
        lineups = [[str(Path(x).resolve()) if Path(x).is_file() else x for x in lineup] for lineup in lineups]
    focal = (lineups[0][0], lineups[-1][0] if vs is not None else lineups[0][1])
    header = {"a": first, "b": second, "vs": opponents, "seed": seed, "rules": config.to_dict()}
    results = ResultsFile(save, header) if save is not None else None
    rows = [(r["a"], r["b"]) for r in results.rows[:deal_sets]] if results is not None else []
    seats = None if vs is not None else config.num_players
    verdict: str | None = None
    llr, mu = 0.0, (0.0, 0.0)

    def test(n: int) -> str | None:
        """The sequential test after the first ``n`` deal sets."""
        nonlocal llr, mu
        if sprt is None or n < 2:
            return None
        ours = np.array([r[0][0] for r in rows[:n]])
        theirs = np.array([r[1][0] for r in rows[:n]])
        mu = sprt.mean_differences(float(np.mean(theirs)), seats)
        llr = sprt.llr(ours - theirs, *mu)
        return sprt.verdict(llr, n)

    for n in range(2, len(rows) + 1 if sprt is not None else 0):  # resumed: where the test would have stopped
        verdict = test(n)
        if verdict is not None:
            del rows[n:]
            break
    clocks = np.zeros((2, 4))  # a's, b's, over the deal sets played here (a resumed file keeps no times)
    bar = tqdm(total=deal_sets, initial=len(rows), desc="compare", unit="deal set", disable=not progress)
    try:
        if verdict is None and len(rows) < deal_sets:
            deals = iter_deal_sets(config, seed)
            for _ in range(len(rows)):
                next(deals)  # the deal sets already played
            tasks = ((d, next(deals)) for d in range(len(rows), deal_sets))
            with WorkerPool(workers, _comparer_state, (lineups, config, seed, given), address=address) as pool:
                for played in pool.imap(_play_lineups, tasks):
                    row = (spec_means(played[0], focal[0]), spec_means(played[-1], focal[1]))
                    clocks[0] += spec_clock(played[0], focal[0])
                    clocks[1] += spec_clock(played[-1], focal[1])
                    rows.append(row)
                    if results is not None:
                        results.add(a=row[0], b=row[1])
                    bar.update(1)
                    verdict = test(len(rows))
                    if sprt is not None:
                        lower, upper = sprt.bounds
                        bar.set_postfix_str(f"LLR {llr:+.2f} ({lower:.2f}, {upper:.2f})")
                    if verdict is not None:
                        break
    finally:
        bar.close()
        if results is not None:
            results.close()
    out = _summarize(rows, first, second, opponents or [], seed, config.num_players, seats, sprt, llr, mu, verdict)
    if clocks[:, 3].all():
        out.ms_per_choice = (1000 * clocks[0, 2] / clocks[0, 3], 1000 * clocks[1, 2] / clocks[1, 3])
    return out


def _summarize(rows: list[tuple[list[float], list[float]]], first: str, second: str, vs: list[str], seed: int,
               players: int, seats: int | None, sprt: Sprt | None, llr: float, mu: tuple[float, float],
               verdict: str | None) -> Comparison:
    ours, theirs = np.array([r[0] for r in rows], float), np.array([r[1] for r in rows], float)
    out = Comparison(a=first, b=second, vs=vs, deal_sets=len(rows), games=len(rows) * players, seed=seed, players=players,
                     per_deal_set={"a": ours.tolist(), "b": theirs.tolist()})
    for k, name in ((0, "win_rate"), (1, "mean_points")):
        x, y = ours[:, k], theirs[:, k]
        d = x - y
        paired = standard_error(d)
        unpaired = math.sqrt(standard_error(x) ** 2 + standard_error(y) ** 2)
        corr = float(np.corrcoef(x, y)[0, 1]) if len(d) > 1 and x.std() > 0 and y.std() > 0 else 0.0
        setattr(out, name, (float(x.mean()), float(y.mean())))
        setattr(out, f"{name}_diff", float(d.mean()))
        setattr(out, f"{name}_diff_ci95", t_interval(d) if len(d) > 1 else (-math.inf, math.inf))
        setattr(out, f"{name}_correlation", corr)
        setattr(out, f"{name}_se", (paired, unpaired))
    pa, pb = out.win_rate
    if seats is None:
        lo, hi = out.win_rate_diff_ci95
        out.elo = elo_of_win_rates(pa, pb)
        out.elo_ci95 = (elo_of_win_rates(min(max(pb + lo, 0.0), 1.0), pb), elo_of_win_rates(min(max(pb + hi, 0.0), 1.0), pb))
    else:
        lo, hi = t_interval(ours[:, 0], 0.0, 1.0) if len(rows) > 1 else (0.0, 1.0)
        out.elo = head_to_head_elo(pa, seats)
        out.elo_ci95 = (head_to_head_elo(lo, seats), head_to_head_elo(hi, seats))
    if sprt is not None:
        out.sprt = {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
                    "min_deal_sets": sprt.min_deal_sets, "llr": llr, "bounds": sprt.bounds, "verdict": verdict,
                    "mu0": mu[0], "mu1": mu[1]}
        if len(rows) > 1 and mu[1] > mu[0]:
            out.fixed_deal_sets = {
                "paired": sprt.fixed_deal_sets(*mu, float(np.var(ours[:, 0] - theirs[:, 0], ddof=1))),
                "independent": sprt.fixed_deal_sets(*mu, float(np.var(ours[:, 0], ddof=1) + np.var(theirs[:, 0], ddof=1)))}
    return out

