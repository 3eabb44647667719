"""The trainers' configurations: validated models loaded from YAML whose keys are exactly their
field names.

Every field is typed and range-checked when the file is loaded, before any work starts (pydantic
v2). A wrong key or value is a :class:`TrainConfigError` whose message names the file, the field,
the value and what is allowed. Numbers may be written as YAML reads them or as strings
(``learning_rate: 3e-4``, which PyYAML reads as a string, means 0.0003); booleans may be
``true``/``false`` in any of YAML's or pydantic's spellings; a boolean is never taken for a number.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from cf_env import ChickenFootError, ConfigError, RulesConfig

__all__ = ["NetworkTrainerConfig", "PPOConfig", "RunConfig", "TrainConfigError", "check_agent_specs", "check_teacher",
           "load_config"]


class TrainConfigError(ChickenFootError, ValueError):
    """A training config file or value is wrong; the message says which key and why."""


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number is needed, not a boolean")
    return value


_Number = BeforeValidator(_not_bool)
PositiveInt = Annotated[int, _Number, Field(ge=1)]
NonNegativeInt = Annotated[int, _Number, Field(ge=0)]
PositiveFloat = Annotated[float, _Number, Field(gt=0)]
NonNegativeFloat = Annotated[float, _Number, Field(ge=0)]
Probability = Annotated[float, _Number, Field(ge=0, le=1)]


def _describe(exc: ValidationError, known: list[str]) -> str:
    """One clause per problem: ``field = value: what is allowed``."""
    lines = []
    unknown = [".".join(str(part) for part in err["loc"]) for err in exc.errors() if err["type"] == "extra_forbidden"]
    if unknown:
        lines.append(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; valid keys "
                     f"are {known}")
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"]) or "config"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            continue
        elif err["type"] == "missing":
            lines.append(f"{where}: {message}")
        else:
            lines.append(f"{where} = {err['input']!r:.80}: {message}")
    return "; ".join(lines)


class RunConfig(BaseModel):
    """Fields every trainer shares.

    Experiment
        run_name, runs_dir: checkpoints and TensorBoard logs go to ``runs_dir/run_name``.
        seed: seeds numpy, torch and every game.
    Game
        rules: ``RulesConfig`` fields (empty = standard 4-player double-nine, 10 rounds).
        reward, points_scale: the env's reward mode and scale used for learning.
    Budget
        time_limit_minutes: stop (and checkpoint) after this much training time; 0 = no limit.
    Network
        hidden: MLP widths.
        action_head: width of the action-scoring head added to the policy head
            (:class:`agents.torch_policy.ActionScorer`); 0 (default) for the linear head alone.
    Checkpoints
        checkpoint_every: updates (iterations for RLlib) between checkpoints.
    Machine
        device: where the network trains and acts: ``cpu`` (default), ``cuda``, or ``auto`` (cuda
            when torch sees a GPU, else cpu); ``--device`` on ``train``/``eval`` overrides it.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    run_name: str = Field("default", min_length=1)
    runs_dir: str = Field("runs", min_length=1)
    seed: NonNegativeInt = 1
    rules: dict[str, Any] = Field(default_factory=dict)
    reward: Literal["win", "points", "relative"] = "relative"
    points_scale: PositiveFloat = 100.0
    time_limit_minutes: NonNegativeFloat = 0.0
    hidden: list[PositiveInt] = Field(default_factory=lambda: [256, 256], min_length=1)
    action_head: NonNegativeInt = 0
    checkpoint_every: PositiveInt = 10
    device: str = "cpu"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise self._error(exc) from None

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise self._error(exc) from None

    @classmethod
    def _error(cls, exc: ValidationError) -> TrainConfigError:
        return TrainConfigError(_describe(exc, sorted(cls.model_fields)))

    @field_validator("rules")
    @classmethod
    def _valid_rules(cls, rules: dict[str, Any]) -> dict[str, Any]:
        try:
            RulesConfig.from_dict(rules)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return rules

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        from agents.spec import check_device

        return check_device(device)  # a DeviceError (a ValueError) names what is allowed

    @property
    def rules_config(self) -> RulesConfig:
        return RulesConfig.from_dict(self.rules)

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.run_name

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def check_agent_specs(specs: list[str]) -> list[str]:
    """A config's list of agent specs, each checked (baselines, ``zoo:NAME``, ``search[...]``:
    :func:`agents.spec.parse_spec`); a search spec's parameters by the search's own parser, whose
    message names the bad one."""
    from agents.search import SearchSpecError, parse_search_spec
    from agents.spec import BASELINE_NAMES, AgentSpecError, parse_spec

    bad, searches = [], []
    for spec in specs:
        try:
            parsed = parse_spec(spec)
        except SearchSpecError:
            raise  # its message names the bad part
        except AgentSpecError:
            bad.append(spec)
            continue
        if parsed.kind == "search":
            searches.append(spec)
        elif parsed.kind not in ("baseline", "python") and not parsed.argument.startswith("zoo:"):
            bad.append(spec)
    if bad:
        raise ValueError(f"unknown agents {bad}; use {sorted(BASELINE_NAMES)}, zoo:NAME, search[:name=value...] or "
                         f"module:Class")
    for spec in searches:
        parse_search_spec(spec)  # its message names the bad parameter
    return specs


def check_teacher(spec: str) -> str:
    """A distillation teacher: a PIMC ``search`` spec (its targets are per-action values)."""
    from agents.search import parse_search_spec
    from agents.spec import parse_spec

    if parse_spec(spec).kind != "search":
        raise ValueError("the teacher must be a search spec, e.g. search:ms=0:sims=256:race=2")
    if parse_search_spec(spec).algo != "pimc":
        raise ValueError("the teacher must use algo=pimc (its targets are per-action values)")
    return spec


class NetworkTrainerConfig(RunConfig):
    """Fields of the trainers that fit :class:`agents.torch_policy.ActorCritic` in this process
    (PPO, expert iteration), and the behaviour-cloning warm start they share (:mod:`training.bc`).

    Warm start
        init_checkpoint: start from these weights (a checkpoint path or ``zoo:NAME``; same rules and
            network sizes) instead of random ones; behaviour cloning is then skipped.
        bc_games: games of the heuristic agent to imitate first (0 = none); bc_epochs.
    Learning
        learning_rate (Adam's), gamma (discount of the value targets), vf_coef (value-loss weight),
        max_grad_norm.
    Evaluation
        eval_deal_sets: duplicate deal sets per opponent, 1 vs the rest (0 = none).
    Machine
        torch_threads: intra-op threads for torch (the machine has 2 cores).
    """

    torch_threads: PositiveInt = 2
    learning_rate: PositiveFloat = 3e-4
    init_checkpoint: str = ""
    bc_games: NonNegativeInt = 0
    bc_epochs: PositiveInt = 4
    gamma: Probability = 0.99
    vf_coef: NonNegativeFloat = 0.5
    max_grad_norm: PositiveFloat = 0.5
    eval_deal_sets: NonNegativeInt = 10


class PPOConfig(NetworkTrainerConfig):
    """Self-play PPO with action masking and an opponent pool (and :class:`RunConfig`'s fields).

    Budget
        total_steps: learner decisions to train for.
    Collection
        backend: ``"vector"`` (default: the batched numba engine, :mod:`cf_env.vector`) or
        ``"aec"`` (one PettingZoo env per game; slower, kept as the reference path).
        num_envs: games played in lockstep; rollout_steps: policy batches per rollout.
        self_play_prob: share of games where the policy holds every seat; in the others it holds
        one seat and each other seat gets an opponent drawn from the pool.
        pool_baselines: baseline bots in the pool; snapshots of the policy join it every
        ``snapshot_every`` updates, keeping the newest ``pool_size`` (older snapshot files are
        deleted: the pool can no longer draw them).
    PPO
        CleanRL's names; ``num_minibatches`` may not exceed ``num_envs * rollout_steps``.
    Evaluation
        eval_every (updates between evaluations; 0: none during training, only the final one,
        which ``eval_deal_sets: 0`` switches off too), eval_opponents.
    """

    total_steps: PositiveInt = 1_000_000
    backend: Literal["vector", "aec"] = "vector"
    num_envs: PositiveInt = 32
    rollout_steps: PositiveInt = 64
    self_play_prob: Probability = 0.5
    pool_baselines: list[str] = Field(default_factory=lambda: ["greedy", "heuristic", "random"])
    snapshot_every: PositiveInt = 20
    pool_size: PositiveInt = 6
    anneal_lr: bool = True
    gae_lambda: Probability = 0.95
    update_epochs: PositiveInt = 4
    num_minibatches: PositiveInt = 4
    clip_coef: PositiveFloat = 0.2
    ent_coef: NonNegativeFloat = 0.01
    norm_adv: bool = True
    target_kl: NonNegativeFloat = 0.0
    eval_every: NonNegativeInt = 25
    eval_opponents: list[str] = Field(default_factory=lambda: ["greedy", "heuristic"])

    @field_validator("pool_baselines", "eval_opponents")
    @classmethod
    def _known_agents(cls, specs: list[str]) -> list[str]:
        return check_agent_specs(specs)

    @model_validator(mode="after")
    def _consistent(self) -> PPOConfig:
        if self.num_minibatches > self.batch_size:
            raise ValueError(f"num_minibatches ({self.num_minibatches}) exceeds num_envs x rollout_steps "
                             f"({self.batch_size}): every minibatch needs at least one decision")
        if self.self_play_prob < 1.0 and not self.pool_baselines:
            raise ValueError("pool_baselines is empty but self_play_prob < 1 needs opponents")
        return self

    @property
    def batch_size(self) -> int:
        """Learner decisions per rollout (about: a few stay pending until their next turn)."""
        return self.num_envs * self.rollout_steps


def load_config(path: str | Path, cls: type[RunConfig] = PPOConfig, **overrides: Any) -> Any:
    """Read a YAML config into ``cls`` (default :class:`PPOConfig`); ``overrides`` replace keys
    (e.g. from the command line; ``None`` values are ignored). An error an override causes names
    the command line's flag, not the file."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise TrainConfigError(f"no config file at {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TrainConfigError(f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{path} is not valid YAML: {exc}") from None
    if data is None:
        raise TrainConfigError(f"{path} is empty; write the keys to set (an empty mapping '{{}}' takes "
                               f"every default)")
    if not isinstance(data, dict):
        raise TrainConfigError(f"{path} must hold a mapping of config keys, got {type(data).__name__}")
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise TrainConfigError(f"{path}: keys must be field names, got {bad_keys}")
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return cls(**{**data, **given})
    except TrainConfigError as exc:
        # blame the command line when the file alone is fine and the message names an override
        blamed = [k for k in given if re.search(rf"\b{k}\b", str(exc))]
        if blamed:
            try:
                cls(**data)
            except TrainConfigError:
                pass
            else:
                flags = ", ".join(f"--{k.replace('_', '-')} {given[k]}" for k in blamed)
                raise TrainConfigError(f"command line ({flags}): {exc}") from None
        raise TrainConfigError(f"{path}: {exc}") from None
