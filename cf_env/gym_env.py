"""A Gymnasium single-agent view of Chicken Foot: the learner plays one seat, opponents the rest::

    import gymnasium, cf_env
    env = gymnasium.make("ChickenFoot-v1", num_players=4, reward="relative")
    obs, info = env.reset(seed=0)
    while True:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        if terminated:
            break

Opponents are callables ``(observation dict) -> action id`` or agents with ``act(observation, rng)``
(``agents.load(spec)``), which act with the env's own generator; by default each plays a uniformly
random legal action drawn from that generator (seeded by ``reset(seed)``). The reward
of a step is everything the learner's seat earned from its action up to its next decision
(round ends and the game's end included), in the AEC env's ``reward`` mode.
``action_masks()`` follows sb3-contrib's convention.

``obs_type="dict"`` (the default) gives the AEC env's observation dict; ``obs_type="box"`` gives
the flat float32 vector alone as a ``Box`` (with ``history=True``, the history's rows follow it,
flattened), the layout Stable-Baselines3's ``MlpPolicy`` and the Box-only wrappers (Supersuit's
observation wrappers, PettingZoo's ``bombardment_test``) expect; the mask is then read through
``action_masks()`` or ``info["action_mask"]``.

``reset(seed=s)`` seeds the env's generator (``np_random``); ``reset()`` continues it. It deals
every game, picks a ``"random"`` learner seat and is the generator the opponents act with.
Every info has the same keys from reset to the end: the AEC env's (``round_scores``, ``totals``,
``winners``, ``rounds_finished``; see :mod:`cf_env.chicken_foot`) plus ``action_mask`` (its own
writeable copy), ``seat`` and ``illegal_action`` (True only on the step that ended the game by
an illegal action).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import gymnasium
import numpy as np

from cf_env.chicken_foot import raw_env, reset_deals
from cf_env.engine import ConfigError, IllegalActionError

__all__ = ["OBS_TYPES", "ChickenFootSingleEnv", "Opponent"]

OBS_TYPES = ("dict", "box")

class ActingAgent(Protocol):
    """An agent as :mod:`agents` makes them: ``act(observation, rng) -> action``."""

    def act(self, observation: dict, rng: np.random.Generator) -> int: ...


#: an opponent: a callable ``observation -> action``, or an agent that acts with the env's generator
Opponent = Callable[[dict], int] | ActingAgent


class ChickenFootSingleEnv(gymnasium.Env):
    """Single-agent Chicken Foot.

    Args:
        opponents: ``None`` (uniform random legal), one opponent for every other seat, a sequence
            of ``num_players - 1`` (clockwise from the learner's left), or a mapping seat -> opponent;
            an opponent is a callable ``obs -> action`` or an agent with ``act(obs, rng)``.
        learner_seat: the learner's seat, or ``"random"`` for a new seat each reset.
        illegal_action: ``"terminate"`` (reward -1, episode over; default, so that
            ``check_env``'s unmasked samples are safe) or ``"raise"``.
        render_mode: ``"ansi"``, ``"rgb_array"``, ``"human"`` or ``None``.
        obs_type: ``"dict"`` (the AEC env's observation dict) or ``"box"`` (the flat vector, with the
            history's rows after it when ``history=True``; the mask through ``action_masks()``).
        **kwargs: the AEC env's arguments (rules fields, ``reward``, ``points_scale``).
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, opponents: Opponent | Sequence[Opponent] | Mapping[int, Opponent] | None = None,
                 learner_seat: int | str = 0, illegal_action: str = "terminate",
                 render_mode: str | None = None, obs_type: str = "dict", **kwargs: Any) -> None:
        if obs_type not in OBS_TYPES:
            raise ConfigError(f"obs_type must be one of {OBS_TYPES}, got {obs_type!r}")
        self.obs_type = obs_type
        inner_mode = "ansi" if render_mode == "human" else render_mode
        # opponents that read the round's history (a search agent with infer=policy) get it even
        # when the learner did not ask for it (kwargs history=True); the learner's space is its own
        self._learner_history = bool(kwargs.get("history", False))
        if _wants_history(opponents):
            kwargs["history"] = True
        self.aec = raw_env(render_mode=inner_mode, illegal_action="raise", **kwargs)
        self.render_mode = render_mode
        n = self.aec.config.num_players
        if learner_seat != "random" and (isinstance(learner_seat, bool) or not isinstance(learner_seat, int)
                                         or not 0 <= learner_seat < n):
            raise ConfigError(f"learner_seat must be 'random' or an int in [0, {n}), got {learner_seat!r}")
        if illegal_action not in ("terminate", "raise"):
            raise ConfigError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        self.learner_seat_option = learner_seat
        self.illegal_action = illegal_action
        self._opponents = _checked_opponents(opponents, n, learner_seat)
        agent = self.aec.possible_agents[0]
        space = self.aec.observation_space(agent)
        assert isinstance(space, gymnasium.spaces.Dict)  # {"observation", "action_mask"[, "history"]}
        if self.aec.history and not self._learner_history:
            space = gymnasium.spaces.Dict({k: v for k, v in space.spaces.items() if k != "history"})
        self.observation_space: gymnasium.spaces.Space = space if obs_type == "dict" else _box_space(space)
        self.action_space = self.aec.action_space(agent)
        self.seat = 0 if learner_seat == "random" else int(learner_seat)
        self._mask = np.zeros(self.aec.num_actions, dtype=np.int8)
        self._over = True

    def _opponent_for(self, seat: int) -> Opponent | None:
        opp = self._opponents
        if opp is None:
            return None
        if _is_opponent(opp):
            return opp
        if isinstance(opp, Mapping):
            return opp[seat]
        return opp[(seat - self.seat) % self.aec.config.num_players - 1]

    def _random_legal(self, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.np_random.integers(len(legal))])

    def _play_opponents(self) -> None:
        aec = self.aec
        learner = aec.possible_agents[self.seat]
        while not aec.game_over and aec.agent_selection != learner:
            agent = aec.agent_selection
            opp = self._opponent_for(aec.agent_name_mapping[agent])
            obs = aec.observe(agent)
            if opp is None:
                action = self._random_legal(obs["action_mask"])
            elif hasattr(opp, "act"):  # an agent (agents.Agent): its randomness is the env's generator
                action = opp.act(obs, self.np_random)
            else:
                action = opp(obs)
            aec.step(action)

    def _result(self, illegal: bool = False) -> tuple[Any, dict]:
        aec = self.aec
        agent = aec.possible_agents[self.seat]
        obs = aec.observe(agent)  # its mask is a new array, the caller's
        if not self._learner_history:
            obs.pop("history", None)
        if illegal:
            obs["action_mask"][:] = 0
        self._mask = obs["action_mask"].copy()  # the env's own, read by action_masks()
        info = dict(aec.infos.get(agent, {}))
        info["action_mask"] = self._mask.copy()
        info["seat"] = self.seat
        info["illegal_action"] = illegal
        if self.obs_type == "box":
            return _flat(obs), info
        return obs, info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        deals = reset_deals(options)  # bad options are refused before anything changes
        super().reset(seed=seed)
        if self.learner_seat_option == "random":
            self.seat = int(self.np_random.integers(self.aec.config.num_players))
        self.aec.reset_with(self.np_random, deals)
        self._play_opponents()
        self._over = self.aec.game_over
        return self._result()

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        if self._over:
            raise gymnasium.error.ResetNeeded("the episode is over; call reset()")
        aec = self.aec
        agent = aec.possible_agents[self.seat]
        if not aec.is_legal(action):
            if self.illegal_action == "raise":
                raise IllegalActionError(f"action {action!r} is not legal; legal: {aec.legal_actions()}")
            self._over = True
            obs, info = self._result(illegal=True)
            return obs, -1.0, True, False, info
        aec.step(int(action))
        self._play_opponents()
        reward = aec.take_reward(agent)
        terminated = aec.game_over
        self._over = terminated
        obs, info = self._result()
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an int8 mask (1 = legal), the same dtype as the
        observation's and the info's ``action_mask`` everywhere in this package (sb3-contrib's
        MaskablePPO reads this and converts it to booleans itself). A copy: changing it changes
        nothing in the env."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium's frame type is a TypeVar
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        out = self.aec.render()
        if self.render_mode == "human":
            print(f"{out}\n")
            return None
        return out


def _box_space(space: gymnasium.spaces.Dict) -> gymnasium.spaces.Box:
    """The ``obs_type="box"`` space: the observation's bounds, then the history's, flattened."""
    obs = space["observation"]
    assert isinstance(obs, gymnasium.spaces.Box)
    low, high = [obs.low], [obs.high]
    if "history" in space.spaces:
        hist = space["history"]
        assert isinstance(hist, gymnasium.spaces.Box)
        low.append(hist.low.ravel().astype(np.float32))
        high.append(hist.high.ravel().astype(np.float32))
    return gymnasium.spaces.Box(np.concatenate(low), np.concatenate(high), dtype=np.float32)


def _flat(obs: dict[str, np.ndarray]) -> np.ndarray:
    """An observation dict in the ``obs_type="box"`` layout (see :func:`_box_space`)."""
    if "history" not in obs:
        return obs["observation"]
    return np.concatenate([obs["observation"], obs["history"].ravel().astype(np.float32)])


def _wants_history(opponents: Any) -> bool:
    """Whether an opponent reads the observation's ``history`` entry (bad values are refused later)."""
    if isinstance(opponents, Mapping):
        values = list(opponents.values())
    elif isinstance(opponents, Sequence) and not isinstance(opponents, (str, bytes)):
        values = list(opponents)
    else:
        values = [opponents]
    return any(getattr(v, "needs_history", False) for v in values)


def _is_opponent(value: Any) -> bool:
    return callable(value) or callable(getattr(value, "act", None))


def _checked_opponents(opponents: Any, n: int, learner_seat: int | str) -> Any:
    """``opponents`` as given, once every entry is known to be an opponent (see the class docstring);
    :class:`ConfigError` names the first that is not, so a bad value fails here, not at reset."""
    what = ("an opponent is a callable obs -> action or an agent with act(obs, rng); for a spec such as "
            "'heuristic' pass agents.load('heuristic', config) (or use agents.opponents.single_env_vs)")
    if opponents is None or _is_opponent(opponents):
        return opponents
    if isinstance(opponents, Mapping):
        seats = set(range(n)) if learner_seat == "random" else set(range(n)) - {learner_seat}
        bad_keys = [k for k in opponents if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n]
        if bad_keys:
            raise ConfigError(f"opponents mapping keys must be seats in [0, {n}), got {bad_keys}")
        missing = sorted(seats - set(opponents))
        if missing:
            raise ConfigError(f"opponents mapping has no entry for seats {missing} (learner_seat={learner_seat!r})")
        entries = [(f"opponents[{k}]", v) for k, v in opponents.items()]
    elif isinstance(opponents, Sequence) and not isinstance(opponents, (str, bytes)):
        if len(opponents) != n - 1:
            raise ConfigError(f"opponents must list {n - 1} opponents (clockwise from the learner's left), "
                              f"got {len(opponents)}")
        entries = [(f"opponents[{i}]", v) for i, v in enumerate(opponents)]
    else:
        raise ConfigError(f"opponents must be None, an opponent, a sequence of {n - 1} or a mapping seat -> "
                          f"opponent, got {opponents!r:.80} ({type(opponents).__name__}); {what}")
    for where, value in entries:
        if not _is_opponent(value):
            raise ConfigError(f"{where} is {value!r:.80} ({type(value).__name__}); {what}")
    return opponents
