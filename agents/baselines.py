"""Hand-written baselines: random legal, greedy (heaviest tile first), and a heuristic player."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from agents.base import NotToMoveError, legal_actions
from cf_env import ConfigError, ObservationEncoder, RulesConfig, action_table
from cf_env.engine.scoring import tile_points
from cf_env.vector import COUNTED_OPTIONS, VectorGame, apply_action, write_observation

__all__ = ["COMPILED_POLICIES", "GREEDY", "HEURISTIC", "RANDOM", "GreedyAgent", "HeuristicAgent", "HeuristicTables",
           "RandomAgent", "RolloutPolicy", "choose", "new_policy", "play_to_seats", "randint", "score_plays",
           "score_plays_state", "uniform"]


#: the baselines' compiled choices (:func:`choose`), a policy's code its index here (and in the
#: search's ``rollout=`` values, ``agents.search.spec.ROLLOUTS``)
COMPILED_POLICIES = ("random", "greedy", "heuristic")
RANDOM, GREEDY, HEURISTIC = range(len(COMPILED_POLICIES))


class _CompiledChoice:
    """A baseline whose choice is also compiled (:func:`choose`, its code ``kind``): it can play a
    stretch of many batched games without an observation a decision."""

    kind: int
    config: RulesConfig

    @property
    def kernel_tables(self) -> HeuristicTables:
        """The tables :func:`choose` reads (greedy reads their cost column; random none)."""
        if getattr(self, "_default_tables", None) is None:
            self._default_tables = HeuristicAgent(self.config).kernel_tables
        return self._default_tables

    def play_to_seats(self, vg: VectorGame, games: np.ndarray, stop: np.ndarray, rewards: np.ndarray,
                      rng: np.random.Generator) -> None:
        """Play every seat of ``games`` until seat ``stop[b]`` is to move (:func:`play_to_seats`)."""
        play_to_seats(self, vg, games, stop, rewards, rng)


class RandomAgent(_CompiledChoice):
    """Uniformly random legal action."""

    name = "random"
    kind = RANDOM

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        return int(legal[rng.integers(len(legal))])

    def action_probabilities(self, observation: dict) -> np.ndarray:
        """The policy: uniform over the legal actions (a luck-corrected evaluation corrects this
        agent's decisions with it, such as the lab's ``lab.luck``)."""
        mask = np.asarray(observation["action_mask"], np.float64)
        return mask / mask.sum()

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        noise = rng.random(masks.shape, dtype=np.float32) + 1e-3  # > 0 so a legal action always wins
        return np.argmax(noise * masks, axis=1)


class _TileAgent:
    """Shared tables for agents that reason about tiles."""

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.encoder = ObservationEncoder(config)
        table = action_table(config.max_pip)
        self.table = table
        self.k = table.k
        self.draw, self.pass_ = table.draw, table.pass_
        # points a tile costs in hand (R15), per action id
        low, high = table.tile_low, table.tile_high
        self.cost = np.array([tile_points(low[t], high[t], config.double_blank_points) for t in table.action_tile],
                             dtype=np.float64)
        # (T, K) incidence: which pip values each tile carries
        self.tile_values = np.zeros((config.num_tiles, self.k), dtype=np.float64)
        for i, (lo, hi) in enumerate(zip(low, high)):
            self.tile_values[i, lo] = 1.0
            self.tile_values[i, hi] = 1.0
        self.action_tile = np.array(table.action_tile, dtype=np.intp)
        self.match = np.array(table.match, dtype=np.intp)
        self.expose = np.array(table.expose, dtype=np.intp)


class HeuristicTables(NamedTuple):
    """What :func:`score_plays` reads besides the observation, built once per rules and weights."""

    offsets: np.ndarray  #: observation starts of hand, unmatched, open_ends, pending_count, pending_value; opponents
    tile_values: np.ndarray  #: (T, K) 1 where a tile carries a value
    cost: np.ndarray  #: (A,) points the tile of each play costs in hand (R15)
    action_tile: np.ndarray  #: (K*K,) tile of each play
    match: np.ndarray  #: (K*K,) value each play covers
    expose: np.ndarray  #: (K*K,) value each play exposes
    weights: np.ndarray  #: HeuristicAgent.DEFAULT_WEIGHTS' order
    tile_lo: np.ndarray  #: (T,) int64 each tile's low pip (its row of ``tile_values`` in two numbers)
    tile_hi: np.ndarray  #: (T,) int64 its high pip


class GreedyAgent(_TileAgent, _CompiledChoice):
    """Plays the heaviest legal tile (the 0-0 counts as ``double_blank_points``); never keeps a
    playable drawn tile. Ties go to the lowest action id."""

    name = "greedy"
    kind = GREEDY

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        plays = legal[legal < self.draw]
        if plays.size == 0:
            return int(legal[0])
        return int(plays[np.argmax(self.cost[plays])])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal_plays = masks[:, : self.draw] > 0
        score = np.where(legal_plays, self.cost[None, :], -np.inf)
        best = np.argmax(score, axis=1)
        none = ~legal_plays.any(axis=1)
        best[none] = np.argmax(masks[none], axis=1)  # the only legal DRAW or PASS
        return best


class HeuristicAgent(_TileAgent, _CompiledChoice):
    """A hand-written player that reads the whole observation.

    Each legal play is scored and the best one is played (a playable drawn tile is always
    played rather than kept):

    * ``pips``: the points it takes out of the hand (the 0-0 at ``double_blank_points``, so it
      is shed first);
    * ``double`` / ``toe_follow`` / ``opp_blocked``: a double opens three toes of its value; it
      is worth more when we hold other tiles of that value (the toes are ours to fill) and when
      opponents are known to lack it (they must draw);
    * ``follow`` / ``blocked_expose``: the exposed value is worth more when we hold other tiles
      that match it (the tile keeps a place for our next turn) and when opponents could not
      match it at their last draw or pass (``next_blocked`` more for the next player);
    * ``mobility``: how many of our remaining tiles could be played on the layout right after
      the move (fewer means drawing soon);
    * ``scarcity``: tiles whose values we hold few of are harder to place later, so they go
      first.
    """

    name = "heuristic"
    kind = HEURISTIC
    # tuned by random search against three greedy players (4-player double-nine)
    DEFAULT_WEIGHTS = {"pips": 1.0, "double": 12.0, "toe_follow": 5.0, "opp_blocked": 2.0, "follow": 1.0,
                       "blocked_expose": 1.5, "next_blocked": 1.5, "mobility": 1.2, "scarcity": 0.35}

    def __init__(self, config: RulesConfig, weights: dict | None = None) -> None:
        super().__init__(config)
        unknown = set(weights or {}) - set(self.DEFAULT_WEIGHTS)
        if unknown:
            raise ConfigError(f"unknown heuristic weights {sorted(unknown)}; known: {sorted(self.DEFAULT_WEIGHTS)}")
        self.w = {**self.DEFAULT_WEIGHTS, **(weights or {})}
        sl = self.encoder.slices
        offsets = np.array([sl["hand"].start, sl["unmatched"].start, sl["open_ends"].start, sl["pending_count"].start,
                            sl["pending_value"].start, config.num_players - 1], dtype=np.int64)
        weight_vector = np.array([self.w[k] for k in self.DEFAULT_WEIGHTS], dtype=np.float64)
        self._tables = HeuristicTables(offsets, self.tile_values, self.cost, self.action_tile, self.match, self.expose,
                                       weight_vector, np.asarray(self.table.tile_low, np.int64),
                                       np.asarray(self.table.tile_high, np.int64))

    @property
    def kernel_tables(self) -> HeuristicTables:
        """The tables :func:`score_plays` reads for these rules and weights (compiled callers, such
        as the search agents' rollouts, score plays with the same kernel)."""
        return self._tables

    def scores(self, observation: dict) -> tuple[np.ndarray, np.ndarray]:
        """Legal plays and their scores (empty when only DRAW or PASS is legal)."""
        legal = legal_actions(observation)
        plays = legal[legal < self.draw]
        out = np.zeros(plays.size)
        if plays.size:
            obs = np.asarray(observation["observation"], dtype=np.float32)
            score_plays(obs, plays, out, self._tables)
        return plays, out

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        plays, score = self.scores(observation)
        if plays.size == 0:
            return int(legal_actions(observation)[0])
        return int(plays[np.argmax(score)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The same choice as :meth:`act` for every row, in one compiled loop."""
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        legal = np.ascontiguousarray(masks) != 0
        if not legal.any(axis=1).all():
            raise NotToMoveError("an action mask in the batch is all zeros: this agent is not to move")
        out = np.empty(len(obs), dtype=np.int64)
        _act_rows(obs, legal, self.draw, out, self._tables)
        return out


@numba.njit(cache=True, **COUNTED_OPTIONS)  # it allocates: counted even under policy inference's unrefcounted search
def score_plays(obs, plays, out, tables):  # pragma: no cover - compiled
    """HeuristicAgent's score of each play in ``plays`` (see the class docstring) for one
    observation row, written to ``out``; ``tables`` a :class:`HeuristicTables`. Weights in
    DEFAULT_WEIGHTS order: pips, double, toe_follow, opp_blocked, follow, blocked_expose,
    next_blocked, mobility, scarcity."""
    t_count, k = tables.tile_values.shape
    hand_at, unm_at, ends_at, pcount_at, pval_at, opponents = tables.offsets
    opp_lack = np.zeros(k)
    for o in range(opponents):
        for v in range(k):
            opp_lack[v] += obs[unm_at + o * k + v]
    pend_count = int(obs[pcount_at])
    pend_value = -1
    if pend_count:
        best = obs[pval_at]
        pend_value = 0
        for v in range(1, k):
            if obs[pval_at + v] > best:
                best = obs[pval_at + v]
                pend_value = v
    _score(obs[hand_at:hand_at + t_count], opp_lack, obs[unm_at:unm_at + k], obs[ends_at:ends_at + k], pend_count,
           pend_value, plays, out, tables, np.zeros(k), np.zeros(k, dtype=np.bool_), np.zeros(t_count, np.int64))


@numba.njit(cache=True, inline="always")
def score_plays_state(s, b, plays, out, tables, held, opp_lack, next_lack, open_after,
                      mine):  # pragma: no cover - compiled
    """:func:`score_plays` for the current player of game ``b`` of a batched-engine state
    (:class:`cf_env.vector.State`), read from the state instead of an observation row: the same
    scores to the bit, without writing the observation (the search's heuristic rollouts). ``held``,
    ``opp_lack``, ``next_lack`` (float64) and ``open_after`` (bool), each (K,), and ``mine`` (T,)
    int64 are working arrays."""
    n, k = s.hand.shape[1], opp_lack.shape[0]
    seat = s.current_player[b]
    for v in range(k):
        opp_lack[v] = 0.0
    for i in range(1, n):
        bits = s.unmatched[b, (seat + i) % n]
        for v in range(k):
            if (bits >> v) & 1:
                opp_lack[v] += 1.0
                if i == 1:
                    next_lack[v] = 1.0
            elif i == 1:
                next_lack[v] = 0.0
    pend_count = s.pending[b]
    pend_value = s.pending_value[b] if pend_count else -1
    _score(s.hand[b, seat], opp_lack, next_lack, s.open_ends[b], pend_count, pend_value, plays, out, tables, held,
           open_after, mine)


@numba.njit(cache=True, inline="always")
def _score(hand, opp_lack, next_lack, ends, pend_count, pend_value, plays, out, tables, held, open_after,
           mine):  # pragma: no cover - compiled
    """The heuristic's formula, written once: ``hand`` (T,) nonzero where held, ``opp_lack`` (K,)
    how many opponents failed to match each value, ``next_lack`` (K,) 1 where the next player did,
    ``ends`` (K,) open ends per value, the forced slots' count and value (-1: none); ``held`` and
    ``open_after`` are (K,) working arrays."""
    cost, action_tile, match, expose, w = tables.cost, tables.action_tile, tables.match, tables.expose, tables.weights
    lo, hi = tables.tile_lo, tables.tile_hi
    t_count, k = tables.tile_values.shape
    for v in range(k):
        held[v] = 0.0
    tiles = 0  # the held tiles, listed in ``mine``
    for t in range(t_count):  # how many held tiles carry each value (a double counts once)
        if hand[t] != 0:
            mine[tiles] = t
            tiles += 1
            held[lo[t]] += 1.0
            if hi[t] != lo[t]:
                held[hi[t]] += 1.0
    for i in range(plays.size):
        a = plays[i]
        m, x, tile = match[a], expose[a], action_tile[a]
        rest_m = held[m] - (1.0 if lo[tile] == m or hi[tile] == m else 0.0)
        rest_x = held[x] - (1.0 if lo[tile] == x or hi[tile] == x else 0.0)
        score = w[0] * cost[a]
        open_after[:] = False
        if m == x:
            score += w[1] + w[2] * min(rest_x, 3.0) + w[3] * opp_lack[x]
            open_after[x] = True
        else:
            score += (w[4] * min(rest_x, 2.0) + w[5] * opp_lack[x]
                      + w[6] * next_lack[x])
            if pend_count > 1:
                open_after[pend_value] = True
            else:
                for v in range(k):
                    after = ends[v]
                    if v == m and pend_count == 0:
                        after -= 1
                    if v == x:
                        after += 1
                    open_after[v] = after > 0
        mobility = 0.0  # the other held tiles that carry a value open after the play
        for j in range(tiles):
            t = mine[j]
            if t != tile and (open_after[lo[t]] or open_after[hi[t]]):
                mobility += 1.0
        score += w[7] * mobility
        score -= w[8] * (rest_m + rest_x)
        out[i] = score


@numba.njit(cache=True)
def _act_rows(obs, legal, draw, out, tables):  # pragma: no cover - compiled
    plays = np.empty(draw, dtype=np.int64)
    scores = np.empty(draw)
    for r in range(obs.shape[0]):
        n = 0
        for a in range(draw):
            if legal[r, a]:
                plays[n] = a
                n += 1
        if n == 0:  # the only legal DRAW or PASS (draw comes first)
            a = draw
            while not legal[r, a]:
                a += 1
            out[r] = a
            continue
        score_plays(obs[r], plays[:n], scores[:n], tables)
        out[r] = plays[np.argmax(scores[:n])]


@njit(cache=True, inline="always")
def _next(rs):
    x = rs[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rs[0] = x
    return (x * np.uint64(2685821657736338717)) >> np.uint64(11)


@njit(cache=True, inline="always")
def randint(rs, n):
    """A uniform integer in ``[0, n)`` from the generator state ``rs``."""
    return np.int64(_next(rs) % np.uint64(n))


@njit(cache=True, inline="always")
def uniform(rs):
    """A uniform float in ``[0, 1)`` from the generator state ``rs``."""
    return _next(rs) * (1.0 / 9007199254740992.0)


class RolloutPolicy(NamedTuple):
    """A compiled baseline policy (for the search's rollouts and the vector env's opponents) and its working arrays."""

    kind: int  #: RANDOM, GREEDY or HEURISTIC
    plays: np.ndarray  #: (K*K,) int64 the legal plays
    scores: np.ndarray  #: (K*K,) float64 their scores
    tables: HeuristicTables  #: the heuristic's tables (its cost column is greedy's too)
    work: np.ndarray  #: (3, K) float64 the heuristic's working arrays (held, opponents' and next player's lacks)
    open_after: np.ndarray  #: (K,) bool the values open after a play (the heuristic's mobility)
    mine: np.ndarray  #: (T,) int64 the mover's tiles (the heuristic's working list)


def new_policy(kind: int, k: int, tables: HeuristicTables) -> RolloutPolicy:
    """A policy of ``kind`` with fresh working arrays (``k``: max_pip + 1)."""
    return RolloutPolicy(kind, np.zeros(k * k, np.int64), np.zeros(k * k, np.float64), tables,
                         np.zeros((3, k), np.float64), np.zeros(k, np.bool_),
                         np.zeros(tables.tile_values.shape[0], np.int64))


_new_policy = njit(cache=True, inline="always")(new_policy)  # the same, for compiled callers


@njit(cache=True, inline="always")
def choose(s, c, b, policy, rs):
    """The policy's action for game ``b``'s current player of a batched-engine state: the
    baseline agent's own choice (the heuristic's to the bit, from :func:`score_plays_state`;
    greedy's, ties to the lowest id; random's uniform over the legal actions, drawn from ``rs``)."""
    kk = c.k * c.k
    plays = policy.plays
    legal = s.legal[b]
    n = 0
    for a in range(kk):
        if legal[a]:
            plays[n] = a
            n += 1
    other = kk if legal[kk] else kk + 1  # draw or pass (never both)
    if policy.kind == RANDOM:
        extra = 1 if (legal[kk] or legal[kk + 1]) else 0
        r = randint(rs, n + extra)
        return plays[r] if r < n else other
    if n == 0:
        return other
    best = 0
    if policy.kind == GREEDY:
        cost = policy.tables.cost
        for i in range(1, n):
            if cost[plays[i]] > cost[plays[best]]:
                best = i
        return plays[best]
    scores = policy.scores
    work = policy.work
    score_plays_state(s, b, plays[:n], scores[:n], policy.tables, work[0], work[1], work[2], policy.open_after,
                      policy.mine)
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    return plays[best]


def play_to_seats(agent: _CompiledChoice, vg: VectorGame, games: np.ndarray,
                  stop: np.ndarray, rewards: np.ndarray, rng: np.random.Generator) -> None:
    """``agent`` plays every seat of each game ``games[i]`` until the seat to move is ``stop[games[i]]``
    or the game ends, in one compiled loop over the games (numba's threads when ``vg.parallel``);
    what seat ``stop[b]`` earned on the way is added to ``rewards[b]``. Only the last decision's
    observation is written (the vector env's opponents: :class:`cf_env.gym_vector.ChickenFootVectorEnv`).
    The choices are the agent's own (:func:`choose`); random's come from a stream seeded by ``rng``."""
    games = np.ascontiguousarray(games, dtype=np.int64)
    seeds = (rng.integers(1, 2**63, size=games.size, dtype=np.int64).astype(np.uint64) if agent.kind == RANDOM
             else np.ones(games.size, np.uint64))
    kernel = _play_to_seats if vg.parallel else _play_to_seats_serial
    kernel(games, np.ascontiguousarray(stop, dtype=np.int64), vg.state, vg.consts, vg.offsets, vg.observations,
           vg.masks, vg.seats, rewards, agent.kind, agent.kernel_tables, seeds)


@njit(cache=True, inline="always")
def _play_one(b, stop, s, c, o, obs, mask, seat, rewards, step_rewards, policy, rs):  # pragma: no cover - compiled
    """Game ``b`` played by ``policy`` until seat ``stop[b]`` is to move; ``step_rewards`` is the
    state's own rewards array, taken out of it before any parallel loop (see cf_env.vector's kernels:
    numba's parfor pass loses writes made through the State's attributes inside prange)."""
    for p in range(step_rewards.shape[1]):
        step_rewards[b, p] = 0.0
    for _ in range(1 << 30):  # bounded: every game ends or reaches the stop seat
        q = s.current_player[b]
        if q < 0 or q == stop[b]:
            break
        apply_action(b, choose(s, c, b, policy, rs), s, c)
    rewards[b] += step_rewards[b, stop[b]]
    seat[b] = s.current_player[b]
    if seat[b] >= 0:
        write_observation(b, s, c, o, obs)
        for a in range(mask.shape[1]):
            mask[b, a] = s.legal[b, a]


@njit(cache=True, parallel=True)
def _play_to_seats(games, stop, s, c, o, obs, mask, seat, rewards, kind, tables, seeds):  # pragma: no cover
    step_rewards = s.rewards
    for i in prange(games.shape[0]):
        policy = _new_policy(kind, c.k, tables)  # working arrays of its own in each thread
        rs = np.full(1, seeds[i], np.uint64)
        _play_one(games[i], stop, s, c, o, obs, mask, seat, rewards, step_rewards, policy, rs)


@njit(cache=True)
def _play_to_seats_serial(games, stop, s, c, o, obs, mask, seat, rewards, kind, tables, seeds):  # pragma: no cover
    policy = _new_policy(kind, c.k, tables)
    rs = np.ones(1, np.uint64)
    for i in range(games.shape[0]):
        rs[0] = seeds[i]
        _play_one(games[i], stop, s, c, o, obs, mask, seat, rewards, s.rewards, policy, rs)
