"""
# Chicken Foot

| Import             | `from cf_env import env, raw_env`                           |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete                                                    |
| Parallel API       | No                                                          |
| Manual Control     | No (see the `chickenfoot play` command)                     |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']` (clockwise)   |
| Agents             | 2 to 8+ (`num_players`, default 4)                          |
| Action Shape       | (1,)                                                        |
| Action Values      | Discrete(K*K + 2), K = max_pip + 1 (102 for double-nine)   |
| Observation Shape  | (D,) float32 (513 for 4-player double-nine)                 |
| Observation Values | [0, 1] flags; counts up to per-block bounds (see below)     |

Chicken Foot is a domino game for two or more players over several rounds. Tiles are matched
end to end from a central double; the first plays must fill its arms, and every double played
opens a "chicken foot" of three toes that must be filled before play goes anywhere else. A
round ends when a player goes out or nobody can play; players score the pips left in their hand
and the lowest total after the last round wins. The rules are R1-R17 of docs/RULES.md.

### Observation Space

The observation is a dict with an `'observation'` element, a flat seat-relative float32 vector
described in :mod:`cf_env.observation` (`cf_env.ObservationEncoder(config).decode(vec)` gives
named views: hand, layout, open ends per pip, forced slots, drawn tile, hand sizes, boneyard
size, what each opponent could not match, who played which tile, each seat's draws, the values
each opponent has shown it lacks and the draws since, round, scores), and an `'action_mask'`.
`observation_space["observation"]` is `Box(low, high)` with `(low, high) = encoder.bounds()`: 0/1
for the flag blocks, and for the counts their largest possible value in this configuration
(open ends per pip <= `max_pip`, forced slots <= `max(center_arms, 3)`, a hand <= the hand plus
the whole boneyard, the boneyard <= what the deal leaves, scores <= `rounds * (pips of the set +
double_blank_points) / 100`); the table is in :mod:`cf_env.observation`.

#### Legal Actions Mask

`action_mask` is an int8 vector of length `K*K + 2`; 1 marks a legal action of the agent to
move, and it is all zeros for every other agent. While a centre arm is empty or a foot has toes
to fill, it holds only those forced plays. A player with no legal play sees only DRAW (only PASS
when the boneyard is empty). After drawing a playable tile the same agent acts again with that
tile's plays plus PASS (keep it). Every `observe()` returns a new, writeable mask: the caller owns
it, and editing it changes nothing in the env. (The mask is in the observation only, as in
PettingZoo's classic envs; the infos hold none.)

### Action Space

Action `m*K + x` plays the tile {m, x} with its `m` end against an open end showing `m`,
exposing `x` (a double d-d is `d*K + d`); `K*K` is DRAW and `K*K + 1` is PASS.
`cf_env.action_to_string(a, max_pip)` names any action (`"9>4"`, `"draw"`, `"pass"`).

### Rewards

| `reward=`     | when               | each agent gets                                                  |
|---------------|--------------------|------------------------------------------------------------------|
| `"win"`       | end of the game    | `1/len(winners)` if a winner else 0, minus `1/n` (zero-sum)      |
| `"points"`    | end of each round  | `-points / points_scale`                                         |
| `"relative"`  | end of each round  | `(mean of the others' points - own points) / points_scale` (zero-sum) |

An illegal action under `env()` (with `illegal_action="terminate"`) gives -1 to the offender,
0 to the others, and ends the game, as PettingZoo's `TerminateIllegalWrapper` does; `raw_env`
(and `env(illegal_action="raise")`) raise `IllegalActionError` and change nothing.

### Arguments

``` python
cf_env.env(num_players=4, max_pip=9, hand_size=7, rounds=None, center_arms=4, draw_rule="one",
           double_blank_points=50, reward="win", points_scale=100.0, render_mode=None,
           illegal_action="terminate", history=False, config=None)
```

The first seven are the `RulesConfig` fields (docs/RULES.md); `config=RulesConfig(...)` gives
them as one value instead (the seven keywords then stay at their defaults). `history=True` adds an entry
`"history"` to every observation: the round's public events in order, an int16 array of
`encoder.history_length()` rows `[seat relative to the observer, EventKind, action id, tile]`,
the tile -1 where the observer may not see it (another seat's draw), rows after the last event
all -1 (see `ObservationEncoder.history`); its space is `Box(-1, per-column maxima, int16)`. `reset(seed, options={"deals": [...]})`
takes scripted per-round deals in the engine's format (`deals` is the only option: options that are
not a mapping, or a near miss such as `"deal"`, raise `ConfigError`; any other key is ignored, as
Gymnasium's and PettingZoo's envs ignore options they do not use); with fewer deals than rounds (or `None`
entries) the remaining rounds are dealt from the seed.

`reset(seed=s)` seeds the env's generator (`env.np_random`, a `numpy.random.Generator`) and
`reset()` without a seed continues it, as Gymnasium and PettingZoo do: two fresh envs given
`reset(seed=7); reset(); reset()` play the same three games. The first `reset()` of an env never
seeded draws fresh entropy.

### Infos

Every agent's info has the same keys, shapes and dtypes from `reset` to the end of the game, so
that buffers which stack infos (Tianshou's, TorchRL's) can; what the end of the game tells is in
them, padded, and in the env's `totals`, `winners` and `round_scores` properties.

| key               | shape, dtype      | holds                                                       |
|-------------------|-------------------|-------------------------------------------------------------|
| `round_scores`    | (rounds, n) int64 | each finished round's points per seat; -1 rows after them   |
| `totals`          | (n,) int64        | each seat's points so far (the game's `totals`)             |
| `winners`         | (n,) int8         | 1 for each seat that wins or shares the win (R16); all 0    |
|                   |                   | until the game is over, and after an illegal action         |
| `rounds_finished` | int               | how many rounds have ended                                  |

Each info's arrays are new at every round end: an array taken from an info keeps its values.

The env steps one engine, the compiled core (`cf_env.core`: the batched engine's rules at one
game). `env.game` is a copy of the game in play as a `cf_env.Game` (every hand and the
event log, for rendering, records and replays), replayed from the core's deals and actions:
reading it changes nothing, and changing the copy changes nothing in the env. On a per-step path
read `env.game_over`, `env.totals`, `env.is_legal(action)`, `env.legal_actions()` and
`env.hidden_tiles(agent)` instead; to follow a game with every hand in view, take `env.game`
after `reset` and apply each action to it beside `env.step`. `env.reset_to_game(game)` starts
the env on a `Game` (loaded into the core).

### Version History

* v1 (0.3.0): the `engine=` switch is gone (the compiled core was the default; `engine="python"`
  stepped a `Game`), and reading `env.game` no longer moves the rest of the game into a `Game`.
* v1: `reset()` without a seed continues the seeded generator (it drew fresh entropy); the infos
  have a fixed schema (the table above; `winners` were agent names, present only at the end, and
  `round_scores` a growing list) and hold no `action_mask`; each observation's mask is a new
  writeable array (it was a read-only array shared with the info); registered in PettingZoo's
  registry as `chickenfoot/chicken_foot_v1`. The observation layout is unchanged (version 2).
* v0: Initial release (observation layout version 1); observation version 2 adds the round's
  memory (who played what, draws, failures to match) and the optional `history` entry.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from operator import index as _as_index
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv

from cf_env.core import SEAT_BITS, SEAT_MASK, CoreGame
from cf_env.engine import (
    ChickenFootError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    RulesConfig,
    action_table,
    action_to_string,
)
from cf_env.engine.actions import bit_set
from cf_env.engine.errors import ResetNeededError
from cf_env.engine.scoring import REWARD_MODES, round_reward, win_reward, win_share
from cf_env.game import Game
from cf_env.observation import ObservationEncoder
from cf_env.render import render_ansi, render_rgb

__all__ = ["REWARD_MODES", "RESET_OPTIONS", "AgentNameError", "ResetNeededError", "env", "parallel_env", "raw_env"]

ILLEGAL_MODES = ("terminate", "raise")
RESET_OPTIONS = ("deals",)


class AgentNameError(ChickenFootError, ValueError):
    """An agent name that is not one of ``possible_agents``."""


def reset_deals(options: Any) -> Any:
    """The scripted deals of a ``reset(options=...)`` (``None`` when there are none). Options that
    are not a mapping, or a key that is a near miss of ``"deals"`` (``"deal"``), raise
    :class:`ConfigError`; any other key is ignored, as Gymnasium's and PettingZoo's own envs ignore
    the options they do not use (PettingZoo's ``api_test`` resets with ``{"options": 1}``)."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise ConfigError(f"reset options must be a mapping such as {{'deals': [...]}} (accepted keys: "
                          f"{list(RESET_OPTIONS)}), got {type(options).__name__}")
    unknown = sorted(str(k) for k in options if k not in RESET_OPTIONS)
    # a near miss of an accepted key is a typo whose intent is clear: refuse it
    near = {k: difflib.get_close_matches(k.lower(), RESET_OPTIONS, n=1, cutoff=0.6) for k in unknown}
    typos = {k: m[0] for k, m in near.items() if m}
    if typos:
        guess = ", ".join(f"{k!r} (did you mean {m!r}?)" for k, m in typos.items())
        raise ConfigError(f"unknown reset option {guess}; the accepted keys are {list(RESET_OPTIONS)}")
    return options.get("deals")


class raw_env(AECEnv, EzPickle):
    """The Chicken Foot AEC environment (see the module docstring for the full spec)."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "chicken_foot_v1",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 4,
        max_pip: int = 9,
        hand_size: int = 7,
        rounds: int | None = None,
        center_arms: int = 4,
        draw_rule: str = "one",
        double_blank_points: int = 50,
        reward: str = "win",
        points_scale: float = 100.0,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        history: bool = False,
        config: RulesConfig | None = None,
    ) -> None:
        EzPickle.__init__(self, num_players, max_pip, hand_size, rounds, center_arms, draw_rule,
                          double_blank_points, reward, points_scale, render_mode, illegal_action, history, config)
        super().__init__()
        rules: dict[str, Any] = {"max_pip": max_pip, "num_players": num_players, "hand_size": hand_size,
                                 "center_arms": center_arms, "draw_rule": draw_rule,
                                 "double_blank_points": double_blank_points, "rounds": rounds}
        if config is not None:  # the rules as one value: the keywords must be left at their defaults
            if not isinstance(config, RulesConfig):
                raise ConfigError(f"config must be a RulesConfig, got {config!r:.80} ({type(config).__name__})")
            given = sorted(k for k, v in rules.items() if v != _RULE_DEFAULTS[k])
            if given:
                raise ConfigError(f"give the rules as config= or as keywords, not both (got config and {given})")
            self.config = config
        else:
            self.config = RulesConfig(**{k: v for k, v in rules.items() if v is not None})  # rounds None: the full game
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if isinstance(points_scale, bool) or not isinstance(points_scale, (int, float)) or points_scale <= 0:
            raise ConfigError(f"points_scale must be a positive number, got {points_scale!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if illegal_action not in ILLEGAL_MODES:
            raise ConfigError(f"illegal_action must be one of {ILLEGAL_MODES}, got {illegal_action!r}")
        if not isinstance(history, bool):
            raise ConfigError(f"history must be True or False, got {history!r}")
        self.history = history
        self.reward_mode = reward
        self.points_scale = float(points_scale)
        self.render_mode = render_mode
        self._human = render_mode == "human"
        self.illegal_action = illegal_action
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.encoder = ObservationEncoder(self.config)
        self.num_actions = self.config.num_actions
        low, high = self.encoder.bounds()
        entries: dict[str, spaces.Space] = {
            "observation": spaces.Box(low=low, high=high, dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(self.num_actions,), dtype=np.int8),
        }
        if history:
            hlow, hhigh = self.encoder.history_bounds()
            entries["history"] = spaces.Box(low=hlow, high=hhigh, dtype=np.int16)
        obs_space = spaces.Dict(entries)
        act_space: spaces.Discrete = spaces.Discrete(self.num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._zero_mask = np.zeros(self.num_actions, dtype=np.int8)
        self._zero_mask.flags.writeable = False
        self._actions = action_table(self.config.max_pip)
        self._core: CoreGame | None = None  # the compiled core, which steps the game (made at the first reset)
        self._started = False  # reset() was called
        # the generator reset(seed) seeds and reset() continues (made at the first reset)
        self.np_random: np.random.Generator | None = None

    @property
    def game(self) -> Game | None:
        """A copy of the game in play as a :class:`~cf_env.Game` (``None`` before the first reset):
        the compiled core's deals and actions replayed into a new ``Game`` at each read. Reading it
        changes nothing in the env, and changing the copy changes nothing in the env."""
        if self._core is None or not self._started:
            return None
        return Game.replay(self.config, self._core.all_deals(), self._core.actions)

    def hidden_tiles(self, agent: str) -> np.ndarray:
        """What ``agent`` cannot see, for a critic or a belief's labels, never for a policy:
        ``(n * T,)`` float32 flags, the opponents' hands in seat order from the agent's left
        (``n - 1`` rows of ``T``), then the boneyard's tiles (the layout of
        :meth:`cf_env.vector.VectorGame.hidden_tiles` and :meth:`Game.hidden_tiles`)."""
        seat = self.agent_name_mapping[self._known(agent)]
        return self._require_core().hidden_tiles(seat)

    # -- spaces ------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self._known(agent)]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self._known(agent)]

    def _known(self, agent: Any) -> str:
        if agent not in self.agent_name_mapping:
            raise AgentNameError(f"unknown agent {agent!r}; the agents are {self.possible_agents}")
        return agent

    # -- reset / observe ---------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game. ``seed`` seeds :attr:`np_random`; without one the game is dealt from the
        generator as the last game left it (fresh entropy for an env never seeded), as
        Gymnasium's ``Env.reset`` does. ``options={"deals": [...]}`` scripts the deals."""
        deals = reset_deals(options)  # bad options are refused before anything changes
        rng = self.np_random if seed is None and self.np_random is not None else np.random.default_rng(seed)
        self.reset_with(rng, deals)
        self.np_random = rng

    def reset_with(self, rng: np.random.Generator, deals: Any = None) -> None:
        """``reset`` with a generator of the caller's (it shuffles every unscripted round, as the
        one ``reset(seed)`` makes would) and optional scripted ``deals`` (the engine's per-round
        format): for wrappers that keep a generator of their own, such as the Gymnasium env."""
        if self._core is None:
            self._core = CoreGame(self.config, self.encoder)
        status = self._core.reset(rng, deals)  # DealError before anything changes
        self._start(status >> SEAT_BITS, (status & SEAT_MASK) - 1)

    @property
    def game_over(self) -> bool:
        """Whether the game in play has ended (normally or by an illegal action); read it instead
        of ``game.is_over`` on a per-step path (:attr:`game` replays the whole game)."""
        if not self._started:
            raise ResetNeededError("call reset() before using the environment")
        return self._mask is None

    @property
    def totals(self) -> list[int]:
        """Each seat's points so far (the game's :attr:`~cf_env.Game.totals`)."""
        return self._require_core().totals

    @property
    def winners(self) -> list[int]:
        """The seats that win or share the win (R16), ``[]`` until the game is over (and after an
        illegal action); ``possible_agents[seat]`` names them. The infos' ``winners`` flags say the same."""
        if not self._started:
            raise ResetNeededError("call reset() before using the environment")
        return np.flatnonzero(self._winners).tolist()

    @property
    def round_scores(self) -> list[list[int]]:
        """The points of each finished round, one list per round in seat order (the infos'
        ``round_scores`` without the padding rows)."""
        if not self._started:
            raise ResetNeededError("call reset() before using the environment")
        return self._round_scores[:self._rounds_seen].tolist()

    @property
    def legal_bits(self) -> int:
        """The legal actions of :attr:`agent_selection` as an int whose bit ``a`` is set when action
        ``a`` is legal (:attr:`Game.legal_bits`; 0 once the game is over)."""
        if not self._started:
            raise ResetNeededError("call reset() before using the environment")
        return self._legal_bits if self._mask is not None else 0

    def is_legal(self, action: Any) -> bool:
        """Whether ``action`` (an int or numpy integer) is legal for :attr:`agent_selection` now."""
        return bit_set(self.legal_bits, action)

    def legal_actions(self) -> list[int]:
        """The sorted legal action ids of :attr:`agent_selection` (empty once the game is over)."""
        return self._actions.bits_to_actions(self._legal_bits)

    def take_reward(self, agent: str) -> float:
        """``agent``'s reward accumulated since its last turn (what ``last()`` reports), cleared:
        for wrappers that hand one seat's rewards out themselves, such as the Gymnasium env."""
        reward = float(self._cumulative_rewards.get(agent, 0.0))
        self._cumulative_rewards[agent] = 0.0
        return reward

    def reset_to_game(self, game: Game) -> None:
        """Start the env on ``game`` (a :class:`~cf_env.Game` of this env's rules, new or
        in play, such as a replayed position): the core is dealt its deals, those to come
        included (:meth:`Game.all_deals`), and stepped through its actions. ``game`` itself is
        not changed, and the env does not follow it afterwards."""
        if not isinstance(game, Game) or game.config != self.config:
            raise ConfigError(f"reset_to_game needs a Game of this env's rules {self.config}")
        if self._core is None:
            self._core = CoreGame(self.config, self.encoder)
        status = self._core.load(game.all_deals(), game.actions())
        self._start(status >> SEAT_BITS, (status & SEAT_MASK) - 1)

    def _start(self, rounds: int, seat: int) -> None:
        """The env's state for a new game that has ``rounds`` finished and ``seat`` to decide (-1: over)."""
        self._started = True
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._rewards_dirty = False
        self._rounds_seen = 0
        n = len(self.possible_agents)
        self._round_scores = np.full((self.config.rounds, n), -1, dtype=np.int64)
        self._winners = np.zeros(n, dtype=np.int8)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._refresh_infos(np.zeros(n, dtype=np.int64))
        self._illegal_ended = False
        # the mask of agent_selection, which observe() copies (None once the game is over): the
        # compiled core's live int8 flags
        self._mask: np.ndarray | None = None
        self._legal_bits = 0  # the legal actions of agent_selection, as the game's bits (set with _mask)
        if rounds:  # rounds that ended before anyone decided (1-tile hands)
            self._on_round_end(rounds)
        if seat < 0:  # a degenerate configuration can end before the first decision
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.possible_agents[0]
            self._deads_step_first()
        else:
            self._set_selection()

    def _set_selection(self) -> None:
        core = self._require_core()
        self._legal_bits = core.legal_bits
        self.agent_selection = self.possible_agents[core.current_player]
        self._mask = core.legal_flags

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self._started:
            raise ResetNeededError("call reset() before observe()")
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            seat = self.agent_name_mapping[self._known(agent)]  # raises AgentNameError
        # _mask is None whenever the game has ended (normally or by an illegal action); the env's
        # masks are its own (live or shared), so the caller gets a copy
        mask = (self._mask if agent == self.agent_selection and self._mask is not None else self._zero_mask).copy()
        core = self._core
        assert core is not None  # made by the reset
        if not self.history:
            return {"observation": core.observation(seat), "action_mask": mask}
        return {"observation": core.observation(seat), "action_mask": mask, "history": core.history(seat)}

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict]:
        """PettingZoo's ``last()`` without the base class's extra call layer (it runs every step)."""
        if not self._started or not self.agents:
            self._all_done()
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def _require_core(self) -> CoreGame:
        if self._core is None or not self._started:
            raise ResetNeededError("call reset() before using the environment")
        return self._core

    # -- step --------------------------------------------------------------------------------

    def step(self, action: int | None) -> None:
        if not self._started:
            raise ResetNeededError("call reset() before step()")
        if not self.agents:
            self._all_done()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int or action < 0 or not (self._legal_bits >> action) & 1:
            if not self.is_legal(action):
                self._illegal(agent, action)
                return
            action = _as_index(action)  # type: ignore[arg-type]  # a numpy integer
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            for a in self.rewards:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        core = self._core
        assert core is not None  # made by the reset
        rounds = core.step(action) >> SEAT_BITS
        seat = core.current_player
        self._legal_bits = int.from_bytes(core.legal_words, "little")  # CoreGame.legal_bits without the property call
        if rounds != self._rounds_seen:
            self._on_round_end(rounds)
        if seat < 0:  # the game is over
            self.terminations = dict.fromkeys(self.agents, True)
            self._mask = None
            self._deads_step_first()
        else:
            agent = self.agent_selection = self.possible_agents[seat]
            self._mask = core.legal_flags
        if self._human:
            self.render()

    def _all_done(self) -> None:
        if not self._started:
            raise ResetNeededError("call reset() before using the environment")
        raise GameOverError("the game is over and every agent has been stepped with None (the agents list is "
                            "empty); call reset() to start a new game")

    def _illegal(self, agent: str, action: Any) -> None:
        max_pip = self.config.max_pip
        legal = [f"{a} ({action_to_string(a, max_pip)})" for a in self.legal_actions()]
        if self.illegal_action == "raise":
            raise IllegalActionError(f"{agent} cannot take action {action!r}; legal actions: {legal}")
        # as PettingZoo's TerminateIllegalWrapper: -1 to the offender, the game is over
        gymnasium.logger.warn(f"[chicken_foot_v1] illegal action {action!r} by {agent}: game over, reward -1")
        self._cumulative_rewards[agent] = 0.0
        self._mask = None
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = -1.0
        self._rewards_dirty = True
        self._accumulate_rewards()
        self._illegal_ended = True
        self._deads_step_first()

    def _on_round_end(self, rounds: int) -> None:
        """Rewards and infos for every round that ended since the last call (usually one; a
        1-tile hand or an instantly blocked layout can end several in one step)."""
        source = self._require_core()
        scores, over = source.round_scores(rounds), source.current_player < 0
        if rounds:
            self._round_scores[:rounds] = scores
        n = len(self.possible_agents)
        mode = REWARD_MODES.index(self.reward_mode)
        rewards = [0.0] * n
        for pts in scores[self._rounds_seen:rounds]:
            total = sum(pts)
            for p in range(n):
                rewards[p] += round_reward(pts[p], total, n, mode, self.points_scale)
        self._rounds_seen = rounds
        if over:
            winners = source.winners
            self._winners[winners] = 1
            if self.reward_mode == "win":
                for p in range(n):
                    rewards[p] += win_reward(win_share(p in winners, len(winners)), n)
        self._refresh_infos(np.asarray(source.totals, dtype=np.int64))
        if self.reward_mode != "win" or over:
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = rewards[p]
            self._rewards_dirty = True
            self._accumulate_rewards()

    def _refresh_infos(self, totals: np.ndarray) -> None:
        """Every agent's info with new arrays of the game's results so far (the schema of the module
        docstring's table). The info dicts themselves stay, with any key a wrapper added."""
        for info in self.infos.values():
            info["round_scores"] = self._round_scores.copy()
            info["totals"] = totals.copy()
            info["winners"] = self._winners.copy()
            info["rounds_finished"] = self._rounds_seen

    # -- render ------------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._require_core()
        game = self.game
        assert game is not None  # reset above
        if self.render_mode == "rgb_array":
            return render_rgb(game)
        text = render_ansi(game)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass


#: raw_env's rule keywords at their defaults (``config=`` is refused beside any other value)
_RULE_DEFAULTS = {"num_players": 4, "max_pip": 9, "hand_size": 7, "rounds": None, "center_arms": 4, "draw_rule": "one",
                  "double_blank_points": 50}


def env(illegal_action: str = "terminate", **kwargs: Any) -> raw_env:
    """The environment most users want: ``raw_env`` whose illegal actions end the game with -1
    for the offender (``illegal_action="terminate"``, as PettingZoo's ``TerminateIllegalWrapper``)
    or raise (``"raise"``). The checks are built in rather than stacked as wrappers (they cost
    ~40% of a step when stacked); ``step``/``observe`` before ``reset`` raise
    :class:`ResetNeededError` as the order-enforcing wrapper would."""
    return raw_env(illegal_action=illegal_action, **kwargs)


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """:func:`env` as a PettingZoo ``ParallelEnv``, through PettingZoo's ``turn_based_aec_to_parallel``
    (one agent acts a step; the others' actions are ignored): what
    ``pettingzoo.make("parallel", "chickenfoot/chicken_foot_v1")`` builds."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    return turn_based_aec_to_parallel(env(**kwargs))
