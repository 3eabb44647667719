"""A Gymnasium vector env over the batched engine: one learner seat in each of ``num_envs`` games,
the other seats played inside the batch::

    import cf_env
    envs = cf_env.vector_env(1024, opponents=["heuristic"], num_players=4, reward="relative")
    obs, info = envs.reset(seed=0)
    while True:
        actions = my_policy(obs["observation"], info["action_mask"])   # (1024,) legal action ids
        obs, rewards, terminated, truncated, info = envs.step(actions)

It is the single-agent view (:class:`cf_env.ChickenFootSingleEnv`) batched: the same observation
(``obs_type="dict"``: ``{"observation", "action_mask"}``, ``obs_type="box"``: the flat vector),
the same rewards (what the learner's seat earned from its action up to its next decision, in the
``reward`` mode), but ``num_envs`` games stepped together by compiled loops
(:class:`cf_env.vector.VectorGame`), with the opponents' decisions made for every game that waits
on them at once.

**Opponents** (one for every other seat, or ``num_players - 1`` clockwise from the learner's left):

- an agent spec (``"random"``, ``"heuristic"``, ``"zoo:strong-4p"``, a checkpoint path, ...),
  loaded with ``agents.load`` for these rules;
- an agent with ``act_batch(observations, masks, rng)`` (what ``agents.load`` returns: a
  network takes one forward pass over the games waiting on it) or only ``act(observation, rng)``
  (called per game). An agent that holds every other seat and offers ``play_to_seats(vg, games,
  stop, rewards, rng)`` plays whole stretches instead: the baselines (``random``, ``greedy``,
  ``heuristic``) play every game up to the learner's next decision in one compiled loop, with
  no observation written for their own decisions (the same choices as their ``act``; random's
  drawn from a stream the env's generator seeds);
- a callable ``policy(observations, masks) -> actions`` given the batch of games waiting on that
  seat, ``(k, D)`` float32 and ``(k, A)`` int8: the learner's own policy makes self-play.

``None`` (the default) plays uniformly random legal actions. Agents act with the env's generator.

**Autoreset: same step** (``metadata["autoreset_mode"]`` is Gymnasium's ``AutoresetMode.SAME_STEP``).
A game that ends returns ``terminated`` True with the reward of its last step, and the
observation returned for it is already the first decision of its next game; the finished game's
last observation (from the learner's seat, all-zero mask) is in ``info["final_obs"]`` (an object
array, ``None`` for games that did not end) and its results in ``info["final_info"]``
(``totals``, ``winners``, ``round_scores`` and ``seat``, each with its ``_key`` mask, as
Gymnasium's ``SyncVectorEnv`` batches them). The engine deals the next game in the same step, so
there is no extra reset step to skip. ``truncated`` is always False (games end by the rules).

**Infos** at every step: ``action_mask`` ``(num_envs, A)`` int8 (the same as
``obs["action_mask"]`` and :meth:`action_masks`, each its own copy), ``seat`` ``(num_envs,)``
(the learner's seat in each game), ``illegal_action`` ``(num_envs,)`` bool, and the episode
statistics in the form of Gymnasium's ``RecordEpisodeStatistics``: ``info["episode"] = {"r":
returns, "l": lengths, "t": seconds}``, nonzero for the games that ended on this step, which
``info["_episode"]`` flags (do not wrap this env in that wrapper too: it refuses a key already
there; it is in every step's info, zeros where no game ended; ``episode_statistics=False``
leaves it out). On a step where games end, also ``final_obs`` and ``final_info``.

**Seeding**: ``reset(seed=s)`` seeds the one generator (``np_random``) that deals every game,
draws ``"random"`` learner seats and is given to the opponents; ``reset()`` continues it. A seeded
run repeats exactly. ``reset(options={"deals": [...]})`` scripts the first game of each env (one
entry per env, ``None`` for a shuffled one; the AEC env's per-round format).

**Illegal actions**: with ``illegal_action="terminate"`` (the default, as in the single-agent
view) a game given an illegal action ends there with reward -1 (``info["illegal_action"]`` True,
its ``final_info`` the totals so far and no winners) and the others go on; ``"raise"`` raises
:class:`IllegalActionError` and changes nothing.

Not here: the round ``history`` entry (the batched engine does not keep it: use the
single-agent view, or ``agents.opponents.single_env_vs``, for opponents that read it) and rendering.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from cf_env.engine import ConfigError, IllegalActionError, RulesConfig
from cf_env.engine.errors import ResetNeededError
from cf_env.engine.scoring import REWARD_MODES
from cf_env.gym_env import OBS_TYPES
from cf_env.vector import VectorGame, random_legal_actions

__all__ = ["BatchPolicy", "ChickenFootVectorEnv", "vector_env"]

#: an opponent given as a function of the batch: ``policy(observations (k, D), masks (k, A)) -> (k,) actions``
BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
MAX_SILENT_GAMES = 1_000  # games in a row, in one slot, that end before the learner decides (refused after)


class ChickenFootVectorEnv(VectorEnv):
    """``num_envs`` games, the learner at one seat of each (see the module docstring).

    Args:
        num_envs: games stepped together (1024-4096 use the machine best).
        opponents: ``None`` (uniform random legal), one opponent for every other seat, or a
            sequence of ``num_players - 1`` clockwise from the learner's left; an opponent is an
            agent spec, an agent, or a :data:`BatchPolicy`.
        learner_seat: the learner's seat in every game, or ``"random"`` for a new seat in each game.
        reward: the AEC env's reward mode (``"win"``, ``"points"``, ``"relative"``).
        points_scale: the ``points``/``relative`` rewards' divisor.
        obs_type: ``"dict"`` or ``"box"`` (the flat vector; the mask through ``action_masks()``).
        illegal_action: ``"terminate"`` (that game ends with reward -1, as in the single-agent
            view, so that unmasked random steps are safe) or ``"raise"`` (:class:`IllegalActionError`,
            nothing changed).
        episode_statistics: add ``info["episode"]`` (``RecordEpisodeStatistics``' form) at every
            step; ``False`` leaves it out, for readers that take only flat infos (TorchRL's ``GymWrapper``).
        config: the rules as a :class:`RulesConfig`, or give its fields as keywords (``**rules``).
        parallel: step the games in numba's threads (by default from 64 games).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1024, opponents: Any = None, learner_seat: int | str = 0,
                 reward: str = "win", points_scale: float = 100.0, obs_type: str = "dict",
                 illegal_action: str = "terminate", episode_statistics: bool = True,
                 config: RulesConfig | None = None, parallel: bool | None = None, **rules: Any) -> None:
        if config is not None and rules:
            raise ConfigError(f"give the rules as config= or as keywords, not both (got config and {sorted(rules)})")
        single_view_only = {"history": False, "render_mode": None}  # the single-agent view's, not here
        for key, off in single_view_only.items():
            if rules.pop(key, off) != off:
                raise ConfigError(f"the vector env takes no {key}= (the batched engine keeps no history and draws "
                                  f"nothing); use the single-agent view: gymnasium.make('ChickenFoot-v1', {key}=...), "
                                  f"or gymnasium.make_vec(..., vectorization_mode='sync') for several of them")
        if config is None:
            unknown = sorted(set(rules) - {f.name for f in dataclasses.fields(RulesConfig)})
            if unknown:
                raise ConfigError(f"unknown arguments {unknown}: the vector env takes num_envs, opponents, "
                                  f"learner_seat, reward, points_scale, obs_type, illegal_action, "
                                  f"episode_statistics, parallel, and config= or the rules' fields")
            config = RulesConfig(**rules)
        if not isinstance(config, RulesConfig):
            raise ConfigError(f"config must be a RulesConfig, got {config!r:.80} ({type(config).__name__})")
        if obs_type not in OBS_TYPES:
            raise ConfigError(f"obs_type must be one of {OBS_TYPES}, got {obs_type!r}")
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if illegal_action not in ("terminate", "raise"):
            raise ConfigError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.episode_statistics = bool(episode_statistics)
        n = config.num_players
        if learner_seat != "random" and (isinstance(learner_seat, bool) or not isinstance(learner_seat, int)
                                         or not 0 <= learner_seat < n):
            raise ConfigError(f"learner_seat must be 'random' or an int in [0, {n}), got {learner_seat!r}")
        self.config = config
        self.vg = VectorGame(config, num_games=num_envs, reward=reward, points_scale=points_scale,
                             parallel=parallel, restart=False)
        self.num_envs = num_envs
        self.obs_type = obs_type
        self.reward_mode = reward
        self.learner_seat_option = learner_seat
        #: the opponent acting at each seat counted clockwise from the learner's left
        self.opponents: list[Any] = _opponent_list(opponents, config)
        # seats with the same opponent act together: rel_code[d] is the index in _distinct of the
        # opponent d seats to the learner's left (d = 1..n-1; rel_code[0] is the learner)
        self._distinct: list[Any] = []
        self._rel_code = np.full(n, -1, np.int64)
        for d, opp in enumerate(self.opponents, start=1):
            found = next((i for i, o in enumerate(self._distinct) if o is opp), None)
            if found is None:
                self._distinct.append(opp)
                found = len(self._distinct) - 1
            self._rel_code[d] = found
        # an opponent that plays every other seat and offers play_to_seats(vg, games, stop, rewards,
        # rng) (the baselines: their compiled choice, no observation written until the learner's)
        self._stretch = getattr(self._distinct[0], "play_to_seats", None) if len(self._distinct) == 1 else None

        low, high = self.vg.encoder.bounds()
        box = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        mask_space = gymnasium.spaces.Box(low=0, high=1, shape=(self.vg.num_actions,), dtype=np.int8)
        self.single_observation_space = (gymnasium.spaces.Dict({"observation": box, "action_mask": mask_space})
                                         if obs_type == "dict" else box)
        self.single_action_space = gymnasium.spaces.Discrete(self.vg.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self.autoreset_mode = AutoresetMode.SAME_STEP  # where SyncVectorEnv keeps it (TorchRL's GymWrapper reads it)

        self._games = np.arange(num_envs)
        self.learner = np.zeros(num_envs, np.int64)  #: the learner's seat in each game
        self._carry = np.zeros(num_envs)  # rewards of a game's set-up, paid with its first step
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, np.int64)
        self._starts = np.zeros(num_envs)
        self._ready = False
        #: games per slot, since reset, that ended before the learner decided (dealt again; only
        #: under rules where the other seats can finish a game alone)
        self.silent_games = np.zeros(num_envs, np.int64)

    # -- the loop ---------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """Deal a new game in every env; ``seed`` seeds the env's generator, ``None`` continues it."""
        deals = None
        if options:
            deals = options.get("deals")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ConfigError(f"seed must be an int or None, got {seed!r} (one generator drives every game)")
        if seed is not None or self._np_random is None:  # VectorEnv's: None until first seeded
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                None if seed is None else int(seed))
        rng = self.np_random
        if self.learner_seat_option == "random":
            self.learner[:] = rng.integers(self.config.num_players, size=self.num_envs)
        else:
            self.learner[:] = self.learner_seat_option
        self.vg.reset(seed=rng, deals=deals)
        self._ready = True
        self._carry[:] = 0.0
        self.silent_games[:] = 0
        self._carry += self.vg.reset_rewards[self._games, self.learner]
        self._play_others(self._carry)
        self._restart_ended(None)
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._starts[:] = time.perf_counter()
        return self._observation(), self._info(np.zeros(self.num_envs, bool))

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One learner decision in every game, then the other seats until the learner is to move
        again (a game that ends restarts: see the module docstring)."""
        if not self._ready:
            raise ResetNeededError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be {self.num_envs} integer action ids, got "
                                     f"{actions.dtype} {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        illegal = self.vg.illegal(self._games, actions)
        legal = ~illegal
        if illegal.any() and self.illegal_action == "raise":
            bad = np.flatnonzero(illegal)[:5]
            raise IllegalActionError(f"illegal actions in games {bad.tolist()} (actions {actions[bad].tolist()}); "
                                     f"nothing was changed")
        rewards = self._carry.copy()
        self._carry[:] = 0.0
        games = self._games[legal]
        self.vg.step_games(games, actions[games])
        rewards[games] += self.vg.rewards[games, self.learner[games]]
        rewards[illegal] = -1.0
        self._play_others(rewards)
        ended = np.flatnonzero((self.vg.done != 0) | illegal)
        self._returns += rewards
        self._lengths += 1
        terminated = np.zeros(self.num_envs, bool)
        terminated[ended] = True
        info: dict[str, Any] = {}
        if ended.size:
            self._finish(ended, illegal, info)
            self._restart_ended(ended)
        info.update(self._info(illegal))
        now = time.perf_counter()
        if self.episode_statistics:  # at every step: zeros where no game ended
            info["episode"] = {"r": np.where(terminated, self._returns, 0.0),
                               "l": np.where(terminated, self._lengths, 0),
                               "t": np.where(terminated, np.round(now - self._starts, 6), 0.0)}
            info["_episode"] = terminated.copy()
        self._returns[ended] = 0.0
        self._lengths[ended] = 0
        self._starts[ended] = now
        return self._observation(), rewards.astype(np.float64), terminated, np.zeros(self.num_envs, bool), info

    def _play_others(self, rewards: np.ndarray) -> None:
        """Step every game whose current player is not the learner, opponents batched by seat,
        until each game waits on the learner or has ended; their rewards to the learner's seat
        are added to ``rewards``."""
        vg, n, rng = self.vg, self.config.num_players, self.np_random
        obs, mask, current = vg.observations, vg.masks, vg.current_player
        if self._stretch is not None:  # one opponent at every other seat, which plays whole stretches itself
            waiting = np.flatnonzero((current >= 0) & (current != self.learner))
            if waiting.size:
                self._stretch(vg, waiting, self.learner, rewards, rng)
            return
        for _ in range(1 << 30):  # bounded: every game ends or reaches the learner
            waiting = np.flatnonzero((current >= 0) & (current != self.learner))
            if not waiting.size:
                return
            actions = np.empty(waiting.size, np.int64)
            if len(self._distinct) == 1:
                actions[:] = _act(self._distinct[0], obs[waiting], mask[waiting], rng)
            else:
                codes = self._rel_code[(current[waiting] - self.learner[waiting]) % n]
                for code in np.unique(codes).tolist():
                    rows = np.flatnonzero(codes == code)
                    games = waiting[rows]
                    actions[rows] = _act(self._distinct[code], obs[games], mask[games], rng)
            vg.step_games(waiting, actions)
            rewards[waiting] += vg.rewards[waiting, self.learner[waiting]]

    def _finish(self, ended: np.ndarray, illegal: np.ndarray, info: dict) -> None:
        """Record the games in ``ended`` in ``info``: final observation and results, episode
        statistics (a game ended by an illegal action: its totals so far, no winners)."""
        vg, num = self.vg, self.num_envs
        seats = self.learner[ended]
        last = vg.observe(ended, seats)
        final_obs = np.full(num, None, dtype=object)
        zero_mask = np.zeros(vg.num_actions, np.int8)
        for i, b in enumerate(ended.tolist()):
            final_obs[b] = ({"observation": last[i], "action_mask": zero_mask.copy()} if self.obs_type == "dict"
                            else last[i])
        flags = np.zeros(num, bool)
        flags[ended] = True
        totals = np.where(illegal[:, None], vg.totals, vg.final_totals)
        winners = np.where(illegal[:, None], 0, vg.final_winners).astype(np.int8)
        final_info = {
            "totals": totals, "_totals": flags.copy(),
            "winners": winners, "_winners": flags.copy(),
            "round_scores": vg.round_scores.copy(), "_round_scores": flags.copy(),
            "seat": self.learner.copy(), "_seat": flags.copy(),
        }
        info["final_obs"], info["_final_obs"] = final_obs, flags.copy()
        info["final_info"], info["_final_info"] = final_info, flags

    def _restart_ended(self, ended: np.ndarray | None) -> None:
        """Deal the next game in each finished slot and play it up to the learner's first
        decision; a game that ends before that is dealt again (``silent_games``)."""
        vg = self.vg
        if ended is None:
            ended = np.flatnonzero(vg.done)
        for _ in range(MAX_SILENT_GAMES):
            if not ended.size:
                return
            if self.learner_seat_option == "random":
                self.learner[ended] = self.np_random.integers(self.config.num_players, size=ended.size)
            vg.new_games(ended)
            self._carry[ended] = vg.reset_rewards[ended, self.learner[ended]]
            self._play_others(self._carry)
            ended = np.flatnonzero(vg.done)
            self.silent_games[ended] += 1
        raise ConfigError(f"{MAX_SILENT_GAMES} games in a row ended before the learner could decide; under these "
                          f"rules ({self.config}) the other seats finish every game alone")

    def _observation(self) -> Any:
        obs = self.vg.observations.copy()
        if self.obs_type == "box":
            return obs
        return {"observation": obs, "action_mask": self.vg.masks.copy()}

    def _info(self, illegal: np.ndarray) -> dict:
        return {"action_mask": self.vg.masks.copy(), "seat": self.learner.copy(), "illegal_action": illegal}

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, A)`` int8 (1 = legal): a copy."""
        return self.vg.masks.copy()

    def close(self, **kwargs: Any) -> None:
        self._ready = False


def vector_env(num_envs: int = 1024, opponents: Any = None, learner_seat: int | str = 0, reward: str = "win",
               **kwargs: Any) -> ChickenFootVectorEnv:
    """A :class:`ChickenFootVectorEnv` (see the module docstring); also
    ``gymnasium.make_vec("ChickenFoot-v1", num_envs, vectorization_mode="vector_entry_point", ...)``."""
    return ChickenFootVectorEnv(num_envs, opponents=opponents, learner_seat=learner_seat, reward=reward, **kwargs)


def _opponent_list(opponents: Any, config: RulesConfig) -> list[Any]:
    """One opponent per other seat (clockwise from the learner's left), specs loaded, each checked."""
    n = config.num_players
    if opponents is None:
        return [None] * (n - 1)
    if isinstance(opponents, (str, bytes)) or _is_opponent(opponents):
        entries = [opponents] * (n - 1)
    elif isinstance(opponents, Sequence):
        if len(opponents) == 1:
            entries = list(opponents) * (n - 1)
        elif len(opponents) == n - 1:
            entries = list(opponents)
        else:
            raise ConfigError(f"opponents must list one opponent or {n - 1} (clockwise from the learner's left), "
                              f"got {len(opponents)}")
    else:
        raise ConfigError(f"opponents must be None, an opponent or a sequence of them, got {opponents!r:.80} "
                          f"({type(opponents).__name__})")
    loaded: dict[str, Any] = {}
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            if entry not in loaded:  # one agent per spec: the seats it plays act in one batch
                loaded[entry] = _load_spec(entry, config)
            entry = loaded[entry]
        if entry is not None and not _is_opponent(entry):
            raise ConfigError(f"opponents[{i}] is {entry!r:.80} ({type(entry).__name__}); an opponent is an agent "
                              f"spec, an agent with act_batch(obs, masks, rng) or act(obs, rng), or a callable "
                              f"(observations, masks) -> actions")
        if getattr(entry, "needs_history", False):
            raise ConfigError(f"opponents[{i}] ({getattr(entry, 'name', entry)!r:.60}) reads the round's history, "
                              f"which the batched engine does not keep; use the single-agent view for it "
                              f"(agents.opponents.single_env_vs)")
        out.append(entry)
    return out


def _load_spec(spec: str, config: RulesConfig) -> Any:
    """The agent ``spec`` names, made by the agent loader the installed distribution declares (its
    entry point ``load`` in group ``chickenfoot_rl.agents``: ``agents.load``), found the way
    Gymnasium finds an entry point: the env layer never imports the agents package built on it."""
    from importlib.metadata import entry_points

    found = entry_points(group="chickenfoot_rl.agents", name="load")
    if not found:
        raise ConfigError(f"the opponent {spec!r} is an agent spec, and no agent loader is installed (the entry "
                          f"point 'load' of group 'chickenfoot_rl.agents', which pip install chickenfoot-rl "
                          f"declares); pass an agent object or a callable instead")
    return next(iter(found)).load()(spec, config)


def _is_opponent(value: Any) -> bool:
    return callable(value) or callable(getattr(value, "act_batch", None)) or callable(getattr(value, "act", None))


def _act(opponent: Any, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The actions of ``opponent`` for a batch of games waiting on it."""
    if opponent is None:
        return random_legal_actions(mask, rng)
    act_batch = getattr(opponent, "act_batch", None)
    if act_batch is not None:
        return np.asarray(act_batch(obs, mask, rng), dtype=np.int64)
    act = getattr(opponent, "act", None)
    if act is not None:
        return np.array([act({"observation": o, "action_mask": m}, rng) for o, m in zip(obs, mask)], dtype=np.int64)
    return np.asarray(opponent(obs, mask), dtype=np.int64)
