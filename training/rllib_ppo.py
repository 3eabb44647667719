"""Self-play PPO with RLlib (new API stack), locally or spread over a Ray cluster.

    chickenfoot rllib --config configs/rllib.yaml                  # local Ray
    chickenfoot rllib --config configs/rllib.yaml --address HEAD:6379   # join a cluster

One RLModule shared by every seat (``policies: shared``; the observation is seat-relative) or one
per seat (``policies: per_seat``), each an action-masking PPO module
(:class:`agents.rllib_module.MaskedPPOTorchRLModule`) over
:class:`cf_env.integrations.rllib.ChickenFootMultiAgentEnv`. With ``--address`` the env runners are
Ray actors placed anywhere on the cluster (every node needs this package installed, see docs/frameworks.md).

Writes ``runs_dir/run_name/``: RLlib checkpoints (``checkpoint/``, resumable with ``--resume``) and,
after every checkpoint, each module exported to this project's checkpoint format
(``<module>.pt``), which ``chickenfoot eval`` and ``agents.load`` read without Ray.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from training.config import RLlibConfig, TrainConfigError
from training.workers import ClusterConnectError, join_cluster

__all__ = ["ClusterConnectError", "RLlibConfig", "build_algorithm", "export_module", "train"]


def build_algorithm(cfg: RLlibConfig):
    """The RLlib PPO ``Algorithm`` for ``cfg`` (Ray must be initialised)."""
    from ray.rllib.algorithms.ppo import PPOConfig as RLlibPPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import MaskedPPOTorchRLModule
    from cf_env.integrations.rllib import ChickenFootMultiAgentEnv

    model_config = {"fcnet_hiddens": list(cfg.hidden), "fcnet_activation": "tanh",
                    "head_fcnet_hiddens": [], "vf_share_layers": True}
    modules = {m: RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config=model_config)
               for m in cfg.module_ids()}
    if cfg.policies == "shared":
        def mapping(agent_id, episode, **kwargs):
            return "shared"
    else:
        def mapping(agent_id, episode, **kwargs):
            return agent_id
    config = (
        RLlibPPOConfig()
        .environment(ChickenFootMultiAgentEnv, env_config=cfg.env_config(),
                     # RLlib's checker steps unmasked random actions, which this env rejects by design
                     disable_env_checking=True)
        .framework("torch")
        # RLlib annotates num_cpus_per_env_runner as int and takes fractions of a CPU
        .env_runners(num_env_runners=cfg.num_env_runners, num_envs_per_env_runner=cfg.num_envs_per_env_runner,
                     num_cpus_per_env_runner=cfg.num_cpus_per_env_runner)  # type: ignore[arg-type]
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=cfg.train_batch_size, minibatch_size=cfg.minibatch_size,
                  num_epochs=cfg.num_epochs, lr=cfg.lr, gamma=cfg.gamma, lambda_=cfg.lambda_,
                  clip_param=cfg.clip_param, entropy_coeff=cfg.entropy_coeff, vf_loss_coeff=cfg.vf_loss_coeff)
        .debugging(seed=cfg.seed)
    )
    return config.build_algo()


def export_module(module, cfg: RLlibConfig, path: str | Path, step: int = 0) -> Path:
    """Copy an RLlib module's weights into this project's checkpoint format (an
    :class:`agents.torch_policy.ActorCritic` with the same layers), readable without Ray."""
    import torch
    from torch import nn

    from agents.checkpoint import model_payload, save_checkpoint
    from agents.torch_policy import ActorCritic

    rules = cfg.rules_config
    encoder_linears = [m for m in module.encoder.modules() if isinstance(m, nn.Linear)]
    pi = [m for m in module.pi.modules() if isinstance(m, nn.Linear)]
    vf = [m for m in module.vf.modules() if isinstance(m, nn.Linear)]
    if len(encoder_linears) != len(cfg.hidden) or len(pi) != 1 or len(vf) != 1:
        raise TrainConfigError(f"cannot export: the module has {len(encoder_linears)} encoder layers, "
                               f"{len(pi)} policy and {len(vf)} value layers; expected {len(cfg.hidden)}, 1, 1")
    obs_dim = encoder_linears[0].in_features
    model = ActorCritic(obs_dim, rules.num_actions, tuple(cfg.hidden), obs_scale=None)
    ours = [m for m in model.trunk if isinstance(m, nn.Linear)] + [model.policy, model.value]
    with torch.no_grad():
        for dst, src in zip(ours, encoder_linears + pi + vf):
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)
    return save_checkpoint(Path(path), model_payload(model, rules, step, {"trainer": "rllib", **cfg.to_dict()}))


def _export_all(algo, cfg: RLlibConfig, step: int) -> list[str]:
    learner = algo.learner_group._learner  # local learner (num_learners=0, the default)
    paths = []
    for mid in cfg.module_ids():
        paths.append(str(export_module(learner.module[mid], cfg, cfg.run_dir / f"{mid}.pt", step)))
    return paths


def train(cfg: RLlibConfig, address: str | None = None, resume: bool = False,
          progress: bool = True) -> dict[str, Any]:
    """Run ``cfg``; returns a summary (iterations, env steps, timing, exported checkpoints)."""
    import ray
    from tqdm.auto import tqdm

    if address:
        join_cluster(address)
    elif not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    cfg.run_dir.mkdir(parents=True, exist_ok=True)
    ckpt_dir = (cfg.run_dir / "checkpoint").resolve()
    algo = build_algorithm(cfg)
    try:
        if resume:
            if not ckpt_dir.exists():
                raise TrainConfigError(f"--resume: no RLlib checkpoint at {ckpt_dir}")
            algo.restore_from_path(str(ckpt_dir))
        start = time.time()
        env_steps = 0
        bar = tqdm(total=cfg.iterations, desc="rllib", unit="it", disable=not progress, dynamic_ncols=True)
        result: dict[str, Any] = {}
        for it in range(1, cfg.iterations + 1):
            if cfg.time_limit_minutes and time.time() - start >= cfg.time_limit_minutes * 60:
                break
            result = algo.train()
            env_steps = int(result.get("env_runners", {}).get("num_env_steps_sampled_lifetime", env_steps))
            returns = result.get("env_runners", {}).get("agent_episode_returns_mean", {})
            bar.update(1)
            bar.set_postfix({"env_steps": env_steps, "sps": f"{env_steps / max(time.time() - start, 1e-9):.0f}"})
            if it % cfg.checkpoint_every == 0 and it < cfg.iterations:  # the last one is saved below
                algo.save_to_path(str(ckpt_dir))
                _export_all(algo, cfg, env_steps)
        bar.close()
        algo.save_to_path(str(ckpt_dir))
        exported = _export_all(algo, cfg, env_steps)
        elapsed = time.time() - start
        summary = {
            "iterations": int(result.get("training_iteration", 0)), "env_steps": env_steps,
            "seconds": round(elapsed, 1), "env_steps_per_second": round(env_steps / max(elapsed, 1e-9), 1),
            "checkpoint": str(ckpt_dir), "exported": exported,
            "agent_episode_returns_mean": {k: round(float(v), 4) for k, v in returns.items()},
            "env_runner_nodes": sorted({n["NodeManagerAddress"] for n in ray.nodes() if n.get("Alive")}),
        }
        from training.provenance import write_report

        write_report(cfg.run_dir / "summary.json", summary, exported)
        return summary
    finally:
        algo.stop()
        ray.shutdown()
