"""Self-play PPO for Chicken Foot with action masking and an opponent pool.

Reads top to bottom like CleanRL's ``ppo.py`` (plus masking and turn-based credit):

1. config and seeding; a TensorBoard writer with the config as a table;
2. (optional) behaviour cloning of the heuristic agent as a warm start;
3. the loop: collect a rollout over ``num_envs`` games in lockstep, compute GAE per agent
   stream, run the PPO epochs, log, evaluate, snapshot into the pool, checkpoint.

Turn-based credit: each learner seat of each game is its own trajectory. A transition is the
seat's decision; every reward that reaches the seat before its next decision (round ends caused by
other players, the game's end) is added to that transition, and the game's end closes every
seat's last transition as terminal. GAE runs along each seat's own transitions. A transition
whose next decision has not come yet when a rollout ends waits for the next rollout.

Usage: ``chickenfoot train --config configs/default.yaml [--resume]``.
"""

from __future__ import annotations

import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from torch import nn

from agents import Agent, act_batch, load, zoo_path
from agents.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, observation_scale
from cf_env import ObservationEncoder, RulesConfig, raw_env
from cf_env.vector import VectorGame
from training.config import PPOConfig, TrainConfigError
from training.evaluate import evaluate

__all__ = ["RunExistsError", "Trainer", "train"]

LEARNER = None  # marks a seat played by the policy being trained


# ------------------------------------------------------------------------------ trajectories

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
    size: int = 0

    def __post_init__(self) -> None:
        self.pending = np.full((self.num_envs, self.num_players), -1, dtype=np.int64)
        self._allocate(1024)

    def _allocate(self, capacity: int) -> None:
        """(Re)allocate every column for ``capacity`` rows, keeping the filled ones; rows past
        ``size`` always hold the column's fill value."""
        widths = {"obs": self.obs_dim, "mask": self.num_actions}
        for name, (dtype, fill) in _COLUMNS.items():
            column = np.full((capacity, *([widths[name]] if name in widths else [])), fill, dtype=dtype)
            if hasattr(self, name):
                column[: self.size] = getattr(self, name)[: self.size]
            setattr(self, name, column)

    def open(self, envs: np.ndarray, seats: np.ndarray, obs: np.ndarray, mask: np.ndarray, action: np.ndarray,
             logp: np.ndarray, value: np.ndarray) -> None:
        """Start the transitions of these keys' new decisions, closing each key's previous one."""
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
        self.pending[envs, seats] = rows
        self.size = end

    def credit(self, envs: np.ndarray, seats: np.ndarray, rewards: np.ndarray) -> None:
        """Add rewards to these keys' open transitions (a key with none has nothing to credit)."""
        rows = self.pending[envs, seats]
        has = rows >= 0
        self.reward[rows[has]] += rewards[has]

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

    def carry_over(self) -> "Trajectories":
        """A new buffer holding only the transitions still open."""
        new = Trajectories(self.num_envs, self.num_players, self.obs_dim, self.num_actions)
        envs, seats = np.nonzero(self.pending >= 0)
        rows = self.pending[envs, seats]
        new.open(envs, seats, self.obs[rows], self.mask[rows], self.action[rows], self.logp[rows], self.value[rows])
        new.reward[: len(rows)] = self.reward[rows]
        return new


# column -> (dtype, fill); next_index is the same seat's next transition, closed = next value known (or terminal)
_COLUMNS = {"obs": (np.float32, 0.0), "mask": (bool, False), "action": (np.int64, 0), "logp": (np.float32, 0.0),
            "value": (np.float32, 0.0), "reward": (np.float32, 0.0), "done": (bool, False),
            "next_value": (np.float32, 0.0), "next_index": (np.int64, -1), "closed": (bool, False)}


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


# ------------------------------------------------------------------------------ the trainer

class RunExistsError(TrainConfigError):
    """The run folder already holds a run and neither resuming nor overwriting it was asked for."""


class Trainer:
    def __init__(self, cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> None:
        self.cfg = cfg
        self.progress = progress
        self.rules: RulesConfig = cfg.rules_config
        self.run_dir = cfg.run_dir
        self.ckpt_path = self.run_dir / "checkpoint.pt"
        _claim_run_dir(self.run_dir, resume, overwrite)
        # --- seeding: one numpy generator for games and opponents, torch seeded alongside
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        torch.set_num_threads(cfg.torch_threads)
        self.torch_gen = torch.Generator().manual_seed(cfg.seed)
        # --- model and optimiser
        self.encoder = ObservationEncoder(self.rules)
        self.model = ActorCritic(self.encoder.size, self.rules.num_actions, tuple(cfg.hidden),
                                 obs_scale=observation_scale(self.rules))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.global_step = 0  # learner decisions trained on
        self.env_steps = 0  # every decision of every seat
        self.update = 0
        self.train_seconds = 0.0
        self.pool: list[str] = list(cfg.pool_baselines)  # specs; snapshots are checkpoint paths
        self.last_eval: dict[str, float] = {}
        if resume:
            self._resume()
        self.pool_agents: dict[str, Agent] = {}
        self.writer = None

    # -------------------------------------------------------------- checkpoints

    def _payload(self, with_optimizer: bool) -> dict[str, Any]:
        payload = model_payload(self.model, self.rules, self.global_step, self.cfg.to_dict())
        if with_optimizer:
            payload["optimizer"] = self.optimizer.state_dict()
            payload["trainer_state"] = {
                "env_steps": self.env_steps, "update": self.update, "train_seconds": self.train_seconds,
                "pool": self.pool, "last_eval": self.last_eval,
                "numpy_rng": _jsonable(self.rng.bit_generator.state),
                "torch_rng": self.torch_gen.get_state(), "torch_global_rng": torch.get_rng_state(),
            }
        return payload

    def save(self) -> Path:
        return save_checkpoint(self.ckpt_path, self._payload(with_optimizer=True))

    def warm_start(self, spec: str) -> None:
        """Load starting weights from a checkpoint path or ``zoo:NAME`` (not the optimizer: a new run)."""
        path = zoo_path(spec[4:]) if spec.startswith("zoo:") else Path(spec)
        data = load_checkpoint(path)
        if data["rules"] != self.rules.to_dict():
            raise CheckpointError(f"init_checkpoint {spec} was trained with rules {data['rules']}, "
                                  f"the config says {self.rules.to_dict()}")
        if data["model_kwargs"] != self.model.kwargs():
            raise CheckpointError(f"init_checkpoint {spec} has network {data['model_kwargs']}, "
                                  f"the config builds {self.model.kwargs()}; set hidden to match")
        self.model.load_state_dict(data["model"])

    def _resume(self) -> None:
        if not self.ckpt_path.exists():
            raise CheckpointError(f"--resume: no checkpoint at {self.ckpt_path} to resume from")
        data = load_checkpoint(self.ckpt_path)
        if "trainer_state" not in data or "optimizer" not in data:
            raise CheckpointError(f"{self.ckpt_path} holds weights only (no optimizer state); it cannot be resumed")
        stored = {"rules": data["rules"], **{f"network {k}": v for k, v in data["model_kwargs"].items()}}
        wanted = {"rules": self.rules.to_dict(), **{f"network {k}": v for k, v in self.model.kwargs().items()}}
        differ = [f"{k}: checkpoint {stored.get(k)!r}, config {wanted.get(k)!r}"
                  for k in dict.fromkeys([*stored, *wanted]) if stored.get(k) != wanted.get(k)]
        if differ:
            raise CheckpointError(f"--resume: {self.ckpt_path} does not fit this config ({'; '.join(differ)}); set "
                                  f"the config's rules / hidden to the checkpoint's, or start a new run "
                                  f"(another --run-name, or --overwrite)")
        self.model.load_state_dict(data["model"])
        self.optimizer.load_state_dict(data["optimizer"])
        state = data["trainer_state"]
        self.global_step = int(data["train_step"])
        self.env_steps = int(state["env_steps"])
        self.update = int(state["update"])
        self.train_seconds = float(state["train_seconds"])
        self.pool = list(state["pool"])
        self.last_eval = dict(state["last_eval"])
        self.rng.bit_generator.state = state["numpy_rng"]
        self.torch_gen.set_state(state["torch_rng"])
        torch.set_rng_state(state["torch_global_rng"])

    # -------------------------------------------------------------- acting

    @torch.no_grad()
    def _policy(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits, values = self.model(torch.from_numpy(obs), torch.from_numpy(mask))
        probs = torch.softmax(logits, dim=-1)
        # inverse-CDF sampling (an order of magnitude faster than torch.multinomial on CPU); u is kept
        # inside (0, 1) so the chosen action always has probability > 0, i.e. is legal
        cdf = probs.cumsum(dim=1)
        u = torch.rand(len(probs), 1, generator=self.torch_gen).clamp_(1e-6, 1 - 1e-6) * cdf[:, -1:]
        actions = (cdf < u).sum(dim=1).clamp_max_(probs.shape[1] - 1)
        logp = torch.log(probs.gather(1, actions[:, None]).squeeze(1).clamp_min(1e-12))
        return actions.numpy(), logp.numpy(), values.numpy()

    def _opponent(self, spec: str) -> Agent:
        if spec not in self.pool_agents:
            self.pool_agents[spec] = load(spec, self.rules)
        return self.pool_agents[spec]

    def _draw_lineup(self) -> list[str | None]:
        """Who sits where in a new game: every seat the learner (``None``) with probability
        ``self_play_prob``, else one learner seat and pool specs drawn uniformly for the others."""
        n = self.rules.num_players
        if self.rng.random() < self.cfg.self_play_prob:
            return [LEARNER] * n
        learner = int(self.rng.integers(n))
        return [LEARNER if s == learner else self.pool[int(self.rng.integers(len(self.pool)))] for s in range(n)]

    def _new_game(self, i: int) -> None:
        """Deal a new game in env ``i`` and choose who sits where."""
        self.envs[i].reset(seed=int(self.rng.integers(2**63)))
        self.seats[i] = [LEARNER if spec is LEARNER else self._opponent(spec) for spec in self._draw_lineup()]
        self._advance(i)

    def _credit_rewards(self, i: int) -> None:
        env = self.envs[i]
        seats = np.array([s for s, who in enumerate(self.seats[i]) if who is LEARNER])
        rewards = np.array([env.rewards.get(env.possible_agents[s], 0.0) for s in seats], dtype=np.float32)
        self.buffer.credit(np.full(len(seats), i), seats, rewards)

    def _advance(self, i: int) -> None:
        """Let opponents move until a learner seat must decide; start a new game at the end."""
        env = self.envs[i]
        game = env.game
        while True:
            if game.is_over:
                self._finish_game(i)
                return
            who = self.seats[i][game.current_player]
            if who is LEARNER:
                return
            obs = env.observe(env.agent_selection)
            env.step(who.act(obs, self.rng))
            self.env_steps += 1
            self._credit_rewards(i)

    def _finish_game(self, i: int) -> None:
        game = self.envs[i].game
        for seat, who in enumerate(self.seats[i]):
            if who is LEARNER:
                self.buffer.terminate(np.array([i]), np.array([seat]))
        if any(who is not LEARNER for who in self.seats[i]):
            seat = next(s for s, who in enumerate(self.seats[i]) if who is LEARNER)
            self.episode_wins.append((1.0 / len(game.winners)) if seat in game.winners else 0.0)
            self.episode_points.append(game.totals[seat])
        self._new_game(i)

    def collect(self) -> None:
        """One rollout: ``rollout_steps`` batched policy decisions over every env."""
        for _ in range(self.cfg.rollout_steps):
            obs_list, mask_list = [], []
            for env in self.envs:
                o = env.observe(env.agent_selection)
                obs_list.append(o["observation"])
                mask_list.append(o["action_mask"])
            obs = np.stack(obs_list)
            mask = np.stack(mask_list).astype(bool)
            actions, logps, values = self._policy(obs, mask)
            seats = np.array([env.game.current_player for env in self.envs])
            self.buffer.open(np.arange(len(self.envs)), seats, obs, mask, actions, logps, values)
            for i, env in enumerate(self.envs):
                env.step(int(actions[i]))
                self.env_steps += 1
                self.global_step += 1
                self._credit_rewards(i)
                self._advance(i)

    # -------------------------------------------------------------- collection on the batched engine

    def _vector_lineup(self, b: int) -> None:
        """Choose who sits where in game ``b`` of the batched engine (it has just been dealt).
        ``seat_code[b, s]`` is 0 for the learner, else the code of a pool agent (``coded_agents``)."""
        for s, spec in enumerate(self._draw_lineup()):
            if spec is LEARNER:
                self.seat_code[b, s] = 0
                continue
            if spec not in self.spec_codes:
                self.spec_codes[spec] = code = 1 + max(self.coded_agents, default=0)
                self.coded_agents[code] = self._opponent(spec)
            self.seat_code[b, s] = self.spec_codes[spec]

    def _forget_unseated(self) -> None:
        """Let go of snapshots that left the pool once no game seats them any more."""
        seated = set(np.unique(self.seat_code).tolist())
        for spec, code in list(self.spec_codes.items()):
            if spec not in self.pool and code not in seated:
                del self.spec_codes[spec], self.coded_agents[code]

    def collect_vector(self) -> None:
        """One rollout on :class:`cf_env.vector.VectorGame`: every step is one decision in every
        game; the policy decides for learner seats, pool agents (batched) for the others."""
        vg = self.vg
        games = np.arange(vg.num_games)
        learner_seat = self.seat_code == 0  # (B, n)
        for _ in range(self.cfg.rollout_steps):
            obs, mask, seat = self.v_obs, self.v_mask, self.v_seat
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
                acts, logps, values = self._policy(l_obs, l_mask)
                actions[learner_rows] = acts
                self.buffer.open(learner_rows, seat[learner_rows], l_obs, l_mask, acts, logps, values)
            obs, mask, seat, rewards, done = vg.step(actions)
            self.v_obs, self.v_mask, self.v_seat = obs, mask, seat
            self.global_step += int(learner_rows.size)
            self.env_steps += vg.num_games
            credited = learner_seat & (rewards != 0)
            if credited.any():
                envs, seats = np.nonzero(credited)
                self.buffer.credit(envs, seats, rewards[envs, seats].astype(np.float32))
            for b in np.flatnonzero(done).tolist():
                seats = np.flatnonzero(learner_seat[b])
                self.buffer.terminate(np.full(len(seats), b), seats)
                if len(seats) < self.rules.num_players:  # a game against the pool: record how it went
                    s_ = int(seats[0])
                    wins = vg.final_winners[b]
                    self.episode_wins.append((1.0 / wins.sum()) if wins[s_] else 0.0)
                    self.episode_points.append(int(vg.final_totals[b, s_]))
                self._vector_lineup(b)
                learner_seat[b] = self.seat_code[b] == 0

    # -------------------------------------------------------------- learning

    def learn(self) -> dict[str, float]:
        cfg = self.cfg
        idx, adv, ret = self.buffer.gae(cfg.gamma, cfg.gae_lambda)
        buf = self.buffer
        b_obs, b_mask = torch.from_numpy(buf.obs[idx]), torch.from_numpy(buf.mask[idx])
        b_act, b_logp, b_val = torch.from_numpy(buf.action[idx]), torch.from_numpy(buf.logp[idx]), torch.from_numpy(buf.value[idx])
        b_adv = torch.from_numpy(adv)
        b_ret = torch.from_numpy(ret)
        self.buffer = self.buffer.carry_over()
        n = len(idx)
        mb = max(1, n // cfg.num_minibatches)
        stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
        for _epoch in range(cfg.update_epochs):
            perm = torch.randperm(n, generator=self.torch_gen)
            for start in range(0, n, mb):
                j = perm[start:start + mb]
                logits, value = self.model(b_obs[j], b_mask[j])
                logp_all = torch.log_softmax(logits, dim=-1)
                new_logp = logp_all.gather(1, b_act[j][:, None]).squeeze(1)
                probs = logp_all.exp()
                entropy = -(probs * logp_all.masked_fill(~b_mask[j], 0.0)).sum(-1)
                ratio = (new_logp - b_logp[j]).exp()
                mb_adv = b_adv[j]
                if cfg.norm_adv and len(j) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                v_loss = 0.5 * ((value - b_ret[j]) ** 2).mean()
                loss = pg_loss - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    log_ratio = new_logp - b_logp[j]
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clipfrac"].append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
                stats["policy_loss"].append(pg_loss.item())
                stats["value_loss"].append(v_loss.item())
                stats["entropy"].append(entropy.mean().item())
            if cfg.target_kl and np.mean(stats["approx_kl"]) > cfg.target_kl:
                break
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        var = float(b_ret.var())
        out["explained_variance"] = float("nan") if var == 0 else 1 - float((b_ret - b_val).var()) / var
        out["batch"] = float(n)
        return out

    # -------------------------------------------------------------- warm start

    def behaviour_clone(self) -> dict[str, float]:
        """Imitate the heuristic agent (policy) and fit its discounted returns (value)."""
        from tqdm.auto import tqdm

        cfg = self.cfg
        teacher = load("heuristic", self.rules)
        env = raw_env(**self.rules.to_dict(), reward=cfg.reward, points_scale=cfg.points_scale)
        obs_l, mask_l, act_l, ret_l = [], [], [], []
        for _ in tqdm(range(cfg.bc_games), desc="bc data", unit="game", disable=not self.progress, leave=False):
            env.reset(seed=int(self.rng.integers(2**63)))
            game = env.game
            per_seat: dict[int, list[int]] = {s: [] for s in range(self.rules.num_players)}
            rewards: list[float] = []
            while not game.is_over:
                seat = game.current_player
                o = env.observe(env.agent_selection)
                a = teacher.act(o, self.rng)
                per_seat[seat].append(len(obs_l))
                obs_l.append(o["observation"])
                mask_l.append(o["action_mask"].astype(bool))
                act_l.append(a)
                ret_l.append(0.0)
                rewards.append(0.0)
                env.step(a)
                self.env_steps += 1
                for s, idxs in per_seat.items():
                    if idxs:
                        ret_l[idxs[-1]] += env.rewards[env.possible_agents[s]]
            for idxs in per_seat.values():  # discounted returns along each seat's decisions
                g = 0.0
                for k in reversed(idxs):
                    g = ret_l[k] + cfg.gamma * g
                    ret_l[k] = g
        obs = torch.from_numpy(np.stack(obs_l))
        mask = torch.from_numpy(np.stack(mask_l))
        act = torch.tensor(act_l)
        ret = torch.tensor(ret_l, dtype=torch.float32)
        n = len(act_l)
        mb = 1024
        ce_hist = []
        for _ in range(cfg.bc_epochs):
            perm = torch.randperm(n, generator=self.torch_gen)
            for start in range(0, n, mb):
                j = perm[start:start + mb]
                logits, value = self.model(obs[j], mask[j])
                ce = nn.functional.cross_entropy(logits, act[j])
                v = 0.5 * ((value - ret[j]) ** 2).mean()
                loss = ce + cfg.vf_coef * v
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                ce_hist.append(ce.item())
        with torch.no_grad():
            logits, _ = self.model(obs[:20000], mask[:20000])
            agree = float((logits.argmax(-1) == act[:20000]).float().mean())
        return {"bc_samples": float(n), "bc_cross_entropy": float(np.mean(ce_hist[-10:])), "bc_agreement": agree}

    # -------------------------------------------------------------- evaluation

    def evaluate_now(self) -> dict[str, float]:
        if not self.cfg.eval_deal_sets:
            return {}
        agent = TorchAgent(self.model, self.rules, name="policy")
        out = {}
        for opp in self.cfg.eval_opponents:
            lineup = [agent] + [self._opponent(opp)] * (self.rules.num_players - 1)
            report = evaluate(lineup, self.rules, deal_sets=self.cfg.eval_deal_sets, seed=12345, progress=False,
                              agents_by_spec={opp: self._opponent(opp)})
            out[f"win_rate_vs_{opp}"] = report.results[0].win_rate
        self.model.train()
        return out

    def snapshot(self) -> None:
        path = self.run_dir / "pool" / f"update_{self.update:06d}.pt"
        save_checkpoint(path, self._payload(with_optimizer=False))
        self.pool.append(str(path))
        snapshots = [p for p in self.pool if p not in self.cfg.pool_baselines]
        if len(snapshots) > self.cfg.pool_size:
            self.pool.remove(snapshots[0])
            self.pool_agents.pop(snapshots[0], None)
            if self.cfg.backend == "vector":
                self._forget_unseated()
            # the pool can never draw it again (seated copies live in memory): its file goes too
            Path(snapshots[0]).unlink(missing_ok=True)

    # -------------------------------------------------------------- the loop

    def run(self) -> dict[str, Any]:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm.auto import tqdm

        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.writer = writer = SummaryWriter(str(self.run_dir))
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in cfg.to_dict().items()))
        if self.update == 0 and cfg.init_checkpoint:
            self.warm_start(cfg.init_checkpoint)
        elif self.update == 0 and cfg.bc_games:
            t0 = time.time()
            bc = self.behaviour_clone()
            self.train_seconds += time.time() - t0
            for k, v in bc.items():
                writer.add_scalar(f"losses/{k}", v, 0)
        self.buffer = Trajectories(cfg.num_envs, self.rules.num_players, self.encoder.size, self.rules.num_actions)
        self.episode_wins: list[float] = []
        self.episode_points: list[int] = []
        if cfg.backend == "vector":
            self.vg = VectorGame(self.rules, num_games=cfg.num_envs, reward=cfg.reward,
                                 points_scale=cfg.points_scale, seed=self.rng)
            self.v_obs, self.v_mask, self.v_seat = self.vg.reset()
            self.seat_code = np.zeros((cfg.num_envs, self.rules.num_players), dtype=np.int64)
            self.spec_codes: dict[str, int] = {}
            self.coded_agents: dict[int, Agent] = {}
            for b in range(cfg.num_envs):
                self._vector_lineup(b)
            collect = self.collect_vector
        else:
            self.seats: list[list] = [[] for _ in range(cfg.num_envs)]
            self.envs = [raw_env(**self.rules.to_dict(), reward=cfg.reward, points_scale=cfg.points_scale)
                         for _ in range(cfg.num_envs)]
            for i in range(cfg.num_envs):
                self._new_game(i)
            collect = self.collect
        # the bar counts learner steps, or training seconds when the time limit will stop the run first
        by_time = bool(cfg.time_limit_minutes)
        bar_total = int(cfg.time_limit_minutes * 60) if by_time else cfg.total_steps

        def bar_position() -> int:
            return min(int(self.train_seconds) if by_time else self.global_step, bar_total)

        bar = tqdm(total=bar_total, initial=bar_position(),
                   desc="train", unit="s" if by_time else "step", disable=not self.progress, dynamic_ncols=True,
                   mininterval=1.0)  # at most one redraw a second: updates come several times a second
        start_time = time.time() - self.train_seconds
        steps_at_start, env_steps_at_start = self.global_step, self.env_steps
        run_start = time.time()
        stop_reason = "total_steps"
        stop = _StopSignals()
        stop.install()
        try:
            while self.global_step < cfg.total_steps:
                if stop.received:
                    stop_reason = f"interrupted ({stop.received})"
                    break
                if cfg.time_limit_minutes and self.train_seconds >= cfg.time_limit_minutes * 60:
                    stop_reason = "time_limit_minutes"
                    break
                frac = 1.0 - self.global_step / cfg.total_steps
                if cfg.anneal_lr:
                    self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
                collect()
                stats = self.learn()
                self.update += 1
                self.train_seconds = time.time() - start_time
                elapsed = max(time.time() - run_start, 1e-9)
                sps = (self.global_step - steps_at_start) / elapsed
                env_sps = (self.env_steps - env_steps_at_start) / elapsed
                for k, v in stats.items():
                    writer.add_scalar(f"losses/{k}", v, self.global_step)
                writer.add_scalar("charts/learning_rate", self.optimizer.param_groups[0]["lr"], self.global_step)
                writer.add_scalar("charts/learner_steps_per_second", sps, self.global_step)
                writer.add_scalar("charts/env_steps_per_second", env_sps, self.global_step)
                if self.episode_wins:
                    writer.add_scalar("charts/win_rate_vs_pool", float(np.mean(self.episode_wins[-200:])), self.global_step)
                    writer.add_scalar("charts/points_vs_pool", float(np.mean(self.episode_points[-200:])), self.global_step)
                if self.update % cfg.snapshot_every == 0:
                    self.snapshot()
                if self.update % cfg.eval_every == 0:
                    self.last_eval = self.evaluate_now()
                    for k, v in self.last_eval.items():
                        writer.add_scalar(f"eval/{k}", v, self.global_step)
                if self.update % cfg.checkpoint_every == 0:
                    self.save()
                latest = {k.replace("win_rate_vs_", "vs_"): f"{v:.2f}" for k, v in self.last_eval.items()}
                bar.set_postfix({"steps": self.global_step, "env_sps": f"{env_sps:.0f}", **latest}, refresh=False)
                bar.update(bar_position() - bar.n)  # redraws only when mininterval has passed
            bar.close()
            if not stop.received:  # an interrupted run saves at once: no final evaluation, no final.pt
                self.last_eval = self.evaluate_now()
                for k, v in self.last_eval.items():
                    writer.add_scalar(f"eval/{k}", v, self.global_step)
            path = self.save()
        finally:
            stop.restore()
        if stop.received:  # also when it came during the final evaluation
            stop_reason = f"interrupted ({stop.received})"
        final = self.run_dir / "final.pt"
        if not stop.received:
            save_checkpoint(final, self._payload(with_optimizer=False))
        writer.close()
        elapsed = max(time.time() - run_start, 1e-9)
        return {
            "checkpoint": str(path), "final": None if stop.received else str(final), "learner_steps": self.global_step,
            "env_steps": self.env_steps, "updates": self.update, "train_seconds": self.train_seconds,
            "env_steps_per_second": (self.env_steps - env_steps_at_start) / elapsed,
            "learner_steps_per_second": (self.global_step - steps_at_start) / elapsed,
            "stop_reason": stop_reason, "signal": stop.received, "eval": self.last_eval,
        }


def _jsonable(state: Any) -> Any:
    """numpy's bit-generator state as plain Python values (torch's weights_only loader takes them)."""
    if isinstance(state, dict):
        return {k: _jsonable(v) for k, v in state.items()}
    if isinstance(state, np.integer):
        return int(state)
    return state


def _claim_run_dir(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """A new run never lands in a folder that holds another: refuse, or clear it on ``overwrite``."""
    if resume and overwrite:
        raise TrainConfigError("--resume continues the run in the folder and --overwrite deletes it: choose one")
    if resume or not run_dir.is_dir():
        return
    held = sorted(p.name for p in run_dir.iterdir())
    if not held:
        return
    if not overwrite:
        raise RunExistsError(
            f"{run_dir} already holds a run ({', '.join(held[:4])}{', ...' if len(held) > 4 else ''}); pass --resume "
            f"to continue it, --overwrite to delete it and start again, or choose another --run-name")
    shutil.rmtree(run_dir)


class _StopSignals:
    """Ctrl-C (SIGINT) or SIGTERM asks the loop to stop after the current update and checkpoint;
    a second one stops at once. Installed only in the main thread (signals reach no other)."""

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received:  # the second signal: give up on a clean stop
            self.restore()
            raise KeyboardInterrupt
        self.received = signal.Signals(signum).name
        print(f"\n{self.received}: stopping after this update and writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}


def train(cfg: PPOConfig, resume: bool = False, progress: bool = True, overwrite: bool = False) -> dict[str, Any]:
    """Train with ``cfg``; returns a summary (paths, step counts, throughput, final eval, and
    ``stop_reason``: ``total_steps``, ``time_limit_minutes`` or ``interrupted (SIGINT|SIGTERM)``)."""
    return Trainer(cfg, resume=resume, progress=progress, overwrite=overwrite).run()
