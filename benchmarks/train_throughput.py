"""Training throughput: our self-play PPO trainer (batched engine and AEC backends) vs
sb3-contrib's MaskablePPO, same run.

All train the same network size ([256, 256], 4 epochs, 4 minibatches per 2048-decision batch)
for the same number of learner decisions on 4-player double-nine; MaskablePPO runs on the
single-agent ``ChickenFoot-v1`` env against random opponents (its env steps include theirs).
Prints JSON with decisions/s including updates, medians over ``--runs``, and the ratios.

    python benchmarks/train_throughput.py --steps 20480 --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time


def ours(steps: int, seed: int, backend: str = "vector") -> dict[str, float]:
    from training.config import PPOConfig
    from training.ppo import Trainer

    # 2048 decisions per update either way: 256 games x 8 steps (vector) or 32 envs x 64 (aec)
    envs, rollout = (256, 8) if backend == "vector" else (32, 64)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = PPOConfig(run_name="bench", runs_dir=tmp, seed=seed, total_steps=steps, num_envs=envs, backend=backend,
                        rollout_steps=rollout, bc_games=0, eval_every=10**6, eval_deal_sets=0, checkpoint_every=10**6,
                        snapshot_every=10**6, self_play_prob=1.0, update_epochs=4, num_minibatches=4)
        summary = Trainer(cfg, progress=False).run()
    return summary


def maskable(steps: int, seed: int) -> dict[str, float]:
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from cf_env import ChickenFootSingleEnv

    torch.set_num_threads(2)
    counter = {"opponent": 0}
    rng = np.random.default_rng(seed)

    def counting(observation):  # uniform random legal, as the env's default opponents, counted
        counter["opponent"] += 1
        return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    env = ChickenFootSingleEnv(reward="relative", opponents=counting)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=2048, batch_size=512, n_epochs=4, seed=seed,
                        policy_kwargs={"net_arch": [256, 256]}, verbose=0, device="cpu")
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    dt = time.perf_counter() - t0
    return {"learner_steps_per_second": steps / dt, "env_steps_per_second": (steps + counter["opponent"]) / dt}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20480)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    a, aec, b = [], [], []
    for r in range(args.runs):
        a.append(ours(args.steps, r))
        aec.append(ours(args.steps, r, backend="aec"))
        b.append(maskable(args.steps, r))
    med = lambda rows, k: statistics.median(x[k] for x in rows)  # noqa: E731
    out = {
        "benchmark": "training_throughput",
        "config": "4 players, double-nine, 10 rounds; MLP [256, 256]; 2048 decisions per update, 4 epochs",
        "learner_steps": args.steps,
        "runs": args.runs,
        "ours_env_steps_per_s": round(med(a, "env_steps_per_second")),
        "ours_learner_steps_per_s": round(med(a, "learner_steps_per_second")),
        "ours_aec_backend_env_steps_per_s": round(med(aec, "env_steps_per_second")),
        "maskable_ppo_env_steps_per_s": round(med(b, "env_steps_per_second")),
        "maskable_ppo_learner_steps_per_s": round(med(b, "learner_steps_per_second")),
    }
    out["ratio_env_steps"] = round(out["ours_env_steps_per_s"] / out["maskable_ppo_env_steps_per_s"], 2)
    out["ratio_learner_steps"] = round(out["ours_learner_steps_per_s"] / out["maskable_ppo_learner_steps_per_s"], 2)
    out["ratio_vector_vs_aec_backend"] = round(out["ours_env_steps_per_s"] / out["ours_aec_backend_env_steps_per_s"], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
