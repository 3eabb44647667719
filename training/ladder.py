"""A ladder any agent can be rated on: a fixed panel, fixed deals, one rating on a fixed scale.

The panel is a list of rungs, weakest first (random, greedy, the heuristic, the shipped network
and a search at a fixed number of simulations, in the order of their ratings); each rung has a rating on an Elo scale anchored at
``random = 0``, fitted once from a round robin of the panel (:func:`calibrate`, ``chickenfoot
ladder --calibrate``) and kept in :data:`PANELS`. An agent is rated by playing 1 vs ``n - 1`` of
each rung on the same ``deal_sets`` duplicate deal sets (seed :data:`LADDER_SEED`), and its
rating is the maximum-likelihood strength under the Plackett-Luce model the comparison's Elo uses
(a player wins with probability its strength's share: 1 vs ``n - 1`` copies of a rung rated
``r`` is won with probability ``g / (g + (n - 1) 10^(r/400))``, ``g = 10^(R/400)``). The panel's
ratings stay fixed, so ratings from different machines, runs and papers compare; the interval is
a bootstrap over deal sets.

The rungs are also the difficulty levels of ``chickenfoot play --level N``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from cf_env import ConfigError, RulesConfig
from training.evaluate import evaluate

__all__ = ["LADDER_SEED", "PANELS", "LadderResult", "calibrate", "fit_ratings", "ladder", "level_spec", "panel_for"]

LADDER_SEED = 20261203  #: the deal sets every ladder plays
_C = math.log(10) / 400  # natural-log strength per Elo point

#: The panels, by number of players (default rules otherwise): (spec, rating) weakest first.
#: Fitted by ``chickenfoot ladder --calibrate --players N`` (see lab/results/ladder.md). A rung is
#: frozen: when a shipped network it names is replaced, the old file stays in the zoo under a
#: suffixed name and the rung names that (``zoo:strong-2p-545k``, ``zoo:strong-2p`` when the panel
#: was fitted), so the ratings keep their meaning; tests/training/test_ladder.py holds each rung's
#: file hash.
PANELS: dict[int, list[tuple[str, float]]] = {
    4: [("random", 0.0), ("greedy", 345.1), ("heuristic", 489.9), ("search:ms=0:sims=16", 559.4),
        ("zoo:strong-4p", 674.1)],
    2: [("random", 0.0), ("greedy", 474.1), ("heuristic", 550.2), ("zoo:strong-2p-545k", 1090.1),
        ("search:ms=0:sims=16", 1140.7)],
}


def panel_for(config: RulesConfig) -> list[tuple[str, float]]:
    """The panel of ``config``'s rules; :class:`ConfigError` for rules that have none (the
    panels are fitted for the default rules of 2 and 4 players)."""
    defaults = RulesConfig(num_players=config.num_players).to_dict()
    if config.num_players not in PANELS or config.to_dict() != defaults:
        raise ConfigError(f"the ladder is fitted for the default rules of {sorted(PANELS)} players; these rules "
                          f"({config}) have no panel. Calibrate one with chickenfoot ladder --calibrate")
    return PANELS[config.num_players]


def level_spec(level: int, players: int) -> str:
    """The agent spec of difficulty ``level`` (1 = the weakest rung) for ``players`` players."""
    panel = PANELS.get(players) or PANELS[4]
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= len(panel):
        raise ConfigError(f"level must be 1 to {len(panel)}: " + ", ".join(
            f"{i + 1} {spec}" for i, (spec, _) in enumerate(panel)))
    return panel[level - 1][0]


def fit_ratings(results: list[tuple[int, int, float, float]], count: int, fixed: dict[int, float],
                seats: int) -> np.ndarray:
    """Maximum-likelihood ratings of ``count`` players from ``results``: ``(i, j, wins, games)``
    for player ``i`` as 1 vs ``seats - 1`` copies of ``j`` (``wins`` its summed win shares).
    ``fixed`` maps players to ratings that do not move (the anchor). Newton's method on the
    concave log-likelihood."""
    theta = np.zeros(count)
    for i, r in fixed.items():
        theta[i] = r
    free = [i for i in range(count) if i not in fixed]
    for _ in range(100):
        grad = np.zeros(count)
        hess = np.zeros((count, count))
        for i, j, w, g in results:
            p = 1 / (1 + (seats - 1) * math.exp(_C * (theta[j] - theta[i])))
            grad[i] += _C * (w - g * p)
            grad[j] -= _C * (w - g * p)
            h = _C * _C * g * p * (1 - p)
            hess[i, i] -= h
            hess[j, j] -= h
            hess[i, j] += h
            hess[j, i] += h
        sub = hess[np.ix_(free, free)] - 1e-9 * np.eye(len(free))  # a tiny ridge: a player who never lost
        step = np.linalg.solve(sub, grad[free])
        step = np.clip(step, -200.0, 200.0)
        theta[free] -= step
        if np.abs(step).max() < 1e-6:
            break
    return theta


@dataclass
class LadderResult:
    """An agent's rating on the ladder and its results against each rung."""

    agent: str
    rating: float
    rating_ci95: tuple[float, float]
    players: int
    deal_sets: int
    seed: int
    rungs: list[dict[str, Any]] = field(default_factory=list)  #: spec, rating, win_rate, win_rate_ci95, games

    def table(self) -> str:
        lines = [f"{self.agent} on the {self.players}-player ladder: {self.deal_sets} deal sets per rung, seed "
                 f"{self.seed}", f"{'rung':<28} {'rating':>7} {'win rate':>9} {'95% CI':>16} {'games':>6}"]
        lines.append("-" * len(lines[-1]))
        for rung in self.rungs:
            lo, hi = rung["win_rate_ci95"]
            lines.append(f"{rung['spec']:<28} {rung['rating']:>7.0f} {rung['win_rate']:>9.3f} "
                         f"{f'[{lo:.3f}, {hi:.3f}]':>16} {rung['games']:>6}")
        lo, hi = self.rating_ci95
        interval = (f"[{lo:.0f}, {hi:.0f}]" if hi > lo else
                    f"(no interval: {self.deal_sets} deal sets per rung are too few to bootstrap one; give "
                    f"--deal-sets 10 or more)")
        lines.append(f"rating {self.rating:.0f} {interval} (Elo, random = 0; parity win rate "
                     f"{1 / self.players:.3f}): {self.where()}")
        return "\n".join(lines)

    def where(self) -> str:
        """Where the rating falls among the rungs' ratings, in words."""
        ordered = sorted(self.rungs, key=lambda r: r["rating"])
        below = [r for r in ordered if r["rating"] <= self.rating]
        above = [r for r in ordered if r["rating"] > self.rating]
        if not below:
            return f"below every rung (lowest: {ordered[0]['spec']}, {ordered[0]['rating']:.0f})"
        if not above:
            return f"above every rung (highest: {ordered[-1]['spec']}, {ordered[-1]['rating']:.0f})"
        return (f"between {below[-1]['spec']} ({below[-1]['rating']:.0f}) and {above[0]['spec']} "
                f"({above[0]['rating']:.0f})")

    def to_json(self) -> dict:
        return asdict(self)


def _rating(per_rung: list[tuple[float, np.ndarray]], seats: int) -> float:
    """The agent's rating from its per-deal-set win rates against rungs of the given ratings."""
    ratings = [r for r, _ in per_rung]
    results = [(0, 1 + k, float(w.sum()) * seats, float(len(w)) * seats) for k, (_, w) in enumerate(per_rung)]
    fixed = {1 + k: r for k, r in enumerate(ratings)}
    return float(fit_ratings(results, 1 + len(ratings), fixed, seats)[0])


def ladder(agent: str, config: RulesConfig, deal_sets: int = 50, workers: int | None = 1, progress: bool = True,
           address: str | None = None, panel: list[tuple[str, float]] | None = None,
           bootstrap: int = 200) -> LadderResult:
    """Rate ``agent`` (a spec) on the panel of ``config``'s rules (:func:`panel_for`; or
    ``panel``, ``(spec, rating)`` pairs of your own): 1 vs ``n - 1`` of each rung on ``deal_sets``
    deal sets of :data:`LADDER_SEED`. A rung that is the agent itself is left out."""
    panel = [(spec, r) for spec, r in (panel if panel is not None else panel_for(config)) if spec != agent]
    if not panel:
        raise ConfigError("the panel has no rung but the agent itself")
    n = config.num_players
    per_rung = []
    out = LadderResult(agent=agent, rating=0.0, rating_ci95=(0.0, 0.0), players=n, deal_sets=deal_sets,
                       seed=LADDER_SEED)
    for spec, rating in panel:
        report = evaluate([agent, spec], config, deal_sets=deal_sets, seed=LADDER_SEED, progress=progress,
                          workers=workers, address=address)
        mine = report.results[0]
        wins = np.array(report.per_deal_set[mine.spec])[:, 0]
        per_rung.append((rating, wins))
        out.rungs.append({"spec": spec, "rating": rating, "win_rate": mine.win_rate,
                          "win_rate_ci95": mine.win_rate_ci95, "games": mine.seat_games})
    out.rating = _rating(per_rung, n)
    rng = np.random.default_rng(0)
    draws = [_rating([(r, w[rng.integers(len(w), size=len(w))]) for r, w in per_rung], n) for _ in range(bootstrap)]
    out.rating_ci95 = (float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))) if draws else (
        out.rating, out.rating)
    return out


def calibrate(specs: list[str], config: RulesConfig, deal_sets: int = 50, workers: int | None = 1,
              progress: bool = True, address: str | None = None) -> dict[str, Any]:
    """Fit a panel: every spec as 1 vs ``n - 1`` of every other, on the ladder's deal sets; the
    ratings with the first spec anchored at 0, and the win-rate matrix."""
    if len(set(specs)) != len(specs) or len(specs) < 2:
        raise ConfigError(f"a panel needs two or more different specs, got {specs}")
    n = config.num_players
    results, matrix = [], {}
    for i, a in enumerate(specs):
        for j, b in enumerate(specs):
            if i == j:
                continue
            report = evaluate([a, b], config, deal_sets=deal_sets, seed=LADDER_SEED, progress=progress,
                              workers=workers, address=address)
            mine = report.results[0]
            results.append((i, j, mine.win_rate * mine.seat_games, float(mine.seat_games)))
            matrix[f"{a} vs {b}"] = mine.win_rate
    ratings = fit_ratings(results, len(specs), {0: 0.0}, n)
    return {"players": n, "deal_sets": deal_sets, "seed": LADDER_SEED,
            "panel": [(spec, round(float(r), 1)) for spec, r in zip(specs, ratings)], "win_rates": matrix}
