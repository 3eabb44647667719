"""The statistics of an evaluation: intervals over deal sets and over seat-games, Elo differences
and the sequential test of a comparison (:class:`Sprt`).

Deal sets are the independent units of a duplicate evaluation (a deal set's seat rotations share
its deals and draws), so intervals are t-intervals over the deal sets' means; Wilson's score
interval over seat-games is kept for comparison with evaluations that treat games as
independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Sprt", "elo_of_win_rates", "head_to_head_elo", "head_to_head_win_rate", "standard_error", "t_interval",
           "t_quantile", "wilson_interval", "win_rate_at_elo"]


def t_quantile(df: int) -> float:
    """Student's t 97.5% quantile for ``df`` degrees of freedom: the Cornish-Fisher series in
    ``1/df`` around the normal's 1.96 (within 0.12% of the exact value from df 5 on, 1e-5 from
    df 30), the exact values below that."""
    if df <= 4:
        return (12.706204736174705, 4.302652729749464, 3.182446305284263, 2.7764451051977987)[df - 1]
    z = 1.959963984540054
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def t_interval(values: Sequence[float] | np.ndarray, lo: float = -math.inf, hi: float = math.inf) -> tuple[float, float]:
    """The 95% t-interval of the mean of ``values`` (independent units: deal sets), kept inside
    ``[lo, hi]``; ``(lo, hi)`` for fewer than two values."""
    x = np.asarray(values, float)
    if x.size < 2:
        return lo, hi
    half = t_quantile(x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return max(lo, float(x.mean() - half)), min(hi, float(x.mean() + half))


def wilson_interval(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a win rate measured over ``n`` games (95% for ``z`` 1.96)."""
    if n <= 0:
        return (0.0, 1.0)
    z2 = z * z / n
    centre = (rate + z2 / 2) / (1 + z2)
    half = z * math.sqrt(max(rate * (1 - rate), 0.0) / n + z2 / (4 * n)) / (1 + z2)
    return (max(0.0, centre - half), min(1.0, centre + half))


def standard_error(values: Sequence[float] | np.ndarray) -> float:
    """The standard error of the mean of ``values`` (0 for fewer than two)."""
    x = np.asarray(values, float)
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


# --- the sequential test of a paired comparison ------------------------------------------------

ELO_PER_LOG10_ODDS = 400.0


def _odds(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return p / (1 - p)


def _from_odds(o: float) -> float:
    return o / (1 + o)


def elo_of_win_rates(a: float, b: float) -> float:
    """The Elo difference A - B that win rates ``a`` and ``b`` against the same opponents imply:
    ``400 log10(odds(a) / odds(b))``. Under the Plackett-Luce model (a player wins with probability
    its strength's share) the number of opponents cancels out, so this reads the same for 1 vs 1
    and 1 vs 3."""
    return ELO_PER_LOG10_ODDS * math.log10(_odds(a) / _odds(b))


def win_rate_at_elo(base: float, elo: float) -> float:
    """The win rate of an agent ``elo`` points above one that wins ``base`` of its games against
    the same opponents (the inverse of :func:`elo_of_win_rates`)."""
    return _from_odds(_odds(base) * 10 ** (elo / ELO_PER_LOG10_ODDS))


def head_to_head_win_rate(elo: float, seats: int) -> float:
    """A's win rate in a game of ``seats`` players, A in one seat and B in the others, when A is
    ``elo`` above B (Plackett-Luce: ``g / (g + seats - 1)``, ``g = 10^(elo/400)``)."""
    g = 10 ** (elo / ELO_PER_LOG10_ODDS)
    return g / (g + seats - 1)


def head_to_head_elo(win_rate: float, seats: int) -> float:
    """The inverse of :func:`head_to_head_win_rate`."""
    return ELO_PER_LOG10_ODDS * math.log10((seats - 1) * _odds(win_rate))


@dataclass(frozen=True)
class Sprt:
    """Wald's sequential probability ratio test of ``H0: elo <= elo0`` against ``H1: elo >= elo1``
    on a paired comparison's per-deal-set differences, with false-verdict rates ``alpha`` (H1
    accepted when H0 holds) and ``beta`` (H0 accepted when H1 holds), as chess engine testing
    (Fishtest, OpenBench) runs it. The log-likelihood ratio is the generalized SPRT's normal
    form for normal data of unknown variance: each hypothesis is turned into the mean difference it
    implies (at the comparison's measured baseline win rate), the variance is fitted under each
    (:meth:`llr`), and the test stops when the LLR leaves
    ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``, never before ``min_deal_sets``.

    Why an SPRT and not an anytime-valid confidence sequence: for the two error rates it asks for,
    the SPRT needs the fewest games on average at both hypotheses (Wald and Wolfowitz), about half
    a fixed-size test's; a confidence sequence answers "how large is the gap" at every moment but
    pays for that with wider bounds and more games to a verdict. The calibration benchmark
    (``benchmarks/sprt.py``) measures both error rates and the games used."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    min_deal_sets: int = 10

    def __post_init__(self) -> None:
        from cf_env import ConfigError

        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 < value < 0.5:
                raise ConfigError(f"{name} must be in (0, 0.5), got {value!r}")
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (self.elo0, self.elo1)) \
                or self.elo1 <= self.elo0:
            raise ConfigError(f"elo1 must be greater than elo0 (the test tells elo <= elo0 from elo >= elo1), got "
                              f"elo0 {self.elo0!r}, elo1 {self.elo1!r}")
        if isinstance(self.min_deal_sets, bool) or not isinstance(self.min_deal_sets, int) or self.min_deal_sets < 2:
            raise ConfigError(f"min_deal_sets must be an int >= 2, got {self.min_deal_sets!r}")

    @property
    def bounds(self) -> tuple[float, float]:
        """The LLR's lower (accept H0) and upper (accept H1) bounds."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, diffs: np.ndarray, mu0: float, mu1: float) -> float:
        """The log-likelihood ratio of H1 to H0 after the per-deal-set differences ``diffs``, H0
        and H1 meaning mean differences ``mu0`` and ``mu1``: the generalized likelihood ratio of
        two normal models whose variance is fitted under each hypothesis,
        ``n/2 log(s0^2 / s1^2)`` with ``sk^2`` the mean of ``(diff - muk)^2``."""
        d = np.asarray(diffs, float)
        if d.size < 2:
            return 0.0
        var0 = max(float(np.mean((d - mu0) ** 2)), 1e-12)
        var1 = max(float(np.mean((d - mu1) ** 2)), 1e-12)
        return float(np.clip(d.size / 2 * math.log(var0 / var1), -1e6, 1e6))

    def mean_differences(self, base: float | None = None, seats: int | None = None) -> tuple[float, float]:
        """The mean per-deal-set win-rate differences ``A - B`` that H0 and H1 stand for. Against
        the same opponents: at B's win rate ``base`` (A wins :func:`win_rate_at_elo`). Head to head
        (``seats`` players, A in one seat, B in the others): A's win rate less B's per seat."""
        if seats is None:
            if base is None:
                raise ValueError("give B's win rate (base) or the seats of a head-to-head game")
            return win_rate_at_elo(base, self.elo0) - base, win_rate_at_elo(base, self.elo1) - base

        def diff(elo: float) -> float:
            p = head_to_head_win_rate(elo, seats)
            return p - (1 - p) / (seats - 1)

        return diff(self.elo0), diff(self.elo1)

    def verdict(self, llr: float, n: int) -> str | None:
        """``"H1"``, ``"H0"`` or ``None`` (go on) for an LLR after ``n`` deal sets."""
        lower, upper = self.bounds
        if n < self.min_deal_sets:
            return None
        return "H1" if llr >= upper else "H0" if llr <= lower else None

    def fixed_deal_sets(self, mu0: float, mu1: float, var: float) -> int:
        """Deal sets a fixed-size one-sided test with the same error rates needs when each deal
        set's statistic has variance ``var``: ``((z(1-alpha) + z(1-beta)) / (mu1 - mu0))^2 var``."""
        from statistics import NormalDist

        z = NormalDist().inv_cdf(1 - self.alpha) + NormalDist().inv_cdf(1 - self.beta)
        return max(2, math.ceil((z / (mu1 - mu0)) ** 2 * var))
