"""The luck correction plugged into the library's evaluation through its deal-set hook.

:func:`luck_evaluate` runs :func:`training.evaluate.evaluate` with a :class:`LuckHook`: after each
deal set, in the process that played it, the hook replays the deal set's finished games
(:func:`replay_decisions`: the policies of seats whose policy is known, the board of every draw)
and corrects each seat's outcome (:func:`lab.luck.value.corrected_outcomes`). The report is the
library's, plus the corrected figures per agent with t-intervals over deal sets.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import Agent
from agents.base import needs_history
from cf_env import ConfigError, Game, GameEncoder, RulesConfig
from lab.luck.value import DUPLICATE_EVENTS, LuckCorrector, LuckValue, corrected_outcomes, load_luck_value
from training.evaluate import EvalReport, deal_set_means, evaluate, points_interval
from training.stats import standard_error, t_interval

__all__ = ["LuckHook", "LuckReport", "known_policy", "luck_evaluate", "replay_decisions"]


def known_policy(agent: Agent) -> bool:
    """Whether the correction corrects ``agent``'s decisions: it says what its policy is
    (``action_probabilities(observation)``) and the policy is not deterministic (a deterministic
    one's terms are all zero)."""
    return hasattr(agent, "action_probabilities") and not getattr(agent, "deterministic", False)


def replay_decisions(game: Game, seats: Sequence[Agent]) -> tuple[list[np.ndarray | None], list[tuple[int, int]]]:
    """Play the finished ``game`` again from its deals with ``seats[i]`` at seat ``i``:
    ``(policies, boards)``, for every decision the action probabilities of a seat whose policy is
    known (:func:`known_policy`, from the observation it had) else ``None``, and for every draw the
    board it was made on (open values as a bitmask, forced slots left)."""
    known = [known_policy(a) for a in seats]
    encoder = GameEncoder(game.config) if any(known) else None
    history = needs_history(seats)
    draw = game.config.num_actions - 2
    again = game.rewound()
    policies: list[np.ndarray | None] = []
    boards: list[tuple[int, int]] = []
    for action in game.actions():
        seat = again.current_player
        if encoder is not None and known[seat]:
            policies.append(np.asarray(seats[seat].action_probabilities(encoder.observe(again, history=history)),
                                       np.float64))
        else:
            policies.append(None)
        if action == draw:
            pending = again.pending
            boards.append((again.open_values, pending.count if pending is not None else 0))
        again.apply(action)
    return policies, boards


class LuckHook:
    """The deal-set hook (:class:`training.evaluate.DealSetHook`) of a luck-corrected
    evaluation: returns each game's corrected ``(n, 2)`` (win share, total) and the seconds the
    correction took. ``value``: a :class:`LuckValue`, or a path to one (what is sent to worker
    processes: it is loaded there once)."""

    def __init__(self, config: RulesConfig, value: LuckValue | str | Path, seed: int, rollouts: int = 0) -> None:
        self.config, self.value, self.seed, self.rollouts = config, value, seed, rollouts
        self._corrector: LuckCorrector | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_corrector": None}

    def _ready(self) -> tuple[LuckValue, LuckCorrector]:
        if isinstance(self.value, (str, Path)):
            self.value = LuckValue.load(self.value, self.config)
        if self._corrector is None:
            self._corrector = (LuckCorrector(self.config, events=DUPLICATE_EVENTS) if not self.rollouts else
                               LuckCorrector(self.config, events=DUPLICATE_EVENTS, rollouts=self.rollouts,
                                             draw_samples=0, round_points=self.value.points_per_round()))
        return self.value, self._corrector

    def __call__(self, d: int, games: list[Game], seatings: list[list[str]], agents: dict[str, Agent]) -> dict:
        value, corrector = self._ready()
        start = time.perf_counter()
        policies, boards = [], []
        for game, seat_specs in zip(games, seatings):
            p, b = replay_decisions(game, [agents[s] for s in seat_specs])
            policies.append(p)
            boards.append(b)
        _, corrected = corrected_outcomes(value, games, np.random.default_rng([self.seed, d, len(seatings[0])]),
                                          policies, corrector, boards, seatings)
        return {"corrected": corrected, "seconds": time.perf_counter() - start}


@dataclass
class LuckReport:
    """The library's report (``report``) and, per spec, its luck-corrected figures: win rate and
    mean points with 95% t-intervals and standard errors over deal sets, and each deal set's
    corrected means; the correction's milliseconds per game."""

    report: EvalReport
    corrected: dict[str, dict[str, Any]] = field(default_factory=dict)
    ms_per_game: float = 0.0

    def table(self) -> str:
        head = (f"{'luck-corrected (AIVAT)':<40} {'win rate':>9} {'95% CI':>17} {'se':>6} {'raw se':>6} "
                f"{'mean pts':>9} {'95% CI':>17} {'se':>6} {'raw se':>6}")
        lines = [self.report.table(), "", head, "-" * len(head)]
        for r in self.report.results:
            c = self.corrected[r.spec]
            (wl, wh), (pl, ph) = c["win_rate_ci95"], c["mean_points_ci95"]
            lines.append(f"{r.spec[-40:]:<40} {c['win_rate']:>9.3f} {f'[{wl:.3f}, {wh:.3f}]':>17} "
                         f"{c['win_rate_se']:>6.3f} {r.win_rate_se:>6.3f} {c['mean_points']:>9.1f} "
                         f"{f'[{pl:.1f}, {ph:.1f}]':>17} {c['mean_points_se']:>6.2f} {r.mean_points_se:>6.2f}")
        lines.append(f"the correction took {self.ms_per_game:.1f} ms per game; playing took "
                     f"{self.report.ms_per_game:.1f} ms per game")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {**self.report.to_json(), "luck": {"corrected": self.corrected, "ms_per_game": self.ms_per_game}}


def luck_evaluate(lineup: Sequence[str | Agent], config: RulesConfig, deal_sets: int = 100, seed: int = 0,
                  value: LuckValue | str | Path | None = None, rollouts: int = 0, **kwargs: Any) -> LuckReport:
    """:func:`training.evaluate.evaluate` (``kwargs`` go to it) with the luck correction:
    ``value`` the value function (default: the one of these rules, shipped, cached or fitted now,
    :func:`lab.luck.value.load_luck_value`); ``rollouts`` > 0 values draws by that many compiled
    rollouts per boneyard tile instead (seconds per game)."""
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 0:
        raise ConfigError(f"rollouts must be an int >= 0 (0: draws valued by the value function), got {rollouts!r}")
    if value is None or isinstance(value, (str, Path)):
        value = load_luck_value(config, value, progress=kwargs.get("progress", True))
    elif not hasattr(value, "values"):
        raise ConfigError(f"value must be a LuckValue or a path to one, got {value!r}")
    remote = kwargs.get("address") is not None or (kwargs.get("workers") or 1) > 1
    with tempfile.TemporaryDirectory(prefix="chickenfoot-luck-") as folder:
        sent: LuckValue | Path = value
        if remote and kwargs.get("address") is None:  # spawned workers load it from a file
            sent = Path(folder) / "value.pt"
            value.save(sent)
        report = evaluate(lineup, config, deal_sets=deal_sets, seed=seed,
                          on_deal_set=LuckHook(config, sent, seed, rollouts), **kwargs)
    n = config.num_players
    out = LuckReport(report)
    seconds = sum(h["seconds"] for h in report.hook_results)
    out.ms_per_game = 1000 * seconds / (deal_sets * n)
    for spec in dict.fromkeys(report.lineup):
        rows = []  # deal set, corrected win share, corrected total
        for d, hooked in enumerate(report.hook_results):
            for rot in range(n):
                for seat in range(n):
                    if report.lineup[(seat - rot) % n] == spec:
                        rows.append((d, *hooked["corrected"][rot][seat]))
        table = np.array(rows, float)
        sets = deal_set_means(table[:, 0].astype(int), table[:, 1:], deal_sets)
        out.corrected[spec] = {
            "win_rate": float(table[:, 1].mean()), "win_rate_ci95": t_interval(sets[:, 0], 0.0, 1.0),
            "win_rate_se": standard_error(sets[:, 0]), "mean_points": float(table[:, 2].mean()),
            "mean_points_ci95": points_interval(sets[:, 1], table[:, 2]), "mean_points_se": standard_error(sets[:, 1]),
            "per_deal_set": sets.round(6).tolist()}
    return out

