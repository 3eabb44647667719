"""Luck-corrected evaluation: AIVAT control variates for Chicken Foot.

AIVAT (Burch, Schmid, Moravčík, Morrill & Bowling, *AIVAT: A New Variance Reduction Technique for
Agent Evaluation in Imperfect Information Games*, AAAI 2018) subtracts from a game's outcome, at
every event that is luck, how much that event moved a value estimate ``v`` of the outcome beyond
what was expected::

    corrected = outcome - sum over luck events of ( v(h . o_taken) - E_o[ v(h . o) ] )

Each term has expectation exactly zero whatever ``v`` is, so the corrected outcome has the raw
one's expectation (unbiased); the better ``v`` predicts the outcome, the more of the luck the
terms cancel. The evaluation runs after the game and sees everything (every hand, the boneyard).

The events corrected (:meth:`LuckCorrector.terms`; each kind can be switched on or off, ``events``):

* **each round's deal** (R4, with the R6 search for the starting double and its placement): ``v``
  at the round's first decision against its mean over :attr:`LuckCorrector.deal_samples` deals
  shuffled afresh for every game (a mean-zero estimate of the expectation keeps the term
  mean-zero; a fixed bank of deals would not);
* **each tile drawn** (R12): ``v`` after the draw against its mean over the tiles left in the
  boneyard (each equally likely: the boneyard is a shuffled pile), estimated from
  :attr:`LuckCorrector.draw_samples` of them drawn afresh (0: all of them);
* **each decision of a seat whose policy is known** (an agent with ``action_probabilities``:
  the random agent, a sampling network): ``v`` after the action taken against its mean under the
  policy. Deterministic agents (the baselines, greedy networks) have terms of exactly zero, and a
  search agent's policy is unknown: its decisions are never corrected.

A duplicate-deal evaluation (:func:`lab.luck.evaluation.luck_evaluate`, through the hook of
:func:`training.evaluate.evaluate`) corrects draws and decisions
only (:data:`DUPLICATE_EVENTS`): its rotations already deal every seat's hand to every agent.

``v`` (:class:`LuckValue`) is a small network of the full state (every hand, the layout's open
values and forced slots, the totals, the round) that predicts each seat's points this round as a
normal; the rounds still to come add a round's mean and variance, and the win shares are the
chances of ending lowest. It is fitted once per rules on games of its own (:func:`fit_luck_value`:
the heuristic, greedy and a noisy heuristic on the batched engine, from a fixed seed, never the
evaluated games); the 4-player and 2-player double-nine ones ship in ``lab/zoo`` and the others
are fitted on first use and cached (:func:`load_luck_value`). Draw terms may instead be valued by
compiled rollouts of the round with common random numbers (``rollouts``,
:mod:`lab.luck.rollouts`: the finished game played again on the batched engine; a research
setting, seconds per game; see the README for what each ``v`` measured and for how much of an
evaluation's spread the draws are: ``python -m lab.benchmarks.luck --floor``).

``python -m lab.luck fit --players 4 --games 12000`` fits and writes one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cf_env import ConfigError, Game, RulesConfig, action_table
from cf_env.engine import EventKind, unpack_event
from cf_env.engine.actions import tile_index
from cf_env.engine.scoring import tile_points, win_share

__all__ = ["DEAL_SAMPLES", "DRAW_SAMPLES", "DUPLICATE_EVENTS", "EVENTS", "LuckCorrector", "LuckFeatures",
           "LuckValue", "corrected_outcomes", "fit_luck_value", "load_luck_value", "outcome", "rules_key",
           "shipped_path", "win_shares"]

DEAL_SAMPLES = 8  #: fresh deals per round standing for every deal in a deal term
DRAW_SAMPLES = 3  #: tiles of the boneyard, drawn at random, standing for all of them in a draw term
EVENTS = ("deal", "draw", "decision")  #: the kinds of luck terms (each one is mean-zero on its own)
#: the terms a duplicate-deal evaluation corrects: every rotation of a deal set deals the same
#: hands, so an agent's mean over them already holds every seat's cards once, and deal terms only
#: add the noise of their sampled expectation (measured: README "Luck-corrected evaluation")
DUPLICATE_EVENTS = ("draw", "decision")
_SHIPPED = Path(__file__).resolve().parent.parent / "zoo"


def rules_key(config: RulesConfig) -> str:
    """A short stable name of a rules configuration (the file name of its value function)."""
    text = json.dumps(config.to_dict(), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


class LuckFeatures:
    """The value function's input: for every seat ``i`` of a state, the state seen from ``i``.

    Per seat ``j`` (listed from ``i`` on, clockwise): its hand's points (R15), size, doubles,
    tiles that match a value open now, tiles per pip value, its total and its total less ``i``'s,
    and whether it is to move; then the boneyard's size, the round's place in the game, the forced
    slots (R9/R10) and the open values; with ``tiles``, every hand's tiles (seat by seat from ``i``
    on) and the tiles that match a value open now. States are given in batches of arrays (see
    :meth:`__call__`)."""

    def __init__(self, config: RulesConfig, tiles: bool = False) -> None:
        self.config = config
        self.tiles_in_view = tiles
        t = action_table(config.max_pip)
        self.n, self.k, self.tiles = config.num_players, t.k, t.num_tiles
        lo, hi = np.array(t.tile_low), np.array(t.tile_high)
        self.points = np.array([tile_points(a, b, config.double_blank_points) for a, b in zip(lo, hi)], np.float32)
        self.double = (lo == hi).astype(np.float32)
        self.values = np.zeros((self.tiles, self.k), np.float32)  # tile -> the values it shows
        self.values[np.arange(self.tiles), lo] = 1.0
        self.values[np.arange(self.tiles), hi] = 1.0
        self.scale = float(self.points.mean() * config.hand_size)  # a dealt hand's points
        self.seat_features = 7 + self.k
        self.size = self.n * self.seat_features + 3 + self.k + (self.n + 1) * self.tiles * tiles
        self.order = (np.arange(self.n)[:, None] + np.arange(self.n)[None, :]) % self.n  # [i, j] = seat i+j

    def __call__(self, hands: np.ndarray, totals: np.ndarray, mover: np.ndarray, open_values: np.ndarray,
                 pending: np.ndarray, bone: np.ndarray, rounds: np.ndarray) -> np.ndarray:
        """``(B, n, size)`` float32 from ``hands`` ``(B, n, T)`` 0/1, ``totals`` ``(B, n)``,
        ``mover`` ``(B,)`` (the seat to move or that just drew), ``open_values`` ``(B, K)`` 0/1
        (the values a play may match), ``pending`` ``(B,)`` forced slots, ``bone`` ``(B,)``
        boneyard size and ``rounds`` ``(B,)`` the round index."""
        cfg, n = self.config, self.n
        hands = hands.astype(np.float32, copy=False)
        b = len(hands)
        playable = (open_values.astype(np.float32) @ self.values.T > 0).astype(np.float32)  # (B, T)
        tot = totals.astype(np.float32)
        seat = np.empty((b, n, self.seat_features), np.float32)
        seat[..., 0] = hands @ self.points / self.scale
        seat[..., 1] = hands.sum(axis=2) / cfg.hand_size
        seat[..., 2] = hands @ self.double / 2
        seat[..., 3] = np.einsum("bnt,bt->bn", hands, playable) / 2
        seat[..., 4] = tot / (self.scale * cfg.rounds)
        seat[..., 5] = 0.0  # the total less the viewer's, filled per viewer below
        seat[..., 6] = np.arange(n)[None, :] == mover[:, None]
        seat[..., 7:] = hands @ self.values / 2
        out = np.empty((b, n, self.size), np.float32)
        view = seat[:, self.order]  # (B, i, j, F)
        view[..., 5] = (tot[:, self.order] - tot[:, :, None]) / self.scale
        width = n * self.seat_features
        out[..., :width] = view.reshape(b, n, width)
        g = width
        out[..., g] = (bone / self.tiles)[:, None]
        out[..., g + 1] = ((cfg.rounds - 1 - rounds) / cfg.rounds)[:, None]
        out[..., g + 2] = (pending / max(cfg.center_arms, 3))[:, None]
        out[..., g + 3:g + 3 + self.k] = open_values[:, None, :]
        if self.tiles_in_view:  # every hand's tiles from the viewer on, and the tiles playable now
            g += 3 + self.k
            out[..., g:g + n * self.tiles] = hands[:, self.order].reshape(b, n, n * self.tiles)
            out[..., g + n * self.tiles:] = playable[:, None, :]
        return out


class _Rows:
    """States gathered while following games, and each one's coefficient in its game's luck:
    blocks of rows that share everything but their hands (and, where given per row, the seat to
    move, the boneyard's size and the coefficient)."""

    FIELDS = ("totals", "mover", "open_values", "pending", "bone", "rounds", "coeff", "game")

    def __init__(self) -> None:
        self.hands: list[np.ndarray] = []
        self.blocks: list[tuple] = []
        self.count = 0

    def add(self, hands: np.ndarray, totals: np.ndarray, mover: Any, open_values: np.ndarray, pending: Any,
            bone: Any, rnd: int, coeff: Any, game: int) -> None:
        """``hands`` ``(B, n, T)``; ``mover``, ``bone`` and ``coeff`` one for all ``B`` rows or one
        per row; the rest one for all."""
        self.count += len(hands)
        self.hands.append(hands)
        self.blocks.append((totals, mover, open_values, pending, bone, rnd, coeff, game))

    def arrays(self) -> dict[str, np.ndarray]:
        sizes = [len(h) for h in self.hands]
        out = {"hands": np.concatenate(self.hands)}
        first = self.blocks[0]
        for i, name in enumerate(self.FIELDS):
            shape = np.shape(first[i]) if name in ("totals", "open_values") else ()
            dtype = np.float64 if name == "coeff" else np.int64
            column = np.empty((self.count, *shape), dtype)
            pos = 0
            for block, b in zip(self.blocks, sizes):
                column[pos:pos + b] = block[i]
                pos += b
            out[name] = column
        return out

    def __len__(self) -> int:
        return self.count


def outcome(game: Game) -> np.ndarray:
    """``(n, 2)``: each seat's win share (R16) and final total of a finished game."""
    winners = game.winners
    return np.array([[win_share(p in winners, len(winners)), t] for p, t in enumerate(game.totals)], np.float64)


class LuckCorrector:
    """Follows finished games (with every hand in view) and lists their luck terms as rows of
    states with coefficients: a game's luck is ``sum(coeff * v(row))`` plus a constant
    (:meth:`terms`); :func:`corrected_outcomes` evaluates ``v`` on every row at once.

    ``deal_samples``: fresh deals per deal term (0: every shuffle, for tiny sets); ``draw_samples``:
    boneyard tiles per draw term (0: all of them); ``events``: which kinds of term
    (:data:`EVENTS`); ``rollouts``: value each draw by that many compiled rollouts of the round
    per tile instead of by ``v`` (common random numbers across the tiles; a seat whose agent is
    one of the compiled rollout policies, :data:`agents.search.spec.ROLLOUTS`, rolled out by it,
    every other seat by the heuristic; ``round_points`` = a round's points' mean and variance then
    stand for the rounds still to come, :meth:`LuckValue.points_per_round`)."""

    def __init__(self, config: RulesConfig, deal_samples: int = DEAL_SAMPLES, draw_samples: int = DRAW_SAMPLES,
                 rollouts: int = 0, round_points: tuple[float, float] = (0.0, 1.0),
                 events: Sequence[str] = EVENTS) -> None:
        if isinstance(deal_samples, bool) or not isinstance(deal_samples, int) or deal_samples < 0:
            raise ConfigError(f"deal_samples must be an int >= 0 (0: every shuffle), got {deal_samples!r}")
        if isinstance(draw_samples, bool) or not isinstance(draw_samples, int) or draw_samples < 0:
            raise ConfigError(f"draw_samples must be an int >= 0 (0: every tile in the boneyard), got {draw_samples!r}")
        if not set(events) <= set(EVENTS):
            raise ConfigError(f"events must be among {EVENTS}, got {list(events)}")
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 0:
            raise ConfigError(f"rollouts must be an int >= 0 (0: draws valued by v), got {rollouts!r}")
        self.events = frozenset(events)
        self.draw_samples = draw_samples
        self.rollouts = rollouts
        self.round_points = round_points
        self.config = config
        self.deal_samples = deal_samples
        t = self.table = action_table(config.max_pip)
        self.n, self.k, self.tiles = config.num_players, t.k, t.num_tiles
        self.action_tile = np.array(t.action_tile)
        self.value_bits = np.array([1 << v for v in range(self.k)])
        if not deal_samples:
            if self.tiles > 8:
                raise ConfigError(f"deal_samples 0 lists every shuffle: {math.factorial(self.tiles)} for "
                                  f"{self.tiles} tiles is too many (at most 8 tiles); sample deals instead")
            self._every_shuffle = np.array(list(itertools.permutations(range(self.tiles))))
        self._exact: dict[int, tuple] = {}
        self._open_cache: dict[int, np.ndarray] = {}
        self._replay: Any = None  # the compiled rollouts' engine and policies, made on first use

    # ------------------------------------------------------------------ states

    def _open(self, game: Game) -> tuple[np.ndarray, int]:
        """The values a play may match now (0/1 per value) and the forced slots left."""
        pending = game.pending
        return self._values_of(game.open_values), (pending.count if pending is not None else 0)

    def _values_of(self, bits: int) -> np.ndarray:
        """A bitmask of pip values as 0/1 per value (cached)."""
        values = self._open_cache.get(bits)
        if values is None:
            values = self._open_cache[bits] = ((bits & self.value_bits) > 0).astype(np.uint8)
        return values

    def sample_starts(self, rnd: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``count`` fresh deals of round ``rnd`` at its first decision (:meth:`starts`)."""
        return self.starts(rng.permuted(np.tile(np.arange(self.tiles), (count, 1)), axis=1), rnd)

    def starts(self, perm: np.ndarray, rnd: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The shuffles ``perm`` ``(S, T)`` (hands in seat order, then the boneyard top first) of
        round ``rnd`` taken through R6, the search for the starting double and its placement:
        ``(hands (S, n, T), first to move (S,), boneyard size (S,))``, the state at the round's
        first decision as the engine reaches it."""
        cfg, n, t, h = self.config, self.n, self.tiles, self.config.hand_size
        count = len(perm)
        start = tile_index(cfg.max_pip - rnd, cfg.max_pip - rnd)
        pos = np.argmax(perm == start, axis=1)  # where the starting double lies
        dealt = n * h
        first = (rnd % n + 1) % n  # R6: the search starts left of the dealer
        owner = np.full((count, t), -1)
        owner[:, :dealt] = np.arange(dealt) // h
        m = np.arange(t - dealt)
        searched = m[None, :] <= (pos - dealt)[:, None]  # drawn in the search (none if dealt)
        owner[:, dealt:] = np.where(searched, (first + m[None, :]) % n, -1)
        holder = owner[np.arange(count), pos]
        hands = np.zeros((count, n, t), np.uint8)
        rows, cols = np.nonzero(owner >= 0)
        hands[rows, owner[rows, cols], perm[rows, cols]] = 1
        hands[np.arange(count), holder, start] = 0
        drawn = np.maximum(pos - dealt + 1, 0)
        return hands, (holder + 1) % n, t - dealt - drawn

    def _deal_rows(self, rows: _Rows, rnd: int, totals: np.ndarray, coeff: float, rng: np.random.Generator,
                   g: int) -> None:
        """``coeff`` times the mean of ``v`` over fresh deals of round ``rnd`` (over every
        shuffle when :attr:`deal_samples` is 0)."""
        if self.deal_samples:
            hands, mover, bone = self.sample_starts(rnd, self.deal_samples, rng)
            weight: Any = 1.0 / len(hands)
        else:
            hands, mover, bone, weight = self._every_start(rnd)
        open_values = np.zeros(self.k, np.uint8)
        open_values[self.config.max_pip - rnd] = 1
        rows.add(hands, totals, mover, open_values, self.config.center_arms, bone, rnd, coeff * weight, g)

    def _every_start(self, rnd: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every distinct first-decision state of round ``rnd`` over every shuffle, and each one's
        probability (cached)."""
        if rnd not in self._exact:
            hands, mover, bone = self.starts(self._every_shuffle, rnd)
            flat = np.concatenate([hands.reshape(len(hands), -1), mover[:, None], bone[:, None]], axis=1)
            _, index, counts = np.unique(flat, axis=0, return_index=True, return_counts=True)
            self._exact[rnd] = (hands[index], mover[index], bone[index], counts / counts.sum())
        return self._exact[rnd]

    def _draw_options(self, bone: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The tiles a draw's expectation averages over: every tile in the boneyard, or
        :attr:`draw_samples` of them drawn uniformly at random (with replacement: their mean is an
        unbiased estimate of the mean over all, so the term stays mean-zero)."""
        options = np.flatnonzero(bone)
        if self.draw_samples and len(options) > self.draw_samples:
            options = options[rng.integers(len(options), size=self.draw_samples)]
        return options

    def _draw_rows(self, rows: _Rows, g: int, hands: np.ndarray, bone: np.ndarray, p: int, open_values: np.ndarray,
                   pending: int, totals: np.ndarray, rnd: int, weight: float, rng: np.random.Generator,
                   taken: int | None = None) -> None:
        """``weight`` times the mean of ``v`` after seat ``p`` draws a tile from ``bone``
        (:meth:`_draw_options`); with ``taken``, plus ``v`` after it draws that tile (a draw term)."""
        options = self._draw_options(bone, rng)
        extra = int(taken is not None)
        alt = np.repeat(hands[None], len(options) + extra, axis=0)
        alt[np.arange(len(options)), p, options] = 1
        coeff = np.full(len(options) + extra, weight / len(options))
        if taken is not None:
            alt[-1, p, taken] = 1
            coeff[-1] = 1.0
        rows.add(alt, totals.copy(), p, open_values, pending, int(bone.sum()) - 1, rnd, coeff, g)

    # ------------------------------------------------------------------ following a game

    def terms(self, played: Game, rng: np.random.Generator, rows: _Rows, g: int = 0,
              policies: Sequence[np.ndarray | None] | None = None,
              boards: Sequence[tuple[int, int]] | None = None, seats: Sequence[str] | None = None) -> np.ndarray:
        """Follow the finished game ``played`` from its start and add its luck terms to ``rows``
        (tagged ``g``); return the ``(n, 2)`` constant part of its luck (terms valued outside
        ``v``: decisions that end the game, rollouts). ``policies[i]``: the action probabilities of
        the player deciding at the game's decision ``i`` when its policy is known (else ``None``).

        ``boards``: the board at each of the game's draws, ``(open values as a bitmask, forced
        slots left)``, as :func:`lab.luck.evaluation.replay_decisions` records them. With them, one draw per
        draw (``draw_rule`` "one") and no decision to correct, the game is followed from its event
        log alone; otherwise it is played again from its deals. ``seats``: the agent spec at each
        seat, for rollouts (:attr:`rollouts`): ``greedy`` and ``random`` seats are rolled out by
        their own policy, every other seat by the heuristic's."""
        cfg = self.config
        known = policies is not None and "decision" in self.events and any(p is not None for p in policies)
        rolling = self.rollouts > 0 and cfg.draw_rule == "one" and "draw" in self.events
        walk = _Walk(self, played, rng, rows, g)
        if rolling:  # every draw's term from compiled rollouts; the walk adds no draw rows then
            walk.const += self._rolled_draws(played, rng, seats)
            walk.rolled = True
        if boards is not None and cfg.draw_rule == "one" and not known:
            codes = played.event_codes()
            draws = int(np.count_nonzero((codes & 7) == EventKind.DRAW))
            if draws != len(boards):
                raise ConfigError(f"the game drew {draws} times but {len(boards)} boards were recorded for it")
            queue = iter(boards)

            def board() -> tuple[np.ndarray, int]:
                bits, pending = next(queue)
                return self._values_of(bits), pending

            walk.follow(codes, board)
            return walk.const
        if rolling and not known:  # no rows left to add
            return walk.const
        game = played.rewound()
        walk.follow(game.event_codes(), lambda: self._open(game))
        seen = game.event_count
        for i, action in enumerate(played.actions()):
            before = self._open(game)
            probs = policies[i] if known and policies is not None else None
            if probs is not None:
                walk.const += self._decision(game, rows, g, probs, int(action), walk.hands, walk.bone, walk.totals,
                                             before[0], before[1], walk.round, rng)
            game.apply(int(action))
            walk.follow(game.event_codes(seen), lambda b=before: b)
            seen = game.event_count
        return walk.const

    def _rolled_draws(self, played: Game, rng: np.random.Generator, seats: Sequence[str] | None) -> np.ndarray:
        """The ``(n, 2)`` sum of the draw terms of ``played`` valued by rollouts: before each
        draw, every tile of the boneyard (or :attr:`draw_samples` of them and the one it drew),
        each followed by :attr:`rollouts` rollouts of the round by the seats' rollout policies
        (``seats``, see :meth:`terms`), the same boneyard orders for every tile (common random
        numbers: the difference between tiles is what counts); the game is played again from its
        deals on the batched engine's compiled kernels
        (:func:`lab.luck.rollouts.replay_draw_rollouts`)."""
        from agents.search.rollout import HEURISTIC
        from agents.search.spec import ROLLOUTS
        from lab.luck.rollouts import replay_draw_rollouts

        if played.config != self.config:
            raise ConfigError(f"the game was played under {played.config.to_dict()}, the corrector's rules are "
                              f"{self.config.to_dict()}")
        if self._replay is None:
            from agents import HeuristicAgent
            from agents.search.rollout import new_policy
            from agents.search.worlds import new_scratch
            from cf_env.vector import VectorGame

            tables = HeuristicAgent(self.config).kernel_tables
            policies = tuple(new_policy(code, self.k, tables) for code in range(len(ROLLOUTS)))  # by policy code
            self._replay = (VectorGame(self.config, num_games=2, reward="points", seed=0), policies,
                            new_scratch(self.n, self.tiles).rs)
        engine, policies, rs = self._replay
        actions = np.array(played.actions(), np.int64)
        draws = max(1, int(np.count_nonzero(actions == self.table.draw)))
        n, t, k = self.n, self.tiles, self.rollouts
        out = (np.zeros(draws, np.int64), np.zeros((draws, n), np.int64), np.zeros(draws, np.int64),
               np.zeros(draws, np.int64), np.zeros((draws, t + 1, k, n), np.int64), np.zeros((draws, t + 1, k, n)))
        deals = played.to_record()["deals"]
        engine.reset(deals=[deals, deals])
        rs[0] = np.uint64(rng.integers(1, 2**63))
        kinds = np.array([ROLLOUTS.index(spec) if spec in ROLLOUTS else HEURISTIC for spec in seats]
                         if seats is not None else [HEURISTIC] * n, np.int64)
        if len(kinds) != n:
            raise ConfigError(f"seats must name the agent at each of the {n} seats, got {list(seats or [])}")
        made = replay_draw_rollouts(engine.state, engine.consts, actions, k, self.draw_samples, kinds, policies, rs,
                                    out)
        if not (engine.done[0] and np.array_equal(engine.final_totals[0], played.totals)):
            raise RuntimeError("the batched engine did not replay the game as the engine played it")
        if not made:
            return np.zeros((n, 2))
        rnd, before, averaged, taken_at, points, wins = (x[:made] for x in out)
        totals = before[:, None, None, :] + points.astype(np.float64)  # (draws, tiles, rollouts, n)
        left = (self.config.rounds - 1 - rnd)[:, None, None, None]
        mean = totals + left * self.round_points[0]
        var = np.broadcast_to(left * self.round_points[1] + 1e-4, mean.shape)
        share = win_shares(mean.reshape(-1, n), var.reshape(-1, n)).reshape(mean.shape)
        last = (left == 0)[:, 0, 0, 0]
        share[last] = wins[last]  # the game's last round: its own win shares (R16)
        value = np.stack([share, mean], axis=-1).mean(axis=2)  # (draws, tiles, n, 2)
        tried = np.arange(t + 1)[None, :] < averaged[:, None]  # the tiles the expectation averages over
        taken = value[np.arange(made), taken_at]
        expected = (value * tried[..., None, None]).sum(axis=1) / averaged[:, None, None]
        return (taken - expected).sum(axis=0)

    def _decision(self, game: Game, rows: _Rows, g: int, probs: np.ndarray, taken: int, hands: np.ndarray,
                  bone: np.ndarray, totals: np.ndarray, open_values: np.ndarray, pending: int, rnd: int,
                  rng: np.random.Generator) -> np.ndarray:
        """The decision term ``v(h . taken) - sum_a pi(a) v(h . a)`` of a seat whose policy is
        known: rows for every action's successor, the constant part when one ends the game."""
        const = np.zeros((self.n, 2))
        p = game.current_player
        probs = np.asarray(probs, np.float64)
        for a in np.flatnonzero(probs > 0).tolist():
            c = float(a == taken) - probs[a] / probs.sum()
            if c == 0.0:
                continue
            if a == self.table.draw:  # a chance node: its value is the mean over the tiles left
                self._draw_rows(rows, g, hands, bone, p, open_values, pending, totals, rnd, c, rng)
                continue
            after = game.clone()
            after.apply(a)
            if after.is_over:
                const += c * outcome(after)
            elif after.rounds_finished > game.rounds_finished:  # the next round's deal is chance
                self._deal_rows(rows, after.round_index, np.sum(after.round_scores, axis=0), c, rng, g)
            else:
                mine = hands.copy()
                if a < self.table.draw:
                    mine[p, self.action_tile[a]] = 0
                values, slots = self._open(after)
                rows.add(mine[None], totals.copy(), after.current_player, values, slots, int(bone.sum()), rnd, c, g)
        return const


class _Walk:
    """One finished game followed event by event with every hand in view (for
    :meth:`LuckCorrector.terms`): the hands, the boneyard and the totals as the game had them,
    the rows of its deal and draw terms added as their events pass."""

    def __init__(self, corrector: LuckCorrector, played: Game, rng: np.random.Generator, rows: _Rows, g: int) -> None:
        self.c, self.rng, self.rows, self.g = corrector, rng, rows, g
        n, t = corrector.n, corrector.tiles
        self.deals = [[list(hand) for hand in played.deal_tiles(r)[0]] for r in range(played.rounds_finished)]
        self.scores = np.cumsum(np.array(played.round_scores, np.int64).reshape(-1, n), axis=0)
        self.hands = np.zeros((n, t), np.uint8)
        self.bone = np.ones(t, bool)
        self.totals = np.zeros(n, np.int64)
        self.const = np.zeros((n, 2))
        self.round = -1
        self.rolled = False  # the draws were valued by rollouts: no draw rows

    def follow(self, codes: np.ndarray, board: Any) -> None:
        """Apply the events ``codes``; ``board()`` gives the board a draw among them was made on."""
        c, hands, bone, rows, g = self.c, self.hands, self.bone, self.rows, self.g
        cfg, n = c.config, c.n
        for code in codes.tolist():
            kind, p, payload, rnd = unpack_event(code)
            if rnd != self.round:  # a new deal
                self.round = rnd
                hands[:] = 0
                for q, hand in enumerate(self.deals[rnd]):
                    hands[q, hand] = 1
                bone[:] = ~hands.any(axis=0)
            if kind == EventKind.SEARCH_DRAW:
                hands[p, payload] = 1
                bone[payload] = False
            elif kind == EventKind.START:
                hands[p, payload] = 0
                if "deal" in c.events:
                    first = np.zeros(c.k, np.uint8)
                    first[cfg.max_pip - rnd] = 1
                    rows.add(hands[None].copy(), self.totals.copy(), (p + 1) % n, first, cfg.center_arms,
                             int(bone.sum()), rnd, 1.0, g)
                    c._deal_rows(rows, rnd, self.totals.copy(), -1.0, self.rng, g)
            elif kind == EventKind.DRAW:
                open_values, pending = board()
                if "draw" in c.events and not self.rolled:
                    c._draw_rows(rows, g, hands, bone, p, open_values, pending, self.totals, rnd, -1.0, self.rng,
                                 taken=payload)
                hands[p, payload] = 1
                bone[payload] = False
            elif kind == EventKind.PLAY:
                hands[p, c.action_tile[payload]] = 0
            elif kind == EventKind.ROUND_END:
                self.totals[:] = self.scores[rnd]


# ---------------------------------------------------------------------- the value function


def _torch() -> Any:
    import torch

    return torch


def win_shares(mean: np.ndarray, var: np.ndarray, grid: int = 32) -> np.ndarray:
    """``(B, n)``: the chance that each seat's total is the lowest, the totals independent
    normals with ``mean`` and ``var`` ``(B, n)`` (midpoint rule over ``grid`` points spanning them)."""
    torch = _torch()
    m, sd = torch.from_numpy(np.asarray(mean, np.float64)), torch.from_numpy(np.sqrt(np.asarray(var, np.float64)))
    lo = (m - 5 * sd).amin(dim=1, keepdim=True)
    hi = (m + 5 * sd).amax(dim=1, keepdim=True)
    step = (hi - lo) / grid
    x = lo + step * (torch.arange(grid, dtype=m.dtype) + 0.5)  # (B, G)
    z = (x[:, None, :] - m[..., None]) / sd[..., None]  # (B, n, G)
    density = torch.exp(-0.5 * z * z) / (sd[..., None] * math.sqrt(2 * math.pi))
    log_above = torch.log(torch.special.ndtr(-z).clamp_min(1e-300))  # P(total > x)
    others = torch.exp(log_above.sum(dim=1, keepdim=True) - log_above)  # every other seat above x
    win = (density * others).sum(dim=2) * step
    return (win / win.sum(dim=1, keepdim=True).clamp_min(1e-12)).numpy()


class LuckValue:
    """``v``: every seat's expected win share and final total from the full state (see the
    module docstring).

    A small network over :class:`LuckFeatures` of each seat's view predicts the points it will
    score this round (R15) as a normal distribution (mean and variance, in units of a dealt
    hand's points); each round still to be dealt adds the mean and variance of a round's points
    measured on the fitting games. Its final total is then its total plus those; its win share is
    the chance that it ends lowest, by numerical integration over the seats' independent normals.
    Fitting round points rather than the game's winner keeps ``v`` from memorising a few thousand
    games' results: a round's points carry far more information per game than who won."""

    GRID = 32  #: points of the integration grid of the win shares

    def __init__(self, config: RulesConfig, hidden: int = 64, state: dict | None = None,
                 meta: dict | None = None, tiles: bool = False) -> None:
        torch = _torch()
        self.config = config
        self.features = LuckFeatures(config, tiles)
        self.hidden = hidden
        self.tiles = tiles
        self.meta = dict(meta or {})
        size = self.features.size
        self.net = torch.nn.Sequential(torch.nn.Linear(size, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 2))
        self.mean = torch.zeros(size)
        self.std = torch.ones(size)
        self.round_mean, self.round_var = 1.0, 1.0  # a round's points, dealt-hand units
        if state is not None:
            self.net.load_state_dict(state["net"])
            self.mean, self.std = state["mean"], state["std"]
            self.round_mean, self.round_var = state["round_mean"], state["round_var"]
        self.net.eval()

    def round_points(self, x: Any) -> tuple[Any, Any]:
        """Mean and variance of each seat's points this round, dealt-hand units, for features
        ``(B, n, F)`` (a tensor; gradients kept)."""
        torch = _torch()
        out = self.net((x - self.mean) / self.std)
        return torch.nn.functional.softplus(out[..., 0]), torch.exp(out[..., 1].clamp(-8.0, 6.0))

    def values(self, rows: dict[str, np.ndarray]) -> np.ndarray:
        """``(B, n, 2)``: win share and expected final total of every seat for a batch of states
        (the arrays of :meth:`_Rows.arrays`)."""
        torch = _torch()
        x = self.features(rows["hands"], rows["totals"], rows["mover"], rows["open_values"], rows["pending"],
                          rows["bone"], rows["rounds"])
        with torch.no_grad():
            mu, var = (t.numpy().astype(np.float64) for t in self.round_points(torch.from_numpy(x)))
        left = (self.config.rounds - 1 - rows["rounds"])[:, None]
        scale = self.features.scale
        mean = rows["totals"] / scale + mu + left * self.round_mean
        var = var + left * self.round_var + 1e-4
        return np.stack([win_shares(mean, var, self.GRID), mean * scale], axis=-1)

    def points_per_round(self) -> tuple[float, float]:
        """The mean and variance of a seat's points in a round of the fitting games, in points
        (what a rollout-valued correction adds for each round still to come)."""
        scale = self.features.scale
        return self.round_mean * scale, self.round_var * scale**2

    def save(self, path: str | Path) -> None:
        torch = _torch()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        torch.save({"format": "chickenfoot-luck-value", "rules": self.config.to_dict(), "hidden": self.hidden,
                    "tiles": self.tiles, "meta": self.meta, "state": {"net": self.net.state_dict(), "mean": self.mean, "std": self.std,
                                                 "round_mean": self.round_mean, "round_var": self.round_var}},
                   path)

    @classmethod
    def load(cls, path: str | Path, config: RulesConfig | None = None) -> LuckValue:
        torch = _torch()
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)  # never runs code from the file
        except Exception as exc:  # torch raises pickle's, zipfile's or its own errors for a file not its own
            raise ConfigError(f"{path} is not a luck value function (made by lab.luck.fit_luck_value): "
                              f"{type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != "chickenfoot-luck-value":
            raise ConfigError(f"{path} is not a luck value function (made by lab.luck.fit_luck_value)")
        rules = RulesConfig.from_dict(data["rules"])
        if config is not None and rules != config:
            raise ConfigError(f"the value function in {path} was fitted for {rules.to_dict()}, not {config.to_dict()}")
        return cls(rules, data["hidden"], data["state"], data["meta"], data.get("tiles", True))


def _training_states(config: RulesConfig, games: int, seed: int, every: int, progress: bool) -> tuple[dict, np.ndarray, np.ndarray]:
    """States of about ``games`` games played in lockstep by the batched engine between the
    heuristic (60% of seats), greedy (20%) and a heuristic that plays a random legal action 15% of
    the time (20%), a seat's player drawn per game; one state in ``every`` decisions is kept.
    Returns the states (hands packed in bits), each state's ``(n,)`` target (the seats' points in
    its round) and every finished round's ``(n,)`` points."""
    from tqdm.auto import tqdm

    from agents import GreedyAgent, HeuristicAgent
    from cf_env.vector import VectorGame

    n, t = config.num_players, config.num_tiles
    batch = int(min(1024, max(64, games // 8)))
    vg = VectorGame(config, num_games=batch, reward="points", seed=seed)
    rng = np.random.default_rng(seed)
    obs, mask, seat = vg.reset()
    heuristic, greedy = HeuristicAgent(config), GreedyAgent(config)
    kind = rng.choice(3, size=(batch, n), p=[0.6, 0.2, 0.2])
    kept: dict[str, list] = {k: [] for k in ("hands", "totals", "mover", "open_values", "pending", "bone", "rounds")}
    owner: list[np.ndarray] = []  # per kept chunk: the (game serial, round) of each row
    serial = np.arange(batch)
    next_serial = batch
    scores: dict[tuple[int, int], np.ndarray] = {}
    finished = 0
    bar = tqdm(total=games, desc="luck value: games", unit="game", disable=not progress, leave=False)
    step = 0
    while finished < games:
        if step % every == 0:
            pend = vg.pending > 0
            open_values = np.where(pend[:, None], (np.arange(config.max_pip + 1)[None, :] == vg.pending_value[:, None]),
                                   vg.open_ends > 0).astype(np.uint8)
            kept["hands"].append(np.packbits(vg.hand, axis=2))
            kept["totals"].append(vg.totals.copy())
            kept["mover"].append(vg.current_player.copy())
            kept["open_values"].append(open_values)
            kept["pending"].append(vg.pending.copy())
            kept["bone"].append(t - vg.bone_pos)
            kept["rounds"].append(vg.round_index.copy())
            owner.append(np.stack([serial, vg.round_index.astype(np.int64)], axis=1))
        before_round, before_totals = vg.round_index.copy(), vg.totals.copy()
        k = kind[np.arange(batch), seat]
        action = heuristic.act_batch(obs, mask, rng)
        action = np.where(k == 1, greedy.act_batch(obs, mask, rng), action)
        noisy = (k == 2) & (rng.random(batch) < 0.15)
        if noisy.any():
            action = np.where(noisy, np.argmax((rng.random(mask.shape) + 1e-3) * mask, axis=1), action)
        obs, mask, seat, _, done = vg.step(action)
        step += 1
        ended = np.flatnonzero(done | (vg.round_index != before_round))
        for b in ended.tolist():
            after = vg.final_totals[b] if done[b] else vg.totals[b]
            scores[(int(serial[b]), int(before_round[b]))] = (after - before_totals[b]).astype(np.float64)
            if done[b]:
                serial[b] = next_serial
                next_serial += 1
                kind[b] = rng.choice(3, size=n, p=[0.6, 0.2, 0.2])
                finished += 1
                bar.update(1)
    bar.close()
    rows = {name: np.concatenate(chunks) for name, chunks in kept.items()}
    who = np.concatenate(owner)
    known = np.array([(int(g), int(r)) in scores for g, r in who])  # drop rounds still in play
    target = np.array([scores[(int(g), int(r))] for g, r in who[known]])
    rows = {name: x[known] for name, x in rows.items()}
    rows["game"] = who[known, 0]
    return rows, target, np.array(list(scores.values()))


def fit_luck_value(config: RulesConfig, games: int = 4000, seed: int = 20_180_202, epochs: int = 3,
                   hidden: int = 64, every: int = 3, tiles: bool = False, progress: bool = True) -> LuckValue:
    """Fit :class:`LuckValue` for ``config`` on ``games`` games of its own (seeded by ``seed``,
    never an evaluation's): the normal log-likelihood of each seat's points in the round of each
    decision state, and a round's mean and variance of points over every round played."""
    torch = _torch()
    rows, target, rounds = _training_states(config, games, seed, every, progress)
    torch.manual_seed(seed)  # the network's initial weights
    model = LuckValue(config, hidden, meta={"games": games, "seed": seed, "epochs": epochs, "every": every},
                      tiles=tiles)
    scale = model.features.scale
    model.round_mean, model.round_var = float(rounds.mean() / scale), float(rounds.var() / scale**2)
    count = config.num_tiles

    def x(idx: Any) -> Any:
        i = idx.numpy()
        hands = np.unpackbits(rows["hands"][i], axis=2, count=count)
        return torch.from_numpy(model.features(hands, rows["totals"][i], rows["mover"][i], rows["open_values"][i],
                                               rows["pending"][i], rows["bone"][i], rows["rounds"][i]))

    y = torch.from_numpy(target / scale).float()
    gen = torch.Generator().manual_seed(seed)
    sample = x(torch.randperm(len(y), generator=gen)[:20_000]).reshape(-1, model.features.size)
    model.mean, model.std = sample.mean(0), sample.std(0).clamp_min(1e-3)
    held = torch.from_numpy(rows["game"] % 10 == 0)  # a tenth of the games held out
    test, train = torch.nonzero(held)[:, 0], torch.nonzero(~held)[:, 0]
    opt = torch.optim.Adam(model.net.parameters(), lr=2e-3, weight_decay=1e-5)
    batch = 512

    def nll(idx: Any) -> Any:
        mu, var = model.round_points(x(idx))
        return (0.5 * torch.log(var) + 0.5 * (y[idx] - mu) ** 2 / var).mean(), ((y[idx] - mu) ** 2).mean()

    model.net.train()
    for epoch in range(epochs):
        for g in opt.param_groups:
            g["lr"] = 2e-3 * 0.5 * (1 + math.cos(math.pi * epoch / epochs))
        order = train[torch.randperm(len(train), generator=gen)]
        for start in range(0, len(order), batch):
            loss, _ = nll(order[start:start + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
        loss = mse = 0.0
        with torch.no_grad():
            for start in range(0, len(test), 8192):  # in chunks: the held-out states' features at once are large
                chunk = test[start:start + 8192]
                part_loss, part_mse = nll(chunk)
                loss += float(part_loss) * len(chunk) / len(test)
                mse += float(part_mse) * len(chunk) / len(test)
        model.meta.update(held_out_nll=float(loss), held_out_mse=float(mse), round_points_variance=float(y[test].var()),
                          states=len(y))
        if progress:
            print(f"luck value epoch {epoch + 1}/{epochs}: held-out games' NLL {float(loss):.4f}, squared error "
                  f"{float(mse):.4f} (variance of round points {float(y[test].var()):.4f})")
    model.net.eval()
    return model


def corrected_outcomes(value: Any, games: Sequence[Game | dict], rng: np.random.Generator,
                       policies: Sequence[Sequence[np.ndarray | None] | None] | None = None,
                       corrector: LuckCorrector | None = None,
                       boards: Sequence[Sequence[tuple[int, int]] | None] | None = None,
                       seats: Sequence[Sequence[str] | None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(raw, corrected)``, each ``(G, n, 2)``: every seat's win share and final total in each
    finished game of ``games`` (engine games or their records), as played and with its luck taken
    out (one batch through ``value``, a :class:`LuckValue` or anything with its ``config`` and
    ``values``). ``policies[g]``: game ``g``'s per-decision action probabilities where known (see
    :meth:`LuckCorrector.terms`); ``boards[g]``: the boards of its draws, when recorded (the same);
    ``seats[g]``: the agent spec at each of its seats (the same: rollouts' policies);
    ``rng`` shuffles the deal terms' fresh deals and picks the draw terms' tiles."""
    corrector = corrector or LuckCorrector(value.config)
    rows = _Rows()
    n = value.config.num_players
    raw = np.zeros((len(games), n, 2))
    luck = np.zeros((len(games), n, 2))
    for g, game in enumerate(games):
        if isinstance(game, dict):
            game = Game.from_record(game)
        if not game.is_over:
            raise ConfigError(f"game {g} is not finished: only finished games can be corrected")
        luck[g] = corrector.terms(game, rng, rows, g, None if policies is None else policies[g],
                                  None if boards is None else boards[g], None if seats is None else seats[g])
        raw[g] = outcome(game)
    if len(rows):
        arrays = rows.arrays()
        v = value.values(arrays) * arrays["coeff"][:, None, None]
        np.add.at(luck, arrays["game"], v)
    return raw, raw - luck


def _cache_dir() -> Path:
    """Where value functions fitted on first use are kept: ``$CHICKENFOOT_CACHE/luck`` or
    ``~/.cache/chickenfoot/luck``."""
    root = os.environ.get("CHICKENFOOT_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "chickenfoot")
    return Path(root) / "luck"


def shipped_path(config: RulesConfig) -> Path:
    """Where the value function shipped for ``config`` would lie (``lab/zoo/luck-KEY.pt``)."""
    return _SHIPPED / f"luck-{rules_key(config)}.pt"


def load_luck_value(config: RulesConfig, path: str | Path | None = None, progress: bool = True) -> LuckValue:
    """The value function of a luck-corrected evaluation of ``config``: the one at ``path``; else
    the one shipped in ``lab/zoo`` for these rules (4-player and 2-player double-nine); else one
    fitted before for them (the cache, see :func:`_cache_dir`); else one fitted now
    (:func:`fit_luck_value`, about a minute for double-nine on one core) and cached."""
    if path is not None:
        if not Path(path).is_file():
            raise ConfigError(f"no luck value function at {path}")
        return LuckValue.load(path, config)
    for candidate in (shipped_path(config), _cache_dir() / f"{rules_key(config)}.pt"):
        if candidate.is_file():
            return LuckValue.load(candidate, config)
    if progress:
        print(f"fitting the luck-correction value function for {config.to_dict()} (once; cached in {_cache_dir()})")
    value = fit_luck_value(config, progress=progress)
    target = _cache_dir() / f"{rules_key(config)}.pt"
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    value.save(tmp)
    os.replace(tmp, target)  # atomic: workers that fit at once do not read half a file
    return value
