"""Stable-Baselines3's ``VecEnv`` over the vector env: MaskablePPO on thousands of games at once.

    from sb3_contrib import MaskablePPO
    from cf_env.integrations.sb3 import ChickenFootVecEnv

    venv = ChickenFootVecEnv(1024, opponents=["heuristic"], num_players=4, reward="relative", obs_type="box")
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=1024, device="cpu")
    model.learn(total_timesteps=200_000)

It wraps :class:`cf_env.gym_vector.ChickenFootVectorEnv` (its arguments are the same) in SB3's
conventions: ``reset()`` returns the observations alone (their infos in ``reset_infos``);
``step_wait()`` returns ``(obs, rewards float32, dones, infos)`` with ``infos`` one dict per game;
a game that ends restarts at once, its last observation in ``info["terminal_observation"]``,
``info["TimeLimit.truncated"]`` False, and its return and length in ``info["episode"]`` (``r``,
``l``, ``t``: what SB3 logs as ``ep_rew_mean``); ``seed(s)`` seeds the next reset's one generator
(SB3's per-env seeds ``s, s + 1, ...`` are not used: one generator deals every game).
``env_method("action_masks")`` and :meth:`action_masks` give the ``(num_envs, A)`` masks sb3-contrib's
MaskablePPO reads. Extra ``sb3`` (``pip install chickenfoot-rl[sb3]``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from cf_env.engine import ConfigError
from cf_env.gym_vector import ChickenFootVectorEnv

__all__ = ["ChickenFootVecEnv"]


class ChickenFootVecEnv(VecEnv):
    """SB3's ``VecEnv`` over ``ChickenFootVectorEnv(num_envs, **kwargs)`` (see the module docstring)."""

    def __init__(self, num_envs: int = 1024, **kwargs: Any) -> None:
        self.venv = ChickenFootVectorEnv(num_envs, **kwargs)
        self.render_mode = None
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> Any:
        seed = self._seeds[0]
        obs, info = self.venv.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions.astype(np.int64, copy=False))
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            episode = info["episode"]
            for b in np.flatnonzero(dones).tolist():
                infos[b] = {"terminal_observation": info["final_obs"][b], "TimeLimit.truncated": bool(truncated[b]),
                            "episode": {"r": float(episode["r"][b]), "l": int(episode["l"][b]),
                                        "t": float(episode["t"][b])}}
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, A)`` int8."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    # SB3 reaches a sub-env's attributes and methods through these; here every game is one env,
    # so a value is the vector env's own, repeated per index (``action_masks`` is the exception:
    # one call answers for every game, and ``np.stack`` of its rows gives the same array back)
    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        if list(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ConfigError("set_attr applies to every game of the vector env at once (indices=None)")
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> Any:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return masks if rows == list(range(self.num_envs)) else masks[rows]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
