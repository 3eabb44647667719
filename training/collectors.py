"""Rollout collection for the PPO trainer, one collector per backend.

Both play ``num_envs`` games in lockstep, seat the policy and pool opponents by
:meth:`training.pool.OpponentPool.draw_lineup`, ask ``policy(obs, mask) -> (actions, logp,
values)`` for every learner decision in one batch, and write the learner's transitions into a
:class:`training.trajectories.Trajectories`. Finished games against the pool are recorded in
``episode_wins`` / ``episode_points``.

- :class:`VectorCollector` (``backend: vector``, the default): the batched numba engine
  (:class:`cf_env.vector.VectorGame`); pool agents act in batches (:func:`agents.act_batch`).
- :class:`AecCollector` (``backend: aec``): one PettingZoo env per game, agents one at a time;
  slower, kept as the reference path.

``start()`` deals the first games (it draws from the generator, so the trainer calls it once its
warm start is done); ``collect()`` runs one rollout and returns ``(learner decisions, env decisions)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents import Agent, act_batch
from cf_env import RulesConfig, raw_env
from cf_env.engine.scoring import win_share
from cf_env.vector import VectorGame
from training.pool import LEARNER, OpponentPool
from training.trajectories import Trajectories

__all__ = ["AecCollector", "Policy", "VectorCollector"]

#: ``policy(obs, mask, hidden) -> (actions, logp, values)``; ``hidden`` is what a critic that reads
#: hidden tiles is given (the seat's unseen tiles, :meth:`cf_env.vector.VectorGame.hidden_tiles`), None when
#: the collector is not asked for it
Policy = Callable[[np.ndarray, np.ndarray, np.ndarray | None], tuple[np.ndarray, np.ndarray, np.ndarray]]


class VectorCollector:
    def __init__(self, rules: RulesConfig, num_envs: int, reward: str, points_scale: float, pool: OpponentPool,
                 rng: np.random.Generator, hidden: bool = False) -> None:
        self.rules, self.pool, self.rng, self.hidden = rules, pool, rng, hidden
        self.vg = VectorGame(rules, num_games=num_envs, reward=reward, points_scale=points_scale, seed=rng)
        # seat_code[b, s]: 0 for the learner, else the code of a pool agent in coded_agents
        self.seat_code = np.zeros((num_envs, rules.num_players), dtype=np.int64)
        self.spec_codes: dict[str, int] = {}
        self.coded_agents: dict[int, Agent] = {}
        self.episode_wins: list[float] = []
        self.episode_points: list[int] = []
        #: mark each learner seat's last decision of a round in the buffer (Trajectories.end_round;
        #: DMC's return_horizon: round); off, the rollout loop does not look for round ends
        self.mark_rounds = False

    def start(self) -> None:
        self.obs, self.mask, self.seat = self.vg.reset()
        for b in range(self.vg.num_games):
            self._seat_lineup(b)

    def _seat_lineup(self, b: int) -> None:
        """Choose who sits where in game ``b`` (it has just been dealt)."""
        for s, spec in enumerate(self.pool.draw_lineup(self.rng)):
            if spec is LEARNER:
                self.seat_code[b, s] = 0
                continue
            if spec not in self.spec_codes:
                self.spec_codes[spec] = code = 1 + max(self.coded_agents, default=0)
                self.coded_agents[code] = self.pool.agent(spec)
            self.seat_code[b, s] = self.spec_codes[spec]

    def forget_unseated(self) -> None:
        """Let go of snapshots that left the pool once no game seats them any more."""
        seated = set(np.unique(self.seat_code).tolist())
        for spec, code in list(self.spec_codes.items()):
            if spec not in self.pool.specs and code not in seated:
                del self.spec_codes[spec], self.coded_agents[code]

    def collect(self, policy: Policy, buffer: Trajectories, rollout_steps: int) -> tuple[int, int]:
        """One rollout: every step is one decision in every game; the policy decides for learner
        seats, pool agents (batched) for the others."""
        vg = self.vg
        games = np.arange(vg.num_games)
        learner_seat = self.seat_code == 0  # (B, n)
        learner_steps = env_steps = 0
        for _ in range(rollout_steps):
            obs, mask, seat = self.obs, self.mask, self.seat
            decider = self.seat_code[games, seat]
            actions = np.empty(vg.num_games, dtype=np.int64)
            for code in np.unique(decider).tolist():
                if code:
                    rows = np.flatnonzero(decider == code)
                    actions[rows] = act_batch(self.coded_agents[code], obs[rows], mask[rows], self.rng)
            learner_rows = np.flatnonzero(decider == 0)
            if learner_rows.size:
                l_obs = obs[learner_rows]
                l_mask = mask[learner_rows].astype(bool)
                l_hidden = vg.hidden_tiles(learner_rows, seat[learner_rows]) if self.hidden else None
                acts, logps, values = policy(l_obs, l_mask, l_hidden)
                actions[learner_rows] = acts
                buffer.open(learner_rows, seat[learner_rows], l_obs, l_mask, acts, logps, values, l_hidden)
            rounds = vg.state.round_index.copy() if self.mark_rounds else None
            obs, mask, seat, rewards, done = vg.step(actions)
            self.obs, self.mask, self.seat = obs, mask, seat
            learner_steps += int(learner_rows.size)
            env_steps += vg.num_games
            credited = learner_seat & (rewards != 0)
            if credited.any():
                envs, seats = np.nonzero(credited)
                buffer.credit(envs, seats, rewards[envs, seats].astype(np.float32))
            if rounds is not None:
                ended = learner_seat & ((vg.state.round_index != rounds) | done)[:, None]  # a round ended (or the game)
                if ended.any():
                    buffer.end_round(*np.nonzero(ended))
            for b in np.flatnonzero(done).tolist():
                seats = np.flatnonzero(learner_seat[b])
                buffer.terminate(np.full(len(seats), b), seats)
                if len(seats) < self.rules.num_players:  # a game against the pool: record how it went
                    s_ = int(seats[0])
                    wins = vg.final_winners[b]
                    self.episode_wins.append(win_share(bool(wins[s_]), int(wins.sum())))
                    self.episode_points.append(int(vg.final_totals[b, s_]))
                self._seat_lineup(b)
                learner_seat[b] = self.seat_code[b] == 0
        return learner_steps, env_steps


class AecCollector:
    def __init__(self, rules: RulesConfig, num_envs: int, reward: str, points_scale: float, pool: OpponentPool,
                 rng: np.random.Generator, hidden: bool = False) -> None:
        self.rules, self.pool, self.rng, self.hidden = rules, pool, rng, hidden
        self.envs = [raw_env(config=rules, reward=reward, points_scale=points_scale) for _ in range(num_envs)]
        self.seats: list[list] = [[] for _ in range(num_envs)]  # per game: LEARNER or the agent at each seat
        self.episode_wins: list[float] = []
        self.episode_points: list[int] = []
        self._buffer: Trajectories | None = None
        self._env_steps = 0

    def start(self) -> None:
        for i in range(len(self.envs)):
            self._new_game(i)

    def forget_unseated(self) -> None:
        """Nothing to let go of: seated agents are held by the games that seat them."""

    def _new_game(self, i: int) -> None:
        """Deal a new game in env ``i`` and choose who sits where."""
        self.envs[i].reset(seed=int(self.rng.integers(2**63)))
        self.seats[i] = [LEARNER if spec is LEARNER else self.pool.agent(spec) for spec in self.pool.draw_lineup(self.rng)]
        self._advance(i)

    def _credit_rewards(self, i: int) -> None:
        if self._buffer is None:  # opponents moving before the first rollout: no open transition yet
            return
        env = self.envs[i]
        seats = np.array([s for s, who in enumerate(self.seats[i]) if who is LEARNER])
        rewards = np.array([env.rewards.get(env.possible_agents[s], 0.0) for s in seats], dtype=np.float32)
        self._buffer.credit(np.full(len(seats), i), seats, rewards)

    def _advance(self, i: int) -> None:
        """Let opponents move until a learner seat must decide; start a new game at the end."""
        env = self.envs[i]
        while True:
            if env.game_over:
                self._finish_game(i)
                return
            who = self.seats[i][env.agent_name_mapping[env.agent_selection]]
            if who is LEARNER:
                return
            obs = env.observe(env.agent_selection)
            env.step(who.act(obs, self.rng))
            self._env_steps += 1
            self._credit_rewards(i)

    def _finish_game(self, i: int) -> None:
        env = self.envs[i]
        if self._buffer is not None:
            for seat, who in enumerate(self.seats[i]):
                if who is LEARNER:
                    self._buffer.terminate(np.array([i]), np.array([seat]))
        if any(who is not LEARNER for who in self.seats[i]):
            seat = next(s for s, who in enumerate(self.seats[i]) if who is LEARNER)
            self.episode_wins.append(win_share(seat in env.winners, len(env.winners)))
            self.episode_points.append(env.totals[seat])
        self._new_game(i)

    def collect(self, policy: Policy, buffer: Trajectories, rollout_steps: int) -> tuple[int, int]:
        """One rollout: ``rollout_steps`` batched policy decisions over every env."""
        self._buffer = buffer
        learner_steps = 0
        for _ in range(rollout_steps):
            obs_list, mask_list = [], []
            for env in self.envs:
                o = env.observe(env.agent_selection)
                obs_list.append(o["observation"])
                mask_list.append(o["action_mask"])
            obs = np.stack(obs_list)
            mask = np.stack(mask_list).astype(bool)
            seats = np.array([env.agent_name_mapping[env.agent_selection] for env in self.envs])
            unseen = np.stack([env.hidden_tiles(env.agent_selection) for env in self.envs]) if self.hidden else None
            actions, logps, values = policy(obs, mask, unseen)
            buffer.open(np.arange(len(self.envs)), seats, obs, mask, actions, logps, values, unseen)
            for i, env in enumerate(self.envs):
                env.step(int(actions[i]))
                self._env_steps += 1
                learner_steps += 1
                self._credit_rewards(i)
                self._advance(i)
        env_steps, self._env_steps = self._env_steps, 0
        return learner_steps, env_steps
