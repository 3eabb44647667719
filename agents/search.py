"""Search agents: determinized Monte-Carlo search (PIMC) and single-observer ISMCTS.

Both act from the observation alone (what their seat may know, docs/RULES.md R17): the own hand,
the layout, the open ends, the forced slots, the drawn tile, hand sizes, the boneyard's size, the
pip values each opponent failed to match, the round and the scores. From it they sample *worlds*:
the hidden tiles (everything not in the own hand or on the layout) dealt to the opponents' hands
and the boneyard, consistent with the hand sizes and, with ``infer`` on, with each opponent's
failures to match (see :ref:`the inference <inference>` below). Each world is played to the end of
the round on the batched engine's compiled kernels (:mod:`cf_env.vector`) by a rollout policy.

* ``pimc`` (Perfect-Information Monte Carlo): every legal action is tried in every sampled world
  (the same worlds for every action), and the action with the best mean value is played.
* ``ismcts`` (single-observer Information-Set MCTS, Cowling, Powley & Whitehouse, IEEE TCIAIG
  2012): one tree over the action sequences from the searcher's decision; each iteration samples a
  world, descends with UCB restricted to the actions legal in that world (availability counts),
  adds one node, plays the rest of the round out and backs up each seat's value at the nodes where
  that seat moved. The most visited root action is played.

The value of a finished round for a seat (``value=points``, the default) is its round result
relative to the others, ``(mean of the others' points - its points) / (max_pip * hand_size)``; in the
last round of the game it is the seat's share of the game's win (lowest total; R16's tie-breaks
aside, since the observation keeps totals and not each round) plus a twentieth of the relative
result. ``value=win`` uses, in every round, an estimate of the chance to win the game from the
totals after the round: each other seat's lead, over a normal spread of
``0.33 * max_pip * hand_size`` points per remaining round (the measured spread of two seats'
round points), multiplied over the opponents; it measured weaker (see the README).

.. _inference:

**Inference.** The observation's ``unmatched`` block says, per opponent, the pip values it could
not match at its latest draw or forced pass this round. At that moment its hand held no tile with
those values; since then it has received at most one tile (the tile drawn right after the failure:
under ``until_playable`` every earlier draw of that turn did not match either), which may match,
and which it played or kept. So its hand now holds *at most one* tile with an unmatched value: one
only if it drew a playable tile and kept it (R12). Worlds give such a hand a kept tile with
probability ``keep`` (default 0: the shipped agents never keep a playable tile) and otherwise none.
Hands are dealt from one shuffle, most constrained opponent first, each taking the first tiles it
may hold; a shuffle that leaves an opponent short is dealt again (16 tries), and when the
constraints cannot all hold (an opponent that did keep a tile, with ``keep`` 0) they are relaxed.

**Spec.** ``agents.load("search")`` is the default setting; parameters follow after colons,
``search:algo=ismcts:ms=20:rollout=greedy``:

=========  ==========  =======================================================================
name       default     meaning
=========  ==========  =======================================================================
algo       pimc        ``pimc`` or ``ismcts``
ms         40          time budget per decision in milliseconds (0: no clock, ``sims`` only)
sims       0           most worlds (pimc) or iterations (ismcts) per decision; 0 = no cap, and
                       with ``ms=0`` it must be given. With ``ms=0`` decisions are reproducible.
rollout    heuristic   ``heuristic``, ``greedy`` or ``random``: the policy that plays every seat in
                       the rollouts (compiled); or, with ``pimc``, a checkpoint spec (``zoo:NAME`` or
                       a path): its network plays every rollout of a batch of worlds in lockstep,
                       one batched forward pass per step (about 40 ms per batch: give it
                       ``ms=200`` or more)
value      points      ``points`` or ``win`` (above)
infer      1           1: worlds respect the opponents' failures to match; 0: ignore them
keep       0           chance that an opponent holds one tile of a value it failed to match
c          0.7         ismcts: UCB exploration constant (values are in about [-1, 1])
seed       none        the agent's own random seed; by default it draws from ``act``'s generator
=========  ==========  =======================================================================

A decision with a single legal action costs no search.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numba import njit

from agents.base import legal_actions
from agents.baselines import HeuristicAgent, score_plays
from cf_env import ChickenFootError, ObservationEncoder, RulesConfig
from cf_env.engine import Role
from cf_env.vector import apply_action, make_consts, new_state, observation_offsets, write_observation

__all__ = ["ALGORITHMS", "ROLLOUTS", "SearchAgent", "SearchSpecError", "parse_search_spec"]

ALGORITHMS = ("pimc", "ismcts")
ROLLOUTS = ("random", "greedy", "heuristic")  # a rollout policy's code is its index
_RANDOM, _GREEDY, _HEURISTIC = 0, 1, 2
SIGMA_PER_HAND_PIP = 0.33  # a round's std of the difference of two seats' points, per max_pip * hand_size
# (measured: 20.7 points in 4-player and 20.3 in 2-player double-nine heuristic play, where the unit is 63)
_DEAL_TRIES = 16  # shuffles a world may take to meet every opponent's inferred constraints
_MAX_DEPTH = 4096  # ismcts: tree path length kept per iteration (a round has far fewer decisions)
_TREE_NODES = 1 << 18  # ismcts: node capacity; a decision stops adding nodes when it is full


class SearchSpecError(ChickenFootError, ValueError):  # an AgentSpecError's sibling: agents.load raises it as is
    """A search spec names an unknown parameter or an invalid value."""


VALUES = ("win", "points")
DEFAULTS: dict[str, Any] = {"algo": "pimc", "ms": 40.0, "sims": 0, "rollout": "heuristic", "value": "points",
                            "infer": True, "keep": 0.0, "c": 0.7, "seed": None}


def parse_search_spec(spec: str) -> dict[str, Any]:
    """The parameters of ``search[:name=value]...`` (see the module docstring), checked."""
    if not isinstance(spec, str) or spec.split(":", 1)[0] != "search":
        raise SearchSpecError(f"a search spec starts with 'search', got {spec!r}")
    params = dict(DEFAULTS)
    parts = spec.split(":")[1:]
    pairs: list[list[str]] = []
    for part in parts:
        if "=" in part:
            pairs.append(part.split("=", 1))
        elif pairs:  # a value with a colon in it
            pairs[-1][1] += ":" + part
        else:
            raise SearchSpecError(f"{spec!r}: expected name=value after 'search:', got {part!r}")
    for key, value in pairs:
        if key not in DEFAULTS:
            raise SearchSpecError(f"{spec!r}: unknown search parameter {key!r}; known: {sorted(DEFAULTS)}")
        try:
            if key in ("ms", "keep", "c"):
                params[key] = float(value)
            elif key in ("sims", "seed"):
                params[key] = int(value)
            elif key == "infer":
                if value not in ("0", "1", "true", "false"):
                    raise ValueError
                params[key] = value in ("1", "true")
            else:
                params[key] = value
        except ValueError:
            raise SearchSpecError(f"{spec!r}: {key}={value!r} is not a valid value") from None
    if params["algo"] not in ALGORITHMS:
        raise SearchSpecError(f"{spec!r}: algo must be one of {ALGORITHMS}, got {params['algo']!r}")
    if params["value"] not in VALUES:
        raise SearchSpecError(f"{spec!r}: value must be one of {VALUES}, got {params['value']!r}")
    if params["rollout"] not in ROLLOUTS:
        if params["rollout"].split(":", 1)[0] == "search" or params["rollout"] in ("", "random"):
            raise SearchSpecError(f"{spec!r}: rollout must be one of {ROLLOUTS} or a checkpoint spec, got "
                                  f"{params['rollout']!r}")
        if params["algo"] != "pimc":
            raise SearchSpecError(f"{spec!r}: a checkpoint rollout ({params['rollout']}) is played in batches over "
                                  f"the worlds, which pimc does; ismcts plays one world at a time: use "
                                  f"rollout={'|'.join(ROLLOUTS)}")
    if not (params["ms"] >= 0 and math.isfinite(params["ms"])):
        raise SearchSpecError(f"{spec!r}: ms must be >= 0, got {params['ms']}")
    if params["sims"] < 0:
        raise SearchSpecError(f"{spec!r}: sims must be >= 0, got {params['sims']}")
    if params["ms"] == 0 and params["sims"] == 0:
        raise SearchSpecError(f"{spec!r}: with ms=0 (no clock) give sims=N, the worlds or iterations per decision")
    if not 0.0 <= params["keep"] <= 1.0:
        raise SearchSpecError(f"{spec!r}: keep is a probability in [0, 1], got {params['keep']}")
    if not (params["c"] >= 0 and math.isfinite(params["c"])):
        raise SearchSpecError(f"{spec!r}: c must be >= 0, got {params['c']}")
    if params["seed"] is not None and params["seed"] < 0:
        raise SearchSpecError(f"{spec!r}: seed must be >= 0, got {params['seed']}")
    return params


# ---------------------------------------------------------------------------------- compiled parts
# A small xorshift64* generator whose state (one uint64) is seeded per decision from the caller's
# np.random.Generator: no global random state, and the same seed gives the same decision.

@njit(cache=True, inline="always")
def _next(rs):
    x = rs[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rs[0] = x
    return (x * np.uint64(2685821657736338717)) >> np.uint64(11)


@njit(cache=True, inline="always")
def _randint(rs, n):
    return np.int64(_next(rs) % np.uint64(n))


@njit(cache=True, inline="always")
def _uniform(rs):
    return _next(rs) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _copy_game(src, i, dst, j):
    """Game ``i`` of state ``src`` into game ``j`` of ``dst`` (the fields a round in play uses)."""
    dst.hand[j] = src.hand[i]
    dst.count[j] = src.count[i]
    dst.bone[j] = src.bone[i]
    dst.bone_pos[j] = src.bone_pos[i]
    dst.played[j] = src.played[i]
    dst.ends[j] = src.ends[i]
    dst.pend[j] = src.pend[i]
    dst.pend_val[j] = src.pend_val[i]
    dst.pend_role[j] = src.pend_role[i]
    dst.cur[j] = src.cur[i]
    dst.drawn[j] = src.drawn[i]
    dst.unmatched[j] = src.unmatched[i]
    dst.rnd[j] = src.rnd[i]
    dst.totals[j] = src.totals[i]
    dst.round_scores[j] = src.round_scores[i]
    dst.legal[j] = src.legal[i]
    dst.done[j] = 0


@njit(cache=True)
def _deal_hidden(s, b, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken):
    """A world: the hidden ``pool`` shuffled into the hands of the seats in ``order`` (``sizes``
    tiles each, avoiding their ``forbid`` tiles except for one kept tile with probability
    ``keep``) and then the boneyard (its last ``bone_n`` positions). When a seat runs out of
    allowed tiles the deal starts again with a new shuffle; after ``_DEAL_TRIES`` tries the
    last one stands with the constraints relaxed where they fail."""
    m = pool.shape[0]
    t_count = s.hand.shape[2]
    for attempt in range(_DEAL_TRIES):
        for i in range(m):
            perm[i] = pool[i]
            taken[i] = 0
        for i in range(m - 1, 0, -1):
            j = _randint(rs, i + 1)
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
        relaxed = False
        for idx in range(order.shape[0]):
            p = order[idx]
            for t in range(t_count):
                s.hand[b, p, t] = 0
            need = sizes[p]
            if keep > 0.0 and _uniform(rs) < keep:
                for i in range(m):
                    if not taken[i] and forbid[p, perm[i]]:
                        taken[i] = 1
                        s.hand[b, p, perm[i]] = 1
                        need -= 1
                        break
            for i in range(m):
                if need == 0:
                    break
                if not taken[i] and not forbid[p, perm[i]]:
                    taken[i] = 1
                    s.hand[b, p, perm[i]] = 1
                    need -= 1
            for i in range(m):  # the constraints do not all hold in this deal: relax them for this seat
                if need == 0:
                    break
                if not taken[i]:
                    relaxed = True
                    taken[i] = 1
                    s.hand[b, p, perm[i]] = 1
                    need -= 1
        if not relaxed:
            break
    pos = t_count - bone_n
    for i in range(m):
        if not taken[i]:
            s.bone[b, pos] = perm[i]
            pos += 1


@njit(cache=True)
def _choose(s, c, o, b, kind, rs, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w):
    """The rollout policy's action for game ``b``'s current player."""
    kk = c.k * c.k
    n = 0
    for a in range(kk):
        if s.legal[b, a]:
            plays[n] = a
            n += 1
    other = kk if s.legal[b, kk] else kk + 1  # draw or pass (never both)
    if kind == _RANDOM:
        extra = 1 if (s.legal[b, kk] or s.legal[b, kk + 1]) else 0
        r = _randint(rs, n + extra)
        return plays[r] if r < n else other
    if n == 0:
        return other
    best = 0
    if kind == _GREEDY:
        for i in range(1, n):
            if cost[plays[i]] > cost[plays[best]]:
                best = i
        return plays[best]
    write_observation(b, s, c, o, obs)
    score_plays(obs[b], plays[:n], scores[:n], h_off, tile_values, cost, action_tile, match, expose, w)
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    return plays[best]


@njit(cache=True)
def _rollout(s, c, o, b, kind, rs, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w):
    """Play game ``b`` to the end of its round (``rnd`` leaves 0) with the rollout policy; returns
    the decisions taken."""
    steps = 0
    for _ in range(1 << 20):  # bounded: every round ends (each draw empties the boneyard, each pass leads to a play)
        if s.rnd[b] != 0:
            break
        a = _choose(s, c, o, b, kind, rs, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w)
        apply_action(b, a, s, c)
        steps += 1
    return steps


@njit(cache=True)
def _round_values(s, b, n, totals, left, norm, sigma, out):
    """Each seat's value of game ``b``'s finished round (see the module docstring): its relative
    result when ``sigma`` is 0, else its chance of winning the game from the totals after the
    round with ``left`` rounds to go, plus a twentieth of the relative result."""
    pts = s.round_scores[b, 0]
    total = 0
    for p in range(n):
        total += pts[p]
    for p in range(n):
        out[p] = ((total - pts[p]) / (n - 1) - pts[p]) / norm
    if sigma <= 0.0 and left > 0:
        return
    if left == 0:  # the game ends with this round: the share of the win
        best = totals[0] + pts[0]
        for p in range(1, n):
            best = min(best, totals[p] + pts[p])
        winners = 0
        for p in range(n):
            if totals[p] + pts[p] == best:
                winners += 1
        for p in range(n):
            share = 1.0 / winners if totals[p] + pts[p] == best else 0.0
            out[p] = share + 0.05 * out[p]
        return
    spread = sigma * math.sqrt(left) * math.sqrt(2.0)
    for p in range(n):
        chance = 1.0
        for q in range(n):
            if q != p:
                lead = (totals[q] + pts[q]) - (totals[p] + pts[p])
                chance *= 0.5 * (1.0 + math.erf(lead / spread))
        out[p] = chance + 0.05 * out[p]


@njit(cache=True)
def _pimc(tmpl, s, c, o, actions, worlds, sums, counts, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken,
          kind, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w, totals, left, norm, sigma, vals):
    """``worlds`` sampled worlds; in each, every action of ``actions`` played and rolled out.
    Returns the decisions taken in the rollouts."""
    steps = 0
    for _ in range(worlds):
        _copy_game(tmpl, 0, s, 0)
        _deal_hidden(s, 0, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken)
        for i in range(actions.shape[0]):
            _copy_game(s, 0, s, 1)
            apply_action(1, actions[i], s, c)
            steps += 1 + _rollout(s, c, o, 1, kind, rs, obs, plays, scores, h_off, tile_values, cost, action_tile,
                                  match, expose, w)
            _round_values(s, 1, c.n, totals, left, norm, sigma, vals)
            sums[i] += vals[0]
            counts[i] += 1
    return steps


@njit(cache=True)
def _ismcts(tmpl, s, c, o, iterations, tree_parent, tree_action, tree_player, tree_child, tree_sibling, tree_visits,
            tree_avail, tree_value, meta, cexp, child_of, untried, path, pool, sizes, bone_n, forbid, order, keep, rs,
            perm, taken, kind, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w, totals,
            left, norm, sigma, vals):
    """``iterations`` SO-ISMCTS iterations on the tree (node 0 the root; ``meta[0]`` nodes in use,
    ``meta[1]`` counts the decisions taken in the tree and the rollouts). Returns how many ran
    (fewer when the tree is full)."""
    num_actions = child_of.shape[0]
    capacity = tree_parent.shape[0]
    done = 0
    for _ in range(iterations):
        if meta[0] >= capacity:
            break
        _copy_game(tmpl, 0, s, 0)
        _deal_hidden(s, 0, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken)
        node = 0
        depth = 0
        while s.rnd[0] == 0 and depth < path.shape[0]:
            p = s.cur[0]
            ch = tree_child[node]
            while ch >= 0:
                child_of[tree_action[ch]] = ch
                ch = tree_sibling[ch]
            n_untried = 0
            for a in range(num_actions):
                if s.legal[0, a] and child_of[a] < 0:
                    untried[n_untried] = a
                    n_untried += 1
            if n_untried > 0 and meta[0] < capacity:
                for a in range(num_actions):  # the tried ones were available too
                    if s.legal[0, a] and child_of[a] >= 0:
                        tree_avail[child_of[a]] += 1.0
                a = untried[_randint(rs, n_untried)]
                new = meta[0]
                meta[0] += 1
                tree_parent[new] = node
                tree_action[new] = a
                tree_player[new] = p
                tree_child[new] = -1
                tree_sibling[new] = tree_child[node]
                tree_child[node] = new
                tree_visits[new] = 0.0
                tree_avail[new] = 1.0
                tree_value[new] = 0.0
                chosen = new
            else:
                chosen = -1
                best = -1e300
                for a in range(num_actions):
                    if s.legal[0, a]:
                        ch = child_of[a]
                        if ch < 0:  # the tree is full: no node for it
                            continue
                        tree_avail[ch] += 1.0
                        v = tree_value[ch] / tree_visits[ch] + cexp * math.sqrt(math.log(tree_avail[ch]) / tree_visits[ch])
                        if v > best:
                            best = v
                            chosen = ch
            ch = tree_child[node]
            while ch >= 0:
                child_of[tree_action[ch]] = -1
                ch = tree_sibling[ch]
            if chosen < 0:
                break
            apply_action(0, tree_action[chosen], s, c)
            meta[1] += 1
            path[depth] = chosen
            depth += 1
            node = chosen
            if n_untried > 0:
                break
        if s.rnd[0] == 0:
            meta[1] += _rollout(s, c, o, 0, kind, rs, obs, plays, scores, h_off, tile_values, cost, action_tile, match, expose, w)
        _round_values(s, 0, c.n, totals, left, norm, sigma, vals)
        for d in range(depth):
            nd = path[d]
            tree_visits[nd] += 1.0
            tree_value[nd] += vals[tree_player[nd]]
        tree_visits[0] += 1.0
        done += 1
    return done


@njit(cache=True)
def _prepare_worlds(tmpl, s, c, actions, worlds, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken):
    """Games ``w * L + i`` of ``s`` (``L`` actions): world ``w`` after action ``i``, for rollouts
    played in lockstep by a policy outside the compiled code."""
    num = actions.shape[0]
    for w in range(worlds):
        base = w * num
        _copy_game(tmpl, 0, s, base)
        _deal_hidden(s, base, pool, sizes, bone_n, forbid, order, keep, rs, perm, taken)
        for i in range(num - 1, -1, -1):  # the world's own game last: it is the others' source
            if i:
                _copy_game(s, base, s, base + i)
            apply_action(base + i, actions[i], s, c)


@njit(cache=True)
def _observe_rows(s, c, o, rows, obs, mask):
    for j in range(rows.shape[0]):
        b = rows[j]
        write_observation(b, s, c, o, obs)
        for a in range(mask.shape[1]):
            mask[b, a] = s.legal[b, a]


@njit(cache=True)
def _apply_rows(s, c, rows, actions):
    for j in range(rows.shape[0]):
        apply_action(rows[j], actions[j], s, c)


@njit(cache=True)
def _score_rows(s, c, count, num, sums, counts, totals, left, norm, sigma, vals):
    for b in range(count):
        _round_values(s, b, c.n, totals, left, norm, sigma, vals)
        sums[b % num] += vals[0]
        counts[b % num] += 1


# ---------------------------------------------------------------------------------- the agent

class SearchAgent:
    """PIMC or SO-ISMCTS over worlds sampled from the observation (see the module docstring).

    ``act`` reads only the observation dict. After each searched decision, ``last_search`` holds
    ``{"simulations": worlds (pimc) or iterations (ismcts), "rollout_decisions": decisions played in
    the worlds, "seconds": time spent, "actions": the legal action ids, "scores": per action, its mean
    value over the worlds (pimc) or its root visits (ismcts)}``: the targets of expert iteration
    (:mod:`training.expert`).
    """

    def __init__(self, config: RulesConfig, algo: str = "pimc", ms: float = 40.0, sims: int = 0,
                 rollout: str = "heuristic", value: str = "points", infer: bool = True, keep: float = 0.0, c: float = 0.7,
                 seed: int | None = None, name: str | None = None) -> None:
        params = parse_search_spec("search")
        params.update(algo=algo, ms=ms, sims=sims, rollout=rollout, value=value, infer=infer, keep=keep, c=c,
                      seed=seed)
        spec = "search:" + ":".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in params.items()
                                    if v is not None)
        self.params = parse_search_spec(spec)  # the same checks as a spec string
        self.config = config
        self.name = name or "search"
        self.algo, self.ms, self.sims = algo, float(ms), int(sims)
        self.rollout, self.value = rollout, value
        self.infer, self.keep, self.c = bool(infer), float(keep), float(c)
        self._seed_rng = np.random.default_rng(seed) if seed is not None else None
        self.encoder = ObservationEncoder(config)
        self._sl = self.encoder.slices
        n, t = config.num_players, config.num_tiles
        self._n, self._t, self._k = n, t, config.max_pip + 1
        # a world is round 0 of the longest game of these rules: its round's end starts round 1 (the
        # rollout stops there), and even rounds that end before any decision (1-tile hands) do not
        # reach the game's end, whose reset would clear round 0's scores
        self._consts = make_consts(RulesConfig(**{**config.to_dict(), "rounds": config.max_pip + 1}), "points", 1.0)
        self._offsets = observation_offsets(self.encoder)
        self._policy = None
        if rollout in ROLLOUTS:
            self._kind = ROLLOUTS.index(rollout)
        else:
            import agents

            self._kind = _GREEDY  # unused: the policy plays outside the compiled code
            self._policy = agents.load(rollout, config)
            self._batch = None
        heuristic = HeuristicAgent(config)
        self._heur = heuristic.kernel_tables
        self._lo = np.array(heuristic.table.tile_low, dtype=np.int64)
        self._hi = np.array(heuristic.table.tile_high, dtype=np.int64)
        self._norm = float(config.max_pip * config.hand_size)
        self._sigma = SIGMA_PER_HAND_PIP * self._norm
        self._tmpl = self._world_state(1)
        self._work = self._world_state(2)
        self._obs = np.zeros((2, self.encoder.size), np.float32)
        self._plays = np.zeros(self._k * self._k, np.int64)
        self._scores = np.zeros(self._k * self._k, np.float64)
        self._perm = np.zeros(t, np.int64)
        self._taken = np.zeros(t, np.uint8)
        self._vals = np.zeros(n, np.float64)
        self._rs = np.ones(1, np.uint64)
        na = config.num_actions
        if algo == "ismcts":
            size = _TREE_NODES
            self._tree = (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64),
                          np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.float64),
                          np.zeros(size, np.float64), np.zeros(size, np.float64))
            self._child_of = np.full(na, -1, np.int64)
            self._untried = np.zeros(na, np.int64)
            self._path = np.zeros(_MAX_DEPTH, np.int64)
            self._meta = np.zeros(2, np.int64)
        self.last_search: dict[str, Any] = {}

    def _world_state(self, games: int):
        """Kernel state for ``games`` worlds; the later rounds' deals are placeholders (a search
        stops at the end of its round, so they are never played)."""
        state = new_state(self._consts, games)
        state.deals[:] = np.arange(self._t)
        state.next_deals[:] = np.arange(self._t)
        return state

    @classmethod
    def from_spec(cls, spec: str, config: RulesConfig) -> "SearchAgent":
        params = parse_search_spec(spec)
        return cls(config, name=spec, **params)

    # -- what the observation says -------------------------------------------------------------

    def _world_template(self, obs: np.ndarray, mask: np.ndarray) -> tuple:
        """The public state as game 0 of the template (the observer is seat 0, then clockwise),
        plus the sampler's inputs: the hidden pool, the hand sizes, the boneyard size, the
        forbidden tiles and the order in which seats are dealt."""
        sl, n, t, k = self._sl, self._n, self._t, self._k
        s = self._tmpl
        hand = obs[sl["hand"]] > 0
        layout = obs[sl["layout"]] > 0
        s.hand[0] = 0
        s.hand[0, 0] = hand
        sizes = np.rint(obs[sl["hand_sizes"]]).astype(np.int64)
        s.count[0] = sizes
        bone_n = int(round(float(obs[sl["boneyard"]][0])))
        s.bone_pos[0] = t - bone_n
        s.played[0] = layout
        s.ends[0] = np.rint(obs[sl["open_ends"]]).astype(np.int64)
        pend = int(round(float(obs[sl["pending_count"]][0])))
        s.pend[0] = pend
        s.pend_val[0] = int(np.argmax(obs[sl["pending_value"]])) if pend else 0
        s.pend_role[0] = int(Role.ARM) if obs[sl["pending_kind"]][0] > 0 else int(Role.TOE)
        s.cur[0] = 0
        drawn = obs[sl["drawn"]]
        s.drawn[0] = int(np.argmax(drawn)) if drawn.any() else -1
        unmatched = obs[sl["unmatched"]].reshape(n - 1, k) > 0
        bits = (unmatched * (1 << np.arange(k))).sum(axis=1)
        s.unmatched[0, 0] = 0
        s.unmatched[0, 1:] = bits
        s.legal[0] = mask != 0
        pool = np.flatnonzero(~hand & ~layout).astype(np.int64)
        if pool.size != sizes[1:].sum() + bone_n:
            raise ValueError(f"the observation's hidden tiles ({pool.size}) do not match the opponents' hands and the "
                             f"boneyard ({sizes[1:].sum()} + {bone_n}): is it an observation of {self.config}?")
        forbid = np.zeros((n, t), np.uint8)
        if self.infer:
            for i in range(1, n):
                values = np.flatnonzero(unmatched[i - 1])
                if values.size:
                    forbid[i] = np.isin(self._lo, values) | np.isin(self._hi, values)
        constrained = forbid[:, pool].sum(axis=1)
        order = np.array(sorted(range(1, n), key=lambda p: -int(constrained[p])), dtype=np.int64)
        totals = np.rint(obs[sl["scores"]] * 100.0).astype(np.int64)
        left = int(round(float(obs[sl["round"]][1])))  # rounds after this one
        return pool, sizes, bone_n, forbid, order, totals, left

    # -- acting --------------------------------------------------------------------------------

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        if legal.size == 1:  # forced: no search
            self.last_search = {"simulations": 0, "rollout_decisions": 0, "seconds": 0.0,
                                "actions": legal.astype(np.int64), "scores": np.zeros(legal.size)}
            return int(legal[0])
        start = time.perf_counter()
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        world = self._world_template(obs, mask)
        source = self._seed_rng if self._seed_rng is not None else rng
        self._rs[0] = np.uint64(source.integers(1, 2**63))
        if self._policy is not None:
            action, sims, steps, scores = self._search_pimc_batched(legal, world, start)
        elif self.algo == "pimc":
            action, sims, steps, scores = self._search_pimc(legal, world, start)
        else:
            action, sims, steps, scores = self._search_ismcts(legal, world, start)
        self.last_search = {"simulations": sims, "rollout_decisions": steps, "seconds": time.perf_counter() - start,
                            "actions": legal.astype(np.int64), "scores": scores}
        return int(action)

    def _budget(self, start: float, done: int, per_unit: float) -> int:
        """How many more worlds/iterations to run in the next compiled call (0: stop). Calls last
        about 4 ms, so the clock is read often enough; a unit that would overrun the budget is not
        started."""
        cap = self.sims - done if self.sims else 1 << 30
        if cap <= 0:
            return 0
        if self.ms <= 0:
            return cap
        left = self.ms / 1000.0 - (time.perf_counter() - start)
        if left <= per_unit:
            return 0
        if per_unit <= 0:
            return 1
        return max(1, min(cap, int(min(left, 0.004) / per_unit)))

    def _run_chunks(self, start: float, run, max_chunk: int = 1 << 30) -> tuple[int, int]:
        """Call ``run(chunk) -> (units run, rollout decisions)`` with at most ``max_chunk`` units
        until the budget (time and/or ``sims``) is spent or a call runs fewer units than asked (a
        full tree); the first call runs one unit to time it. Returns the totals."""
        done, per, steps = 0, 0.0, 0
        while True:
            chunk = min(self._budget(start, done, per), max_chunk) if done else 1
            if chunk <= 0:
                break
            t0 = time.perf_counter()
            ran, taken = run(chunk)
            per = (time.perf_counter() - t0) / max(ran, 1)
            done += ran
            steps += taken
            if ran < chunk or (self.sims and done >= self.sims):
                break
        return done, steps

    def _common(self, world: tuple) -> tuple:
        pool, sizes, bone_n, forbid, order, totals, left = world
        return (pool, sizes, bone_n, forbid, order, self.keep if self.infer else 0.0, self._rs, self._perm,
                self._taken, self._kind, self._obs, self._plays, self._scores, *self._heur, totals, left,
                self._norm, self._sigma if self.value == "win" else 0.0, self._vals)

    def _search_pimc(self, legal: np.ndarray, world: tuple, start: float) -> tuple[int, int, int]:
        actions = legal.astype(np.int64)
        sums = np.zeros(actions.size)
        counts = np.zeros(actions.size, np.int64)
        args = self._common(world)

        def run(chunk: int) -> tuple[int, int]:
            return chunk, _pimc(self._tmpl, self._work, self._consts, self._offsets, actions, chunk, sums, counts, *args)

        done, steps = self._run_chunks(start, run)
        means = sums / np.maximum(counts, 1)
        return int(actions[int(np.argmax(means))]), done, steps, means

    def _search_pimc_batched(self, legal: np.ndarray, world: tuple, start: float) -> tuple[int, int, int]:
        """PIMC with a checkpoint's network as the rollout policy: chunks of worlds, each world's
        rollouts (one per action) stepped in lockstep with one forward pass per step."""
        from agents.base import act_batch

        actions = legal.astype(np.int64)
        num = actions.size
        sums = np.zeros(num)
        counts = np.zeros(num, np.int64)
        pool, sizes, bone_n, forbid, order, totals, left = world
        keep = self.keep if self.infer else 0.0
        sigma = self._sigma if self.value == "win" else 0.0
        policy_rng = np.random.default_rng(int(self._rs[0]))

        def run(chunk: int) -> tuple[int, int]:
            slots = chunk * num
            if self._batch is None or self._batch[0].hand.shape[0] < slots:
                state = self._world_state(max(slots, 64))
                self._batch = (state, np.zeros((state.hand.shape[0], self.encoder.size), np.float32),
                               np.zeros((state.hand.shape[0], self.config.num_actions), np.int8))
            state, obs, mask = self._batch
            _prepare_worlds(self._tmpl, state, self._consts, actions, chunk, pool, sizes, bone_n, forbid, order, keep,
                            self._rs, self._perm, self._taken)
            steps = slots
            while True:
                rows = np.flatnonzero(state.rnd[:slots] == 0)
                if not rows.size:
                    break
                _observe_rows(state, self._consts, self._offsets, rows, obs, mask)
                chosen = np.asarray(act_batch(self._policy, obs[rows], mask[rows], policy_rng), dtype=np.int64)
                _apply_rows(state, self._consts, rows, chosen)
                steps += rows.size
            _score_rows(state, self._consts, slots, num, sums, counts, totals, left, self._norm, sigma, self._vals)
            return chunk, steps

        done, steps = self._run_chunks(start, run, max_chunk=max(1, 1024 // num))
        means = sums / np.maximum(counts, 1)
        return int(actions[int(np.argmax(means))]), done, steps, means

    def _search_ismcts(self, legal: np.ndarray, world: tuple, start: float) -> tuple[int, int, int]:
        tree = self._tree
        self._meta[0], self._meta[1] = 1, 0
        tree[0][0], tree[1][0], tree[2][0], tree[3][0], tree[4][0] = -1, -1, -1, -1, -1
        tree[5][0] = tree[6][0] = tree[7][0] = 0.0
        args = self._common(world)

        def run(chunk: int) -> tuple[int, int]:
            before = int(self._meta[1])
            ran = _ismcts(self._tmpl, self._work, self._consts, self._offsets, chunk, *tree, self._meta, self.c,
                          self._child_of, self._untried, self._path, *args)
            return ran, int(self._meta[1]) - before

        done, steps = self._run_chunks(start, run)
        parent, action, visits = tree[0], tree[1], tree[5]
        used = int(self._meta[0])
        root_children = np.flatnonzero(parent[1:used] == 0) + 1
        best = root_children[np.argmax(visits[root_children])] if root_children.size else -1
        counts = np.zeros(legal.size)
        for child in root_children:
            counts[np.searchsorted(legal, action[child])] = visits[child]
        return (int(action[best]) if best >= 0 else int(legal[0])), done, steps, counts
