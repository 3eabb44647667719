"""Learner transitions for turn-based PPO: one trajectory per (game, seat), GAE along each.

Each learner seat of each game is its own trajectory. A transition is the seat's decision; every
reward that reaches the seat before its next decision (round ends caused by other players, the
game's end) is added to that transition, and the game's end closes every seat's last transition
as terminal. GAE runs along each seat's own transitions. A transition whose next decision has not
come yet when a rollout ends waits for the next rollout (:meth:`Trajectories.carry_over`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

__all__ = ["Trajectories"]


@dataclass
class Trajectories:
    """Learner transitions of one rollout, plus those still waiting for their next decision.

    Rows are appended in decision order into growing arrays; ``pending[env, seat]`` is the row of
    that seat's open transition (-1 when none). Every method takes arrays of ``(env, seat)`` keys,
    one row per key; each key appears at most once per call.
    """

    num_envs: int
    num_players: int
    obs_dim: int
    num_actions: int
    hidden_dim: int = 0  #: width of the ``hidden`` column (the input of a critic that reads hidden tiles; 0: none)
    size: int = 0
    # the columns (_COLUMNS), allocated by _allocate; row i is one transition
    pending: np.ndarray = field(init=False, repr=False)
    obs: np.ndarray = field(init=False, repr=False)
    hidden: np.ndarray = field(init=False, repr=False)
    mask: np.ndarray = field(init=False, repr=False)
    action: np.ndarray = field(init=False, repr=False)
    logp: np.ndarray = field(init=False, repr=False)
    value: np.ndarray = field(init=False, repr=False)
    reward: np.ndarray = field(init=False, repr=False)
    done: np.ndarray = field(init=False, repr=False)
    next_value: np.ndarray = field(init=False, repr=False)
    next_index: np.ndarray = field(init=False, repr=False)
    closed: np.ndarray = field(init=False, repr=False)
    round_end: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.pending = np.full((self.num_envs, self.num_players), -1, dtype=np.int64)
        self._allocate(1024)

    def _allocate(self, capacity: int) -> None:
        """(Re)allocate every column for ``capacity`` rows, keeping the filled ones; rows past
        ``size`` always hold the column's fill value."""
        widths = {"obs": self.obs_dim, "hidden": self.hidden_dim, "mask": self.num_actions}
        for name, (dtype, fill) in _COLUMNS.items():
            column = np.full((capacity, *([widths[name]] if name in widths else [])), fill, dtype=dtype)
            if hasattr(self, name):
                column[: self.size] = getattr(self, name)[: self.size]
            setattr(self, name, column)

    def open(self, envs: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray, action: np.ndarray,
             logp: np.ndarray, value: np.ndarray, hidden: np.ndarray | None = None) -> None:
        """Start the transitions of these keys' new decisions, closing each key's previous one
        (``hidden``: what a critic that reads hidden tiles reads beside ``obs``, when ``hidden_dim`` > 0)."""
        k = len(envs)
        if self.size + k > len(self.obs):
            self._allocate(max(2 * len(self.obs), self.size + k))
        rows = np.arange(self.size, self.size + k)
        prev = self.pending[envs, seats]
        had = prev >= 0
        self.next_value[prev[had]] = value[had]
        self.next_index[prev[had]] = rows[had]
        self.closed[prev[had]] = True
        end = self.size + k
        self.obs[self.size:end], self.mask[self.size:end], self.action[self.size:end] = obs, mask, action
        self.logp[self.size:end], self.value[self.size:end] = logp, value
        if self.hidden_dim:
            self.hidden[self.size:end] = hidden
        self.pending[envs, seats] = rows
        self.size = end

    def credit(self, envs: np.ndarray, seats: np.ndarray, rewards: np.ndarray) -> None:
        """Add rewards to these keys' open transitions (a key with none has nothing to credit)."""
        rows = self.pending[envs, seats]
        has = rows >= 0
        self.reward[rows[has]] += rewards[has]

    def end_round(self, envs: np.ndarray, seats: np.ndarray) -> None:
        """A round ended: these keys' open transitions are their seats' last decisions of it (a
        return with ``horizon="round"`` stops after them)."""
        rows = self.pending[envs, seats]
        self.round_end[rows[rows >= 0]] = True

    def terminate(self, envs: np.ndarray, seats: np.ndarray) -> None:
        """The game ended: these keys' open transitions are terminal."""
        rows = self.pending[envs, seats]
        rows = rows[rows >= 0]
        self.done[rows] = True
        self.closed[rows] = True
        self.pending[envs, seats] = -1

    def gae(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices of the closed transitions, their advantages and returns."""
        n = self.size
        adv = _gae(self.reward[:n], self.value[:n], self.next_value[:n], self.next_index[:n], self.done[:n],
                   self.closed[:n], gamma, lam)
        idx = np.flatnonzero(self.closed[:n])
        return idx, adv[idx], adv[idx] + self.value[idx]

    def monte_carlo(self, gamma: float, horizon: str = "game") -> tuple[np.ndarray, np.ndarray]:
        """Indices of the transitions whose seat's game (``horizon="round"``: round, marked by
        :meth:`end_round`) has ended in this buffer, and their Monte-Carlo returns: the rewards to
        that end along the seat's own transitions, ``gamma`` discounted (Deep Monte-Carlo's
        targets; no value is bootstrapped)."""
        returns, complete = self._returns(gamma, horizon)
        idx = np.flatnonzero(complete)
        return idx, returns[idx]

    def _returns(self, gamma: float, horizon: str) -> tuple[np.ndarray, np.ndarray]:
        if horizon not in ("game", "round"):
            raise ValueError(f"horizon must be 'game' or 'round', got {horizon!r}")
        n = self.size
        ends = self.done[:n] | self.round_end[:n] if horizon == "round" else self.done[:n]
        return _returns_to_end(self.reward[:n], self.next_index[:n], ends, self.closed[:n], gamma)

    def carry_over_unfinished(self, horizon: str = "game") -> Trajectories:
        """A new buffer holding every transition whose game (or round: ``horizon``) has not ended
        yet, each seat's chain whole (what :meth:`monte_carlo` needs to reach the end in a later
        rollout)."""
        n = self.size
        _, complete = self._returns(1.0, horizon)
        keep = np.flatnonzero(~complete)
        new = Trajectories(self.num_envs, self.num_players, self.obs_dim, self.num_actions, self.hidden_dim)
        new._allocate(max(1024, 2 * len(keep)))
        where = np.full(n + 1, -1, np.int64)  # old row -> new row (index n: "none")
        where[keep] = np.arange(len(keep))
        for name in _COLUMNS:
            getattr(new, name)[: len(keep)] = getattr(self, name)[keep]
        nxt = new.next_index[: len(keep)]
        nxt[:] = where[np.where(nxt >= 0, nxt, n)]  # a kept transition's next one is kept too
        new.size = len(keep)
        new.pending = np.where(self.pending >= 0, where[np.where(self.pending >= 0, self.pending, n)], -1)
        return new

    def carry_over(self) -> Trajectories:
        """A new buffer holding only the transitions still open."""
        new = Trajectories(self.num_envs, self.num_players, self.obs_dim, self.num_actions, self.hidden_dim)
        envs, seats = np.nonzero(self.pending >= 0)
        rows = self.pending[envs, seats]
        new.open(envs, seats, self.obs[rows], self.mask[rows], self.action[rows], self.logp[rows], self.value[rows],
                 self.hidden[rows])
        new.reward[: len(rows)] = self.reward[rows]
        return new


# column -> (dtype, fill); next_index is the same seat's next transition, closed = next value known (or terminal)
_COLUMNS = {"obs": (np.float32, 0.0), "hidden": (np.float32, 0.0),
            "mask": (bool, False), "action": (np.int64, 0), "logp": (np.float32, 0.0),
            "value": (np.float32, 0.0), "reward": (np.float32, 0.0), "done": (bool, False),
            "next_value": (np.float32, 0.0), "next_index": (np.int64, -1), "closed": (bool, False),
            "round_end": (bool, False)}


@numba.njit(cache=True)
def _gae(reward, value, next_value, next_index, done, closed, gamma, lam):  # pragma: no cover - compiled
    """Advantages along each seat's own transitions (the next one is ``next_index``), newest first."""
    n = reward.shape[0]
    adv = np.zeros(n, dtype=np.float32)
    for i in range(n - 1, -1, -1):
        if not closed[i]:
            continue
        nonterminal = 0.0 if done[i] else 1.0
        delta = reward[i] + gamma * next_value[i] * nonterminal - value[i]
        j = next_index[i]
        following = adv[j] if j >= 0 and closed[j] else 0.0
        adv[i] = delta + gamma * lam * nonterminal * following
    return adv


@numba.njit(cache=True)
def _returns_to_end(reward, next_index, done, closed, gamma):  # pragma: no cover - compiled
    """Each transition's discounted return to its end (``done``: the game's, or also the
    round's), and whether that end is in the buffer (the chain of next transitions reaches an
    ended one), newest first."""
    n = reward.shape[0]
    returns = np.zeros(n, dtype=np.float32)
    complete = np.zeros(n, dtype=np.bool_)
    for i in range(n - 1, -1, -1):
        if done[i]:  # an end (a round's last decision may still be open: its return is whole all the same)
            returns[i] = reward[i]
            complete[i] = True
            continue
        if not closed[i]:
            continue
        j = next_index[i]
        if j >= 0 and complete[j]:
            returns[i] = reward[i] + gamma * returns[j]
            complete[i] = True
    return returns, complete
