"""Chicken Foot as an RLlib ``MultiAgentEnv`` for RLlib's current (new) API stack.

    from ray.rllib.algorithms.ppo import PPOConfig
    from cf_env.integrations.rllib import ChickenFootMultiAgentEnv
    config = PPOConfig().environment(ChickenFootMultiAgentEnv, env_config={"num_players": 4})

Turn-based, as RLlib expects: ``reset`` and ``step`` return an observation only for the agent that
must decide next (the same agent again after a playable draw), and at the end of the game a final
observation for every agent with ``terminateds["__all__"] = True``. Every step returns a reward for
every agent (0.0 when nothing happened to it), so rewards that arrive between an agent's turns —
round ends, the game's end — are added by RLlib to that agent's last action.

Observations are ``Dict(observations=Box(float32, (D,)), action_mask=Box(0, 1, (A,), float32))``:
the key names and float dtypes of RLlib's action-masking convention, which
:class:`agents.rllib_module.MaskedPPOTorchRLModule` reads. ``env_config`` takes the AEC env's
keyword arguments (``config``, a :class:`~cf_env.RulesConfig`, or the rules fields; ``reward``,
``points_scale``, ``history``: True adds the AEC env's ``history`` entry, the round's public
events); an illegal action raises
:class:`cf_env.IllegalActionError` (a masking module never takes one).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from cf_env.chicken_foot import raw_env
from cf_env.engine import ConfigError

__all__ = ["ChickenFootMultiAgentEnv", "HISTORY_KEY", "OBS_KEY", "MASK_KEY"]

OBS_KEY = "observations"
MASK_KEY = "action_mask"
HISTORY_KEY = "history"


class ChickenFootMultiAgentEnv(MultiAgentEnv):
    """RLlib multi-agent view of :func:`cf_env.raw_env` (agents ``player_0 … player_{n-1}``)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        kwargs = dict(config or {})
        if "illegal_action" in kwargs or "render_mode" in kwargs:
            raise ConfigError("env_config takes config (a RulesConfig) or the rules fields, reward and points_scale; "
                              "illegal actions always raise and rendering goes through .aec")
        self.aec = raw_env(**kwargs, illegal_action="raise")
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        inner = self.aec.observation_space(self.possible_agents[0])["observation"]
        n_actions = self.aec.num_actions
        entries = {
            OBS_KEY: gymnasium.spaces.Box(inner.low, inner.high, inner.shape, np.float32),
            MASK_KEY: gymnasium.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
        }
        if self.aec.history:  # env_config {"history": True}: the AEC env's entry, as it is
            entries[HISTORY_KEY] = self.aec.observation_space(self.possible_agents[0])[HISTORY_KEY]
        space = gymnasium.spaces.Dict(entries)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: gymnasium.spaces.Discrete(n_actions) for a in self.possible_agents}

    def _obs(self, agent: str) -> dict[str, np.ndarray]:
        o = self.aec.observe(agent)
        if self.aec.history:
            return {OBS_KEY: o["observation"], MASK_KEY: o["action_mask"].astype(np.float32),
                    HISTORY_KEY: o[HISTORY_KEY]}
        return {OBS_KEY: o["observation"], MASK_KEY: o["action_mask"].astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.aec.reset(seed=seed, options=options)
        if self.aec.game_over:  # only degenerate configs end before a decision
            return {a: self._obs(a) for a in self.possible_agents}, {}
        agent = self.aec.agent_selection
        return {agent: self._obs(agent)}, {}

    def step(self, action_dict: dict[str, Any]):
        aec = self.aec
        agent = aec.agent_selection
        if agent not in action_dict:
            raise ConfigError(f"it is {agent}'s turn, but the action dict holds {sorted(action_dict)}")
        action = action_dict[agent]
        aec.step(int(action))
        rewards = {a: float(r) for a, r in aec.rewards.items()}
        if aec.game_over:
            obs = {a: self._obs(a) for a in self.possible_agents}
            infos = {a: dict(aec.infos[a]) for a in self.possible_agents}  # the AEC env's fixed-schema infos
            done = dict.fromkeys(self.possible_agents, True)
            return obs, rewards, {**done, "__all__": True}, {"__all__": False}, infos
        nxt = aec.agent_selection
        return {nxt: self._obs(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str:
        from cf_env.render import render_ansi

        return render_ansi(self.aec.game)
