"""sb3-contrib's MaskablePPO on the single-agent Gymnasium env, against chosen opponents.

    python -m training.sb3_maskable_ppo --steps 200000 --opponents heuristic --out runs/sb3
    chickenfoot eval sb3:runs/sb3/model.zip greedy --deal-sets 50

The learner holds one seat (a new random seat every game); every other seat is played by an agent
from ``--opponents`` (specs as in ``agents.load``: random, greedy, heuristic, a checkpoint,
zoo:NAME), acting with the env's own generator so a seeded run repeats. SB3 sees only
``obs["observation"]``; the mask reaches MaskablePPO through ``action_masks()``, so no illegal
action is ever sampled (the env is built with ``illegal_action="raise"`` to prove it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch

import agents
from agents.opponents import single_env_vs
from cf_env import ChickenFootSingleEnv, ConfigError, RulesConfig

__all__ = ["ObservationOnly", "make_env", "main", "train"]


class ObservationOnly(gymnasium.ObservationWrapper):
    """Pass on ``obs["observation"]`` (a flat Box SB3's MlpPolicy takes); keep ``action_masks()``."""

    def __init__(self, env: ChickenFootSingleEnv) -> None:
        super().__init__(env)
        self.observation_space = env.observation_space["observation"]

    def observation(self, observation: dict) -> np.ndarray:
        return observation["observation"]

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def make_env(rules: RulesConfig, opponents: list[str], reward: str = "relative",
             illegal_action: str = "raise") -> ObservationOnly:
    """The learner (a random seat each game) vs ``opponents`` (one spec for every other seat, or
    one per seat clockwise). ``illegal_action="terminate"`` suits checkers that step unmasked
    random actions."""
    return ObservationOnly(single_env_vs(rules, opponents, reward=reward, illegal_action=illegal_action))


def train(rules: RulesConfig, opponents: list[str], steps: int, out: Path, seed: int = 0,
          n_steps: int = 1024, batch_size: int = 256, progress: bool = True) -> dict[str, Any]:
    """Train MaskablePPO for ``steps`` learner decisions; save ``out/model.zip``; return a summary."""
    from sb3_contrib import MaskablePPO

    env = make_env(rules, opponents)
    env.reset(seed=seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, seed=seed, verbose=0,
                        device="cpu", policy_kwargs={"net_arch": [256, 256]})
    start = time.time()
    model.learn(total_timesteps=steps, progress_bar=progress)
    seconds = time.time() - start
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.zip"
    model.save(str(path))
    return {"model": str(path), "steps": int(model.num_timesteps), "seconds": round(seconds, 1),
            "steps_per_second": round(model.num_timesteps / max(seconds, 1e-9), 1),
            "rules": rules.to_dict(), "opponents": opponents}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.sb3_maskable_ppo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="learner decisions to train for")
    parser.add_argument("--opponents", nargs="+", default=["heuristic"], help="agent specs for the other seats")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--max-pip", type=int, default=9)
    parser.add_argument("--rounds", type=int, default=None, help="rounds per game (default: the full game)")
    parser.add_argument("--out", default="runs/sb3", help="folder for model.zip and summary.json")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-steps", type=int, default=1024, help="MaskablePPO rollout length")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch intra-op threads (1 is fastest for these small batches)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, args.torch_threads))
    try:
        rules = RulesConfig(num_players=args.players, max_pip=args.max_pip, rounds=args.rounds)
        summary = train(rules, args.opponents, args.steps, Path(args.out), seed=args.seed, n_steps=args.n_steps,
                        batch_size=min(256, args.n_steps), progress=not args.no_progress)
    except (ValueError, ConfigError, agents.AgentSpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    Path(args.out, "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    rules_flags = f" --players {args.players} --max-pip {args.max_pip}" + (f" --rounds {args.rounds}" if args.rounds else "")
    print(f"evaluate with: chickenfoot eval sb3:{summary['model']} {args.opponents[0]}{rules_flags} --deal-sets 50")
    return 0


if __name__ == "__main__":
    sys.exit(main())
