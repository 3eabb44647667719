"""The trainer's configuration: a documented dataclass, loaded from YAML whose keys are exactly
its field names (an unknown key or a bad value is a :class:`TrainConfigError`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from cf_env import REWARD_MODES, ChickenFootError, ConfigError, RulesConfig

__all__ = ["PPOConfig", "TrainConfigError", "load_config", "require_ints"]


class TrainConfigError(ChickenFootError, ValueError):
    """A training config file or value is wrong; the message says which key and why."""


def require_ints(cfg: Any, names: tuple[str, ...], minimum: int) -> None:
    """Each named field of ``cfg`` must be an int (not a bool) >= ``minimum``."""
    what = "a positive int" if minimum == 1 else f"an int >= {minimum}"
    for name in names:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise TrainConfigError(f"{name} must be {what}, got {value!r}")


@dataclass
class PPOConfig:
    """Self-play PPO with action masking and an opponent pool.

    Experiment
        run_name, runs_dir: checkpoints and TensorBoard logs go to ``runs_dir/run_name``.
        seed: seeds numpy, torch and every game.
        torch_threads: intra-op threads for torch (the machine has 2 cores).
    Game
        rules: ``RulesConfig`` fields (empty = standard 4-player double-nine, 10 rounds).
        reward, points_scale: the env's reward mode and scale used for learning.
    Budget
        total_steps: learner decisions to train for.
        time_limit_minutes: stop (and checkpoint) after this much training time; 0 = no limit.
    Collection
        backend: ``"vector"`` (default: the batched numba engine, :mod:`cf_env.vector`) or
            ``"aec"`` (one PettingZoo env per game; slower, kept as the reference path).
        num_envs: games played in lockstep; rollout_steps: policy batches per rollout.
        self_play_prob: share of games where the policy holds every seat; in the others it holds
            one seat and each other seat gets an opponent drawn from the pool.
        pool_baselines: baseline bots in the pool; snapshots of the policy join it every
            ``snapshot_every`` updates, keeping the newest ``pool_size``.
    Network and PPO
        hidden: MLP widths. The PPO fields are CleanRL's.
    Warm start
        init_checkpoint: start from these weights (a checkpoint path or ``zoo:NAME``; same rules and
            network sizes) instead of random ones; behaviour cloning is then skipped.
        bc_games: games of the heuristic agent to imitate before PPO (0 = none); bc_epochs.
    Evaluation and checkpoints
        eval_every (updates), eval_deal_sets (duplicate deal sets per opponent, 1 vs 3),
        eval_opponents; checkpoint_every (updates).
    """

    run_name: str = "default"
    runs_dir: str = "runs"
    seed: int = 1
    torch_threads: int = 2
    rules: dict = field(default_factory=dict)
    reward: str = "relative"
    points_scale: float = 100.0
    total_steps: int = 1_000_000
    time_limit_minutes: float = 0.0
    backend: str = "vector"
    num_envs: int = 32
    rollout_steps: int = 64
    self_play_prob: float = 0.5
    pool_baselines: list = field(default_factory=lambda: ["greedy", "heuristic", "random"])
    snapshot_every: int = 20
    pool_size: int = 6
    hidden: list = field(default_factory=lambda: [256, 256])
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    update_epochs: int = 4
    num_minibatches: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    target_kl: float = 0.0
    init_checkpoint: str = ""
    bc_games: int = 0
    bc_epochs: int = 4
    eval_every: int = 25
    eval_deal_sets: int = 10
    eval_opponents: list = field(default_factory=lambda: ["greedy", "heuristic"])
    checkpoint_every: int = 10

    def __post_init__(self) -> None:
        try:
            self.rules_config  # validates the rules
        except ConfigError as exc:
            raise TrainConfigError(f"rules: {exc}") from None
        require_ints(self, ("total_steps", "num_envs", "rollout_steps", "update_epochs", "num_minibatches",
                            "snapshot_every", "pool_size", "eval_every", "checkpoint_every", "torch_threads",
                            "bc_epochs"), minimum=1)
        require_ints(self, ("bc_games", "eval_deal_sets", "seed"), minimum=0)
        for name in ("learning_rate", "points_scale"):
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) <= 0:
                raise TrainConfigError(f"{name} must be a positive number, got {getattr(self, name)!r}")
        for name in ("gamma", "gae_lambda", "self_play_prob"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise TrainConfigError(f"{name} must be in [0, 1], got {value!r}")
        if self.backend not in ("vector", "aec"):
            raise TrainConfigError(f"backend must be 'vector' or 'aec', got {self.backend!r}")
        if self.reward not in REWARD_MODES:
            raise TrainConfigError(f"reward must be one of {REWARD_MODES}, got {self.reward!r}")
        if not isinstance(self.init_checkpoint, str):
            raise TrainConfigError(f"init_checkpoint must be a path or 'zoo:NAME' string, got {self.init_checkpoint!r}")
        if not self.hidden or not all(isinstance(h, int) and h > 0 for h in self.hidden):
            raise TrainConfigError(f"hidden must be a list of positive ints, got {self.hidden!r}")
        from agents import BASELINES

        for name in ("pool_baselines", "eval_opponents"):
            bad = [b for b in getattr(self, name) if b not in BASELINES and not str(b).startswith("zoo:")]
            if bad:
                raise TrainConfigError(f"{name} has unknown agents {bad}; use {sorted(BASELINES)} or zoo:NAME")
        if self.self_play_prob < 1.0 and not self.pool_baselines:
            raise TrainConfigError("pool_baselines is empty but self_play_prob < 1 needs opponents")

    # derived sizes are properties, not fields
    @property
    def rules_config(self) -> RulesConfig:
        return RulesConfig.from_dict(self.rules)

    @property
    def batch_size(self) -> int:
        """Learner decisions per rollout (about: a few stay pending until their next turn)."""
        return self.num_envs * self.rollout_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.batch_size)

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.run_name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_config(path: str | Path, cls: type = PPOConfig, **overrides: Any) -> Any:
    """Read a YAML config into the dataclass ``cls`` (default :class:`PPOConfig`); ``overrides``
    replace keys (e.g. from the command line; ``None`` values are ignored)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise TrainConfigError(f"no config file at {path}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TrainConfigError(f"{path} must hold a mapping of config keys, got {type(data).__name__}")
    data.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise TrainConfigError(f"{path}: unknown keys {unknown}; valid keys are {sorted(known)}")
    try:
        return cls(**data)
    except TypeError as exc:
        raise TrainConfigError(f"{path}: {exc}") from None
