"""Batched Chicken Foot: B independent games of one ``RulesConfig`` stepped together.

The same game as :class:`cf_env.engine.Game` and the AEC env — same rules (docs/RULES.md R1-R17), same
action ids, same observation layout (:mod:`cf_env.observation`), same reward definitions — held
as arrays and stepped by numba-compiled loops over the games. Each call to :meth:`VectorGame.step`
is one decision in every game, by that game's current player::

    vg = VectorGame(RulesConfig(), num_games=4096, reward="relative", seed=0)
    obs, mask, seat = vg.reset(seed=0)
    for _ in range(1000):
        actions = random_legal(mask, rng)                 # any policy over (obs, mask)
        obs, mask, seat, rewards, done = vg.step(actions)

``rewards`` is ``(B, num_players)`` float64 in absolute seat order: what every seat of every game
earned on this step (round ends and the game's end). A game that ends is recorded in
``vg.final_totals`` / ``vg.final_winners`` (valid where ``done``) and restarts at once with a new
deal; the ``obs``/``mask``/``seat`` returned for it are the first decision of the new game.
Rewards that arise while a new game is set up (a round that ends before anyone decides, possible
only in degenerate configurations) are reported separately in ``vg.reset_rewards``. A new game
that ends before anyone decides at all (1-tile hands: the holder of the starting double goes out
placing it) is void: nobody played it, it reports nothing, and it is dealt again from the
generator at once; ``vg.void_games`` counts them per game slot since :meth:`reset`. Every loop in
the kernels is bounded; rules under which no deal ever reaches a decision raise ``ConfigError``.

Randomness: one ``np.random.Generator`` (from ``seed``) shuffles every deal; each game keeps the
deals of its current and of its next game, drawn in game order, so results do not depend on
thread scheduling. Scripted deals (the engine's per-round format) are accepted per game by
:meth:`reset`. The layout's exact geometry (parents, arms) is not kept: render and replay with the
scalar engine.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

try:
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover - numba is a core dependency; keep a readable error
    numba = None

from cf_env.engine import IllegalActionError, RulesConfig, Tile, action_table, validate_deals
from cf_env.engine.errors import ConfigError
from cf_env.observation import ObservationEncoder

__all__ = ["VectorGame", "random_legal_actions"]

_REWARD_CODES = {"win": 0, "points": 1, "relative": 2}
MAX_VOID_DEALS = 10_000  # deals in a row that may end before the first decision before the rules are refused
_ARM, _TOE = 1, 4


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of an int8 mask ``(B, A)``."""
    noise = rng.random(mask.shape, dtype=np.float32)
    return np.argmax(noise * mask, axis=1)


if numba is not None:

    @njit(cache=True, inline="always")
    def _open_values(ends, pend, pend_val, b):
        if pend[b] > 0:
            return np.int64(1) << pend_val[b]
        vals = np.int64(0)
        for v in range(ends.shape[1]):
            if ends[b, v] > 0:
                vals |= np.int64(1) << v
        return vals

    @njit(cache=True)
    def _plays_of(hand, b, p, vals, tile_lo, tile_hi, k, legal, write):
        """Mark in ``legal[b]`` (when ``write``) every play of ``p``'s hand on the values in
        ``vals``; return whether there is one."""
        found = False
        for t in range(tile_lo.shape[0]):
            if hand[b, p, t]:
                lo = tile_lo[t]
                hi = tile_hi[t]
                if (vals >> lo) & 1:
                    found = True
                    if write:
                        legal[b, lo * k + hi] = 1
                    else:
                        return True
                if lo != hi and (vals >> hi) & 1:
                    found = True
                    if write:
                        legal[b, hi * k + lo] = 1
                    else:
                        return True
        return found

    @njit(cache=True)
    def _start_round(b, s, c):
        """R4-R7 for game ``b``: deal round ``rnd[b]``, find and place the starting double.
        Returns the first player to decide, or -1 when the holder went out placing it."""
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        (n, k, t_count, h, rounds, arms, until, dbp, reward_code, scale, max_pip, tile_lo, tile_hi,
         tile_of_action) = c
        r = rnd[b]
        for p in range(n):
            for t in range(t_count):
                hand[b, p, t] = 0
            count[b, p] = h
            unmatched[b, p] = 0
        for t in range(t_count):
            played[b, t] = 0
            bone[b, t] = deals[b, r, t]
        for v in range(k):
            ends[b, v] = 0
        for i in range(n):
            for j in range(h):
                hand[b, i, deals[b, r, i * h + j]] = 1
        bone_pos[b] = n * h
        drawn[b] = -1
        start = max_pip - r
        st = start * (start + 1) // 2 + start
        holder = -1
        for p in range(n):
            if hand[b, p, st]:
                holder = p
                break
        if holder < 0:  # R6: draw in turn from the dealer's left until someone draws it
            p = (r % n + 1) % n
            while bone_pos[b] < t_count:  # the double is in the boneyard, so this ends by its last tile
                t = bone[b, bone_pos[b]]
                bone_pos[b] += 1
                hand[b, p, t] = 1
                count[b, p] += 1
                if t == st:
                    holder = p
                    break
                p = (p + 1) % n
        hand[b, holder, st] = 0
        count[b, holder] -= 1
        played[b, st] = 1
        pend[b] = arms  # R9
        pend_val[b] = start
        pend_role[b] = 1
        if count[b, holder] == 0:
            return -1
        return (holder + 1) % n

    @njit(cache=True)
    def _finish_round(b, s, c, rew, record):
        """R14-R16: score the round into ``rew[b]``; return True when the game is over (its result
        goes to ``final_totals`` / ``final_winners`` only when ``record``)."""
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        (n, k, t_count, h, rounds, arms, until, dbp, reward_code, scale, max_pip, tile_lo, tile_hi,
         tile_of_action) = c
        r = rnd[b]
        total = 0
        for p in range(n):
            pts = 0
            for t in range(t_count):
                if hand[b, p, t]:
                    if t == 0:
                        pts += dbp
                    else:
                        pts += tile_lo[t] + tile_hi[t]
            rscores[b, r, p] = pts
            totals[b, p] += pts
            total += pts
        for p in range(n):
            pts = rscores[b, r, p]
            if reward_code == 1:
                rew[b, p] += -pts / scale
            elif reward_code == 2:
                rew[b, p] += ((total - pts) / (n - 1) - pts) / scale
        if r + 1 < rounds:
            rnd[b] = r + 1
            return False
        if not record:
            return True
        # R16: lowest total; most zero rounds; lowest non-zero round; ties share
        zeros = np.zeros(n, np.int64)
        low = np.full(n, 1 << 60, np.int64)
        for p in range(n):
            for q in range(rounds):
                v = rscores[b, q, p]
                if v == 0:
                    zeros[p] += 1
                elif v < low[p]:
                    low[p] = v
        best = 0
        for p in range(1, n):
            if (totals[b, p] < totals[b, best] or (totals[b, p] == totals[b, best] and (
                    zeros[p] > zeros[best] or (zeros[p] == zeros[best] and low[p] < low[best])))):
                best = p
        nwin = 0
        for p in range(n):
            win = totals[b, p] == totals[b, best] and zeros[p] == zeros[best] and low[p] == low[best]
            final_winners[b, p] = 1 if win else 0
            final_totals[b, p] = totals[b, p]
            if win:
                nwin += 1
        if reward_code == 0:
            for p in range(n):
                share = 1.0 / nwin if final_winners[b, p] else 0.0
                rew[b, p] += share - 1.0 / n
        return True

    @njit(cache=True)
    def _new_game(b, s, c):
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        n = c[0]
        rounds = c[4]
        for r in range(rounds):
            for t in range(deals.shape[2]):
                deals[b, r, t] = next_deals[b, r, t]
            for p in range(n):
                rscores[b, r, p] = 0
        for p in range(n):
            totals[b, p] = 0
        rnd[b] = 0
        need_deals[b] = 1

    @njit(cache=True)
    def _advance(b, q, s, c, in_reset):
        """Hand the decision to ``q`` (or end the round when ``q`` is -1 / nobody can play),
        starting rounds and games as needed; fills ``legal[b]``."""
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        (n, k, t_count, h, rounds, arms, until, dbp, reward_code, scale, max_pip, tile_lo, tile_hi,
         tile_of_action) = c
        kk = k * k
        setting_up = in_reset
        # each pass ends a round or breaks; at most the rounds of this game and of one new game
        for _ in range(2 * rounds + 1):
            if q >= 0:
                for a in range(legal.shape[1]):
                    legal[b, a] = 0
                vals = _open_values(ends, pend, pend_val, b)
                if _plays_of(hand, b, q, vals, tile_lo, tile_hi, k, legal, True):
                    break
                if bone_pos[b] < t_count:  # R12
                    legal[b, kk] = 1
                    break
                blocked = True  # R13 pass unless nobody can play (R14)
                for p in range(n):
                    if _plays_of(hand, b, p, vals, tile_lo, tile_hi, k, legal, False):
                        blocked = False
                        break
                if not blocked:
                    legal[b, kk + 1] = 1
                    break
            over = _finish_round(b, s, c, reset_rewards if setting_up else rewards, not setting_up)
            if over:
                if setting_up:  # a new game ended before its first decision: void, to be dealt again
                    for p in range(n):
                        reset_rewards[b, p] = 0.0
                    cur[b] = -1
                    drawn[b] = -1
                    return
                done[b] = 1
                _new_game(b, s, c)
                setting_up = True
            q = _start_round(b, s, c)
        cur[b] = q
        drawn[b] = -1

    @njit(cache=True)
    def _apply(b, a, s, c):
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        (n, k, t_count, h, rounds, arms, until, dbp, reward_code, scale, max_pip, tile_lo, tile_hi,
         tile_of_action) = c
        kk = k * k
        p = cur[b]
        if a < kk:  # R8-R10
            m = a // k
            x = a % k
            t = tile_of_action[a]
            hand[b, p, t] = 0
            played[b, t] = 1
            if pend[b] > 0:
                pend[b] -= 1
            else:
                ends[b, m] -= 1
                if m == x:
                    pend[b] = 3
                    pend_val[b] = m
                    pend_role[b] = 4
            if m != x:
                ends[b, x] += 1
            count[b, p] -= 1
            if count[b, p] == 0:
                _advance(b, -1, s, c, False)
            else:
                _advance(b, (p + 1) % n, s, c, False)
        elif a == kk:  # R12 draw
            t = bone[b, bone_pos[b]]
            bone_pos[b] += 1
            hand[b, p, t] = 1
            count[b, p] += 1
            vals = _open_values(ends, pend, pend_val, b)
            unmatched[b, p] = vals
            lo = tile_lo[t]
            hi = tile_hi[t]
            if ((vals >> lo) & 1) or ((vals >> hi) & 1):
                for i in range(legal.shape[1]):
                    legal[b, i] = 0
                if (vals >> lo) & 1:
                    legal[b, lo * k + hi] = 1
                if (vals >> hi) & 1:
                    legal[b, hi * k + lo] = 1
                legal[b, kk + 1] = 1
                drawn[b] = t
            elif until and bone_pos[b] < t_count:
                for i in range(legal.shape[1]):
                    legal[b, i] = 0
                legal[b, kk] = 1
            else:
                _advance(b, (p + 1) % n, s, c, False)
        else:  # pass: keep the drawn tile (R12) or nothing to play (R13)
            if drawn[b] < 0:
                unmatched[b, p] = _open_values(ends, pend, pend_val, b)
            _advance(b, (p + 1) % n, s, c, False)

    @njit(cache=True)
    def _write_obs(b, s, c, o, obs):
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        (n, k, t_count, h, rounds, arms, until, dbp, reward_code, scale, max_pip, tile_lo, tile_hi,
         tile_of_action) = c
        (o_hand, o_layout, o_drawn, o_pv, o_pk, o_um, o_ends, o_pc, o_hs, o_bone, o_round, o_scores) = o
        seat = cur[b]
        row = obs[b]
        for i in range(row.shape[0]):
            row[i] = 0.0
        for t in range(t_count):
            row[o_hand + t] = hand[b, seat, t]
            row[o_layout + t] = played[b, t]
        if drawn[b] >= 0:
            row[o_drawn + drawn[b]] = 1.0
        if pend[b] > 0:
            row[o_pv + pend_val[b]] = 1.0
            row[o_pk + (0 if pend_role[b] == 1 else 1)] = 1.0
            row[o_pc] = pend[b]
        for i in range(1, n):
            um = unmatched[b, (seat + i) % n]
            for v in range(k):
                if (um >> v) & 1:
                    row[o_um + (i - 1) * k + v] = 1.0
        for v in range(k):
            row[o_ends + v] = ends[b, v]
        for i in range(n):
            p = (seat + i) % n
            row[o_hs + i] = count[b, p]
            row[o_scores + i] = totals[b, p] * 0.01
        row[o_bone] = t_count - bone_pos[b]
        row[o_round] = rnd[b]
        row[o_round + 1] = rounds - rnd[b] - 1

    @njit(cache=True, parallel=True)
    def _step_kernel(actions, s, c, o, obs, mask, seat):
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        for b in prange(actions.shape[0]):
            done[b] = 0
            need_deals[b] = 0
            for p in range(rewards.shape[1]):
                rewards[b, p] = 0.0
                reset_rewards[b, p] = 0.0
            _apply(b, actions[b], s, c)
            _publish(b, s, c, o, obs, mask, seat)

    @njit(cache=True)
    def _publish(b, s, c, o, obs, mask, seat):
        """Write game ``b``'s observation, mask and seat (unless it waits for a new deal, cur -1)."""
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        seat[b] = cur[b]
        if cur[b] >= 0:
            _write_obs(b, s, c, o, obs)
            for a in range(legal.shape[1]):
                mask[b, a] = legal[b, a]

    @njit(cache=True, parallel=True)
    def _redeal_kernel(games, s, c, o, obs, mask, seat):
        """Start a new game in each of ``games`` (void games, from their fresh ``next_deals``)."""
        for i in prange(games.shape[0]):
            b = games[i]
            _new_game(b, s, c)
            q = _start_round(b, s, c)
            _advance(b, q, s, c, True)
            _publish(b, s, c, o, obs, mask, seat)

    @njit(cache=True, parallel=True)
    def _reset_kernel(s, c, o, obs, mask, seat):
        (hand, count, bone, bone_pos, played, ends, pend, pend_val, pend_role, cur, drawn, unmatched,
         rnd, totals, rscores, legal, deals, next_deals, need_deals, done, final_totals, final_winners,
         rewards, reset_rewards) = s
        for b in prange(obs.shape[0]):
            done[b] = 0
            need_deals[b] = 0
            rnd[b] = 0
            for p in range(rewards.shape[1]):
                totals[b, p] = 0
                rewards[b, p] = 0.0
                reset_rewards[b, p] = 0.0
            q = _start_round(b, s, c)
            _advance(b, q, s, c, True)
            _publish(b, s, c, o, obs, mask, seat)


class VectorGame:
    """``num_games`` games of ``config`` in lockstep (see the module docstring)."""

    def __init__(self, config: RulesConfig | None = None, num_games: int = 1024, reward: str = "win",
                 points_scale: float = 100.0, seed: int | np.random.Generator | None = None) -> None:
        if numba is None:
            raise ImportError("cf_env.vector needs numba: pip install numba")
        cfg = config if config is not None else RulesConfig()
        if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1:
            raise ConfigError(f"num_games must be a positive int, got {num_games!r}")
        if reward not in _REWARD_CODES:
            raise ConfigError(f"reward must be one of {tuple(_REWARD_CODES)}, got {reward!r}")
        if isinstance(points_scale, bool) or not isinstance(points_scale, (int, float)) or points_scale <= 0:
            raise ConfigError(f"points_scale must be a positive number, got {points_scale!r}")
        self.config = cfg
        self.num_games = b = num_games
        self.reward_mode = reward
        self.points_scale = float(points_scale)
        self.encoder = ObservationEncoder(cfg)
        table = action_table(cfg.max_pip)
        n, k, t = cfg.num_players, table.k, cfg.num_tiles
        self.num_actions = table.num_actions
        self.obs_size = self.encoder.size
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        tiles = [Tile.from_index(i) for i in range(t)]
        self._consts = (
            n, k, t, cfg.hand_size, cfg.rounds, cfg.center_arms, cfg.draw_rule == "until_playable",
            cfg.double_blank_points, _REWARD_CODES[reward], self.points_scale, cfg.max_pip,
            np.array([x.low for x in tiles], dtype=np.int64), np.array([x.high for x in tiles], dtype=np.int64),
            np.array(table.action_tile, dtype=np.int64),
        )
        sl = self.encoder.slices
        self._offsets = tuple(sl[name].start for name in (
            "hand", "layout", "drawn", "pending_value", "pending_kind", "unmatched", "open_ends", "pending_count",
            "hand_sizes", "boneyard", "round", "scores"))
        r = cfg.rounds
        self.hand = np.zeros((b, n, t), np.uint8)
        self.count = np.zeros((b, n), np.int64)
        self.bone = np.zeros((b, t), np.int64)
        self.bone_pos = np.zeros(b, np.int64)
        self.played = np.zeros((b, t), np.uint8)
        self.ends = np.zeros((b, k), np.int64)
        self.pend = np.zeros(b, np.int64)
        self.pend_val = np.zeros(b, np.int64)
        self.pend_role = np.zeros(b, np.int64)
        self.cur = np.zeros(b, np.int64)
        self.drawn = np.full(b, -1, np.int64)
        self.unmatched = np.zeros((b, n), np.int64)
        self.rnd = np.zeros(b, np.int64)
        self.totals = np.zeros((b, n), np.int64)
        self.round_scores = np.zeros((b, r, n), np.int64)
        self.legal = np.zeros((b, self.num_actions), np.uint8)
        self.deals = np.zeros((b, r, t), np.int64)
        self.next_deals = np.zeros((b, r, t), np.int64)
        self.need_deals = np.zeros(b, np.uint8)
        self.done = np.zeros(b, np.uint8)
        self.final_totals = np.zeros((b, n), np.int64)
        self.final_winners = np.zeros((b, n), np.uint8)
        self.rewards = np.zeros((b, n), np.float64)
        self.reset_rewards = np.zeros((b, n), np.float64)
        self._obs = np.zeros((b, self.obs_size), np.float32)
        self._mask = np.zeros((b, self.num_actions), np.int8)
        self._seat = np.zeros(b, np.int64)
        self.void_games = np.zeros(b, np.int64)
        self._ready = False

    @property
    def _state(self) -> tuple:
        return (self.hand, self.count, self.bone, self.bone_pos, self.played, self.ends, self.pend, self.pend_val,
                self.pend_role, self.cur, self.drawn, self.unmatched, self.rnd, self.totals, self.round_scores,
                self.legal, self.deals, self.next_deals, self.need_deals, self.done, self.final_totals,
                self.final_winners, self.rewards, self.reset_rewards)

    def _shuffled(self, count: int) -> np.ndarray:
        t = self.config.num_tiles
        base = np.broadcast_to(np.arange(t, dtype=np.int64), (count, self.config.rounds, t))
        return self._rng.permuted(base, axis=2)

    def reset(self, seed: int | np.random.Generator | None = None,
              deals: Sequence[Sequence[Any] | None] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every game; ``deals[b]`` optionally scripts game ``b``'s rounds (the engine's
        format; unscripted rounds are shuffled). Returns ``(obs, mask, seat)``."""
        if seed is not None:
            self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        b = self.num_games
        self.deals[:] = self._shuffled(b)
        self.next_deals[:] = self._shuffled(b)
        if deals is not None:
            if isinstance(deals, (str, bytes)) or not isinstance(deals, Sequence) or len(deals) != b:
                raise ConfigError(f"deals must list one entry (or None) per game: {b}, got {deals!r:.80}")
            for g, game_deals in enumerate(deals):
                if game_deals is None:
                    continue
                for r, parsed in enumerate(validate_deals(game_deals, self.config)):
                    if parsed is not None:
                        hands, bone = parsed
                        self.deals[g, r] = [tile for hand in hands for tile in hand] + list(bone)
        self.void_games[:] = 0
        _reset_kernel(self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()
        self._ready = True
        return self._obs, self._mask, self._seat

    def _refill_deals(self) -> None:
        idx = np.flatnonzero(self.need_deals)
        if idx.size:
            self.next_deals[idx] = self._shuffled(idx.size)

    def _redeal_void(self) -> None:
        """Deal again every game that ended before its first decision (``cur`` -1; only degenerate
        configurations, e.g. 1-tile hands, do that), until each has a decision to make."""
        for _ in range(MAX_VOID_DEALS):
            void = np.flatnonzero(self.cur < 0)
            if not void.size:
                return
            self.void_games[void] += 1
            _redeal_kernel(void, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
            self._refill_deals()
        raise ConfigError(f"{MAX_VOID_DEALS} deals in a row ended before anyone could decide; these rules "
                          f"({self.config}) leave nothing to play")

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One decision per game. Returns ``(obs, mask, seat, rewards, done)``; the arrays are
        reused by the next call (copy what you keep)."""
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be {self.num_games} integer action ids, got {actions.dtype} {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        in_range = (actions >= 0) & (actions < self.num_actions)
        ok = in_range.copy()
        ok[in_range] = self.legal[np.flatnonzero(in_range), actions[in_range]] == 1
        if not ok.all():
            bad = np.flatnonzero(~ok)[:5]
            raise IllegalActionError(
                f"illegal actions in games {bad.tolist()} (actions {actions[bad].tolist()}); nothing was changed")
        _step_kernel(actions, self._state, self._consts, self._offsets, self._obs, self._mask, self._seat)
        self._refill_deals()
        self._redeal_void()
        return self._obs, self._mask, self._seat, self.rewards, self.done.astype(bool)

    @property
    def observations(self) -> np.ndarray:
        return self._obs

    @property
    def masks(self) -> np.ndarray:
        return self._mask

    @property
    def seats(self) -> np.ndarray:
        return self._seat
