"""The observation layout Tianshou's masked policies read: ``{"obs": float32 (D,), "mask": bool (A,)}``.

Tianshou's ``DiscreteQLearningPolicy`` (DQN and its relatives) masks Q-values with ``batch.obs.mask``
and hands ``batch.obs.obs`` to the network. :class:`TianshouObservation` puts the single-agent env
(:class:`cf_env.ChickenFootSingleEnv`) into that layout. Needs only gymnasium, not Tianshou.

Why not Tianshou's own ``PettingZooEnv`` + ``MultiAgentPolicyManager`` for Chicken Foot: they keep
one buffer for all seats, so an n-step target for one seat bootstraps from the *next seat's*
observation, and the reward vector of a step counts only for the agent that acted in it — round-end
and end-of-game rewards that land on the other seats (here, every round) are lost. The
single-agent env credits a seat with everything it earned up to its next decision instead.
"""

from __future__ import annotations

import gymnasium
import numpy as np

__all__ = ["TianshouObservation"]


class TianshouObservation(gymnasium.ObservationWrapper):
    """``{"observation", "action_mask"}`` -> ``{"obs", "mask"}`` (bool), Tianshou's masking keys."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        inner = env.observation_space
        assert isinstance(inner, gymnasium.spaces.Dict)  # the gym env's {"observation", "action_mask"}
        n = gymnasium.spaces.utils.flatdim(inner["action_mask"])
        self.observation_space = gymnasium.spaces.Dict({
            "obs": inner["observation"],
            "mask": gymnasium.spaces.MultiBinary(n),
        })

    def observation(self, observation: dict) -> dict:
        return {"obs": observation["observation"], "mask": observation["action_mask"].astype(bool)}

    # Tianshou stacks infos into one array per key, so every step must carry the same keys with
    # fixed shapes: keep the seat and the game's totals so far (the variable-length round lists stay out).
    def _info(self, info: dict) -> dict:
        totals = self.env.unwrapped.aec.totals  # type: ignore[attr-defined]  # ChickenFootGymEnv's
        return {"seat": int(info["seat"]), "totals": np.asarray(totals, dtype=np.int64)}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self.observation(obs), self._info(info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.observation(obs), reward, terminated, truncated, self._info(info)
