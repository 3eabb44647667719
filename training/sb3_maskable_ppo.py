"""sb3-contrib's MaskablePPO on the single-agent Gymnasium env, or on the vector env's SB3
``VecEnv`` (``--num-envs N``), against chosen opponents.

    chickenfoot sb3 --steps 200000 --opponents heuristic --out runs/sb3
    chickenfoot sb3 --steps 2000000 --num-envs 1024 --opponents heuristic --out runs/sb3-vec
    chickenfoot eval sb3:runs/sb3/model.zip greedy --deal-sets 50

The learner holds one seat (a new random seat every game); every other seat is played by an agent
from ``--opponents`` (specs as in ``agents.load``: random, greedy, heuristic, a checkpoint,
zoo:NAME), acting with the env's own generator so a seeded run repeats. SB3 sees only
``obs["observation"]``; the mask reaches MaskablePPO through ``action_masks()``, so no illegal
action is ever sampled (the env is built with ``illegal_action="raise"`` to prove it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from agents.opponents import single_env_vs
from cf_env import ChickenFootSingleEnv, RulesConfig

__all__ = ["ObservationOnly", "make_env", "train"]


class ObservationOnly(gymnasium.ObservationWrapper):
    """Pass on ``obs["observation"]`` (a flat Box SB3's MlpPolicy takes); keep ``action_masks()``."""

    def __init__(self, env: ChickenFootSingleEnv) -> None:
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, gymnasium.spaces.Dict)  # the env's obs_type="dict" (its default)
        self.observation_space = space["observation"]

    def observation(self, observation: dict) -> np.ndarray:
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]  # ChickenFootGymEnv's


def make_env(rules: RulesConfig, opponents: list[str], reward: str = "relative",
             illegal_action: str = "raise") -> ObservationOnly:
    """The learner (a random seat each game) vs ``opponents`` (one spec for every other seat, or
    one per seat clockwise). ``illegal_action="terminate"`` suits checkers that step unmasked
    random actions."""
    return ObservationOnly(single_env_vs(rules, opponents, reward=reward, illegal_action=illegal_action))


def train(rules: RulesConfig, opponents: list[str], steps: int, out: Path, seed: int = 0,
          n_steps: int | None = None, batch_size: int | None = None, progress: bool = True,
          num_envs: int = 1, time_limit_minutes: float | None = None) -> dict[str, Any]:
    """Train MaskablePPO for ``steps`` learner decisions; save ``out/model.zip``; return a summary.

    ``num_envs`` 1 trains on the single-agent Gymnasium view (every opponent spec works); more
    trains on :class:`cf_env.integrations.sb3.ChickenFootVecEnv`, that many games stepped together
    by the batched engine (opponents that read the round's history are refused there).
    ``n_steps`` is SB3's rollout length per env (default 1024 for one env, ``max(8, 16384 //
    num_envs)`` for more) and ``batch_size`` its minibatch (default 256 for one env, 2048 for more).
    ``time_limit_minutes`` stops the run at that wall-clock time (after the current env step)
    when ``steps`` have not been reached by then."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    class TimeLimit(BaseCallback):
        def __init__(self, seconds: float) -> None:
            super().__init__()
            self.deadline = time.monotonic() + seconds

        def _on_step(self) -> bool:
            return time.monotonic() < self.deadline

    vector = num_envs > 1
    n_steps = n_steps if n_steps is not None else (max(8, 16384 // num_envs) if vector else 1024)
    batch_size = min(batch_size if batch_size is not None else (2048 if vector else 256), n_steps * num_envs)
    if vector:
        from cf_env.integrations.sb3 import ChickenFootVecEnv

        env: Any = ChickenFootVecEnv(num_envs, opponents=opponents, learner_seat="random", reward="relative",
                                     obs_type="box", config=rules)
    else:
        env = make_env(rules, opponents)
        env.reset(seed=seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, seed=seed, verbose=0,
                        device="cpu", policy_kwargs={"net_arch": [256, 256]})
    start = time.time()
    limit = TimeLimit(time_limit_minutes * 60) if time_limit_minutes else None
    model.learn(total_timesteps=steps, progress_bar=progress, callback=limit)
    seconds = time.time() - start
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.zip"
    model.save(str(path))
    return {"model": str(path), "steps": int(model.num_timesteps), "seconds": round(seconds, 1),
            "steps_per_second": round(model.num_timesteps / max(seconds, 1e-9), 1), "num_envs": num_envs,
            "time_limit_minutes": time_limit_minutes, "n_steps": n_steps, "batch_size": batch_size,
            "rules": rules.to_dict(), "opponents": opponents}
