"""Evaluate agents against each other with rotated seats and duplicate deals.

A *lineup* names one agent spec per seat (``["runs/x/ckpt.pt", "greedy", "greedy", "greedy"]``).
Each *deal set* is a full game's deals (every round shuffled up front from the seed); it is
played once per seat rotation, so every agent holds every seat's cards and the luck of the deal
cancels. Win rates count a shared win as ``1/len(winners)``; the 95% interval is Wilson's score
interval over the agent's seat-games (it stays inside [0, 1] and does not collapse at a win rate of
0 or 1, unlike the normal interval). Ratings are OpenSkill (Plackett-Luce) ordinals over all games.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from agents import Agent, load
from cf_env import ConfigError, Game, RulesConfig, raw_env

__all__ = ["AgentResult", "EvalReport", "evaluate", "generate_deals", "play_game", "wilson_interval"]


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


def play_game(env: raw_env, seats: Sequence[Agent], deals: list[dict] | None, rng: np.random.Generator,
              seed: int | None = None) -> Game:
    """Play one whole game with ``seats[i]`` at seat ``i``; returns the finished engine game."""
    env.reset(seed=seed, options={"deals": deals} if deals is not None else None)
    game = env.game
    names = env.possible_agents
    while not game.is_over:
        seat = game.current_player
        obs = env.observe(names[seat])
        env.step(seats[seat].act(obs, rng))
    return game


@dataclass
class AgentResult:
    spec: str
    seat_games: int = 0
    win_rate: float = 0.0
    win_rate_ci95: tuple[float, float] = (0.0, 0.0)
    mean_points: float = 0.0
    rating: float = 0.0  # OpenSkill ordinal (mu - 3 sigma)
    rating_mu: float = 0.0
    rating_sigma: float = 0.0


@dataclass
class EvalReport:
    config: dict
    lineup: list[str]
    deal_sets: int
    games: int
    seed: int
    results: list[AgentResult] = field(default_factory=list)

    def table(self) -> str:
        head = f"{'agent':<40} {'seat-games':>10} {'win rate':>9} {'95% CI':>17} {'mean pts':>9} {'rating':>7}"
        lines = [head, "-" * len(head)]
        for r in self.results:
            lo, hi = r.win_rate_ci95
            lines.append(f"{r.spec[-40:]:<40} {r.seat_games:>10} {r.win_rate:>9.3f} "
                         f"{f'[{lo:.3f}, {hi:.3f}]':>17} {r.mean_points:>9.1f} {r.rating:>7.2f}")
        lines.append(f"{self.games} games = {self.deal_sets} deal sets x {len(self.lineup)} seat rotations; "
                     f"{self.config['num_players']} players, double-{self.config['max_pip']}, "
                     f"{self.config['rounds']} rounds; parity win rate {1 / len(self.lineup):.3f}")
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
                writer.writerow(["agent", "seat_games", "win_rate", "ci_low", "ci_high", "mean_points", "rating"])
                for r in self.results:
                    writer.writerow([r.spec, r.seat_games, r.win_rate, *r.win_rate_ci95, r.mean_points, r.rating])
        else:
            path.write_text(json.dumps(self.to_json(), indent=2))

    def plot(self, path: str | Path) -> None:
        """Bar chart of win rates with their 95% intervals and the parity line."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(self.results), 3.6))
        names = [Path(r.spec).stem if "/" in r.spec else r.spec for r in self.results]
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


def _ranks(game: Game) -> list[int]:
    """0 for the winners (R16), then by total points."""
    totals = game.totals
    winners = set(game.winners)
    order = sorted({t for p, t in enumerate(totals) if p not in winners})
    return [0 if p in winners else 1 + order.index(totals[p]) for p in range(len(totals))]


def evaluate(lineup: Sequence[str | Agent], config: RulesConfig, deal_sets: int = 100, seed: int = 0,
             progress: bool = True, agents_by_spec: dict[str, Agent] | None = None) -> EvalReport:
    """Play ``deal_sets`` duplicate deal sets, each once per seat rotation of ``lineup``."""
    from openskill.models import PlackettLuce
    from tqdm.auto import tqdm

    n = config.num_players
    if len(lineup) != n:
        raise ConfigError(f"the lineup names {len(lineup)} agents but the game has {n} seats")
    if isinstance(deal_sets, bool) or not isinstance(deal_sets, int) or deal_sets < 1:
        raise ConfigError(f"deal_sets must be a positive int, got {deal_sets!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be an int >= 0, got {seed!r}")
    specs = [x if isinstance(x, str) else x.name for x in lineup]
    built: dict[str, Agent] = dict(agents_by_spec or {})
    for item, spec in zip(lineup, specs):
        if spec not in built:
            built[spec] = item if not isinstance(item, str) else load(item, config)
    distinct = list(dict.fromkeys(specs))
    env = raw_env(**config.to_dict())
    rng = np.random.default_rng(seed)
    model = PlackettLuce()
    ratings = {s: model.rating(name=s) for s in distinct}
    wins: dict[str, list[float]] = {s: [] for s in distinct}
    points: dict[str, list[int]] = {s: [] for s in distinct}
    bar = tqdm(total=deal_sets * n, desc="eval", unit="game", disable=not progress, leave=False)
    for d in range(deal_sets):
        deals = generate_deals(config, rng)
        for rot in range(n):
            seat_specs = [specs[(s - rot) % n] for s in range(n)]
            game_rng = np.random.default_rng([seed, d, rot])
            game = play_game(env, [built[s] for s in seat_specs], deals, game_rng)
            share = 1.0 / len(game.winners)
            for seat, spec in enumerate(seat_specs):
                w = share if seat in game.winners else 0.0
                wins[spec].append(w)
                points[spec].append(game.totals[seat])
            # every seat is a one-player team holding its spec's rating; a spec's new rating is
            # the mean of its seats' updates
            teams = [[ratings[s]] for s in seat_specs]
            new = model.rate(teams, ranks=_ranks(game))
            for spec in distinct:
                mine = [new[i][0] for i, s in enumerate(seat_specs) if s == spec]
                ratings[spec] = model.rating(mu=float(np.mean([r.mu for r in mine])),
                                             sigma=float(np.mean([r.sigma for r in mine])), name=spec)
            bar.update(1)
        if progress:
            bar.set_postfix({s[-12:]: f"{np.mean(wins[s]):.3f}" for s in distinct})
    bar.close()
    report = EvalReport(config=config.to_dict(), lineup=specs, deal_sets=deal_sets, games=deal_sets * n, seed=seed)
    for spec in distinct:
        m = float(np.mean(wins[spec]))
        r = ratings[spec]
        report.results.append(AgentResult(
            spec=spec, seat_games=len(wins[spec]), win_rate=m, win_rate_ci95=wilson_interval(m, len(wins[spec])),
            mean_points=float(np.mean(points[spec])), rating=float(r.ordinal()), rating_mu=float(r.mu),
            rating_sigma=float(r.sigma)))
    return report
