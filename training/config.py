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
from training.fit import FitSettings

__all__ = ["CONFIGS_DIR", "DEFAULT_TEACHER", "DMCConfig", "DistillConfig", "ExpertConfig", "NetworkTrainerConfig", "PPOConfig",
           "RLlibConfig", "RunConfig", "SelfPlayConfig", "TeacherConfig", "TrainConfigError", "check_agent_specs",
           "check_teacher", "config_path", "load_config", "packaged_configs"]

#: The packaged configs (package data of :mod:`training`, so a wheel has them; the repository's
#: top-level ``configs/`` is a link to this folder). ``--config NAME`` reads ``NAME.yaml`` here.
CONFIGS_DIR = Path(__file__).resolve().parent / "configs"

#: The distillation and expert-iteration teacher: racing PIMC, at most 256 worlds, no clock.
DEFAULT_TEACHER = "search:ms=0:sims=256:race=2"


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


def _shown(value: Any, limit: int = 160) -> str:
    """``repr(value)``, shortened past ``limit`` characters with a visible ``...`` (never cut silently)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]} ..."


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
            lines.append(f"{where} = {_shown(err['input'])}: {message}")
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
        trunk: the hidden layers' kind, ``tanh`` (default) or ``layernorm`` (linear, layer
        normalisation, ReLU; :class:`agents.torch_policy.ActorCritic`).
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
    trunk: Literal["tanh", "layernorm"] = "tanh"
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
        parse_search_spec(spec, player=True)  # its message names the bad parameter
    return specs


def check_teacher(spec: str) -> str:
    """A distillation teacher: a PIMC ``search`` spec (its targets are per-action values), or
    ``module:Class`` of a :class:`~agents.search.SearchAgent` subclass (checked when it is loaded)."""
    from agents.search import parse_search_spec
    from agents.spec import parse_spec

    kind = parse_spec(spec).kind
    if kind == "python":
        return spec
    if kind != "search":
        raise ValueError("the teacher must be a search spec, e.g. search:ms=0:sims=256:race=2 (or module:Class of "
                         "a SearchAgent subclass)")
    if parse_search_spec(spec).algo != "pimc":
        raise ValueError("the teacher must use algo=pimc (its targets are per-action values)")
    return spec


class NetworkTrainerConfig(RunConfig):
    """Fields of the trainers that fit :class:`agents.torch_policy.ActorCritic` in this process
    (PPO, expert iteration), and the behaviour-cloning warm start they share (:mod:`training.bc`).

    Warm start
        init_checkpoint: start from these weights (a checkpoint path or ``zoo:NAME``; same rules and
        network sizes) instead of random ones; behaviour cloning is then skipped. With
        ``:temperature=T`` the network starts as the policy that spec plays, ``softmax(logits /
        T)`` (its linear policy head scaled by ``1 / T``): a distilled network's argmax plays far
        better than its softmax samples (``zoo:strong-4p``: 55% against 26% as 1 vs 3 heuristic),
        and PPO improves the sampled policy, so a fine-tune can start from a sharper one
        (``temperature=0.1``: 50.5% sampled).
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

    @field_validator("init_checkpoint")
    @classmethod
    def _a_checkpoint(cls, spec: str) -> str:
        """A checkpoint spec (a path or ``zoo:NAME``), with ``temperature=T`` its only parameter."""
        if spec:
            from agents import checkpoint_temperature, parse_spec

            if parse_spec(spec).kind != "checkpoint":
                raise ValueError(f"init_checkpoint {spec!r} is not a checkpoint (a path or zoo:NAME)")
            checkpoint_temperature(spec)  # AgentSpecError (a ValueError) names a bad parameter
        return spec


class SelfPlayConfig(NetworkTrainerConfig):
    """Fields of the trainers that learn from their own games on the batched engine against an
    opponent pool (PPO, :class:`PPOConfig`; Deep Monte-Carlo, :class:`DMCConfig`), and
    :class:`RunConfig`'s.

    Budget
        total_steps: learner decisions to train for.
    Collection
        backend: ``"vector"`` (default: the batched numba engine, :mod:`cf_env.vector`) or
        ``"aec"`` (one PettingZoo env per game; slower, kept as the reference path).
        num_envs: games played in lockstep; rollout_steps: policy batches per rollout.
        self_play_prob: share of games where the policy holds every seat; in the others it holds
        one seat and each other seat gets an opponent drawn from the pool.
        pool_baselines: agents in the pool besides the policy's snapshots (baseline bots,
        ``zoo:NAME`` networks); snapshots of the policy join it every ``snapshot_every``
        updates, keeping the newest ``pool_size`` (older snapshot files are deleted: the pool
        can no longer draw them).
    Updates
        anneal_lr (the learning rate falls linearly to 0 at total_steps), update_epochs,
        num_minibatches (at most ``num_envs * rollout_steps``).
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
    update_epochs: PositiveInt = 4
    num_minibatches: PositiveInt = 4
    eval_every: NonNegativeInt = 25
    eval_opponents: list[str] = Field(default_factory=lambda: ["greedy", "heuristic"])

    @field_validator("pool_baselines", "eval_opponents")
    @classmethod
    def _known_agents(cls, specs: list[str]) -> list[str]:
        return check_agent_specs(specs)

    @model_validator(mode="after")
    def _consistent_collection(self) -> SelfPlayConfig:
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


class PPOConfig(SelfPlayConfig):
    """Self-play PPO with action masking and an opponent pool (and :class:`SelfPlayConfig`'s fields).

    PPO
        CleanRL's names: gae_lambda, clip_coef, ent_coef, norm_adv, target_kl (0: none).
    Critic
        critic: ``"shared"`` (the policy network's own value head) or a critic class's entry
        point ``"package.module:Class"`` (:mod:`training.critic`; the policy still reads only
        the observation), built with ``critic_options`` as keyword arguments;
        critic_warmup_updates: the first updates train the value alone (the policy is left as
        it is while a new critic learns); critic_learning_rate: a separate critic's own
        (annealed with the policy's; empty: learning_rate).
    """

    gae_lambda: Probability = 0.95
    clip_coef: PositiveFloat = 0.2
    ent_coef: NonNegativeFloat = 0.01
    norm_adv: bool = True
    target_kl: NonNegativeFloat = 0.0
    critic: str = "shared"
    critic_options: dict[str, Any] = Field(default_factory=dict)
    critic_warmup_updates: NonNegativeInt = 0
    critic_learning_rate: PositiveFloat | None = None

    @model_validator(mode="after")
    def _a_critic(self) -> PPOConfig:
        if self.critic != "shared" and not re.fullmatch(r"[\w.]+:\w+", self.critic):
            raise ValueError(f"critic must be 'shared' or a critic class's entry point 'package.module:Class', "
                             f"got {self.critic!r}")
        return self


class DMCConfig(SelfPlayConfig):
    """Deep Monte-Carlo (DouZero's DMC, :mod:`training.dmc`): the network's policy logits are
    fitted as action values, ``Q(s, a)``, to the Monte-Carlo return of each decision (the rewards
    to the end of the game, ``gamma`` discounted), and the actors play epsilon-greedy on their
    argmax, the move the trained network plays (and :class:`SelfPlayConfig`'s fields).

    DMC
        epsilon: share of decisions with a uniformly random legal action (DouZero: 0.01);
        epsilon_final: epsilon at ``total_steps``, reached linearly (empty: no schedule);
        reward: the env's reward mode (``win``: the game's win share, DouZero's WP objective;
        ``points``/``relative``: each round's points, DouZero's ADP);
        value_warmup_steps: learner decisions during which only the value head learns (``V(s)``
        fitted to the returns, the trunk and the action scores frozen), so that a network started
        from a policy meets the returns' scale before its advantages move (0: none);
        return_horizon: ``game`` (each decision's return runs to the game's end, DouZero's) or
        ``round`` (to its round's end: only what the decision could change; with ``points`` or
        ``relative`` rewards, its round's points; the ``vector`` backend);
        conservative: weight of CQL's term (Kumar et al., 2020), ``logsumexp Q(s, .) - Q(s, a)``
        over the legal actions, which keeps the actions not played from rising above the played
        one on no evidence (0: none);
        freeze_trunk: the trunk keeps its starting weights for the whole run and only the heads
        (value, policy, action scorer) fit the returns: a network started from a policy keeps its
        features, so what it loses is the heads' doing, not the features' (false: every part learns);
        anchor: weight of a penalty on the advantages' distance from the starting network's
        (``init_checkpoint``'s, which a frozen copy keeps): the mean over the legal actions of the
        squared difference of the two networks' logits, each centred on its legal mean. The starting
        policy is then a fixed prior and what the returns fit is a penalised residual over it, so
        its choice stands unless the returns disagree by more than the penalty (0: none);
        dueling: ``mean`` (``Q = V + A - mean A`` over the legal actions, Wang et al.'s) or ``max``
        (``Q = V + A - max A``): with ``max`` the greedy action's ``Q`` is ``V`` itself, so the
        greedy play's returns fit the value head and leave the advantages alone, and only the
        explored actions' returns move them, each toward its return's gap from ``V``.
    """

    reward: Literal["win", "points", "relative"] = "win"
    gamma: Probability = 1.0
    update_epochs: PositiveInt = 1
    epsilon: Probability = 0.01
    epsilon_final: Probability | None = None
    value_warmup_steps: NonNegativeInt = 0
    return_horizon: Literal["game", "round"] = "game"
    conservative: NonNegativeFloat = 0.0
    freeze_trunk: bool = False
    anchor: NonNegativeFloat = 0.0
    dueling: Literal["mean", "max"] = "mean"

    @model_validator(mode="after")
    def _fields_agree(self) -> DMCConfig:
        if self.anchor and not self.init_checkpoint:
            raise ValueError(f"anchor: {self.anchor} penalises the distance from the starting network, which needs "
                             f"init_checkpoint (a checkpoint path or zoo:NAME); set one, or anchor: 0")
        if self.return_horizon == "round" and (self.backend != "vector" or self.reward == "win"):
            raise ValueError(f"return_horizon: round needs the vector backend and a reward paid each round "
                             f"(points or relative), got backend {self.backend!r}, reward {self.reward!r}")
        return self

    def epsilon_at(self, step: int) -> float:
        """The exploration rate after ``step`` learner decisions."""
        if self.epsilon_final is None:
            return self.epsilon
        done = min(step / self.total_steps, 1.0)
        return self.epsilon + done * (self.epsilon_final - self.epsilon)


class TeacherConfig(RunConfig):
    """Fields of the two trainers that label a student's games with a search teacher (expert
    iteration, distillation).

    Teacher
        teacher: a ``search`` spec with ``algo=pimc`` (its targets are per-action values; the
        default is reproducible: no clock, at most ``sims`` worlds per decision, racing).
    Games
        opponents: the other seats' agent specs; self_play_prob: chance each seat after seat 0
        is the student too.
    Workers
        workers: processes that play the games (1 = in this process); address: ``HOST:PORT`` of a
        Ray cluster's head to play them on instead, ``workers`` Ray actors over its CPUs
        (:class:`training.workers.WorkerPool`).
    Evaluation
        eval_opponents: the agents the network is evaluated against, 1 vs the rest.
    """

    teacher: str = DEFAULT_TEACHER
    opponents: list[str] = Field(default_factory=lambda: ["heuristic"], min_length=1)
    self_play_prob: Probability = 0.5
    workers: PositiveInt = 2
    address: str | None = None
    eval_opponents: list[str] = Field(default_factory=lambda: ["heuristic"])

    @field_validator("opponents", "eval_opponents")
    @classmethod
    def _known_agents(cls, specs: list[str]) -> list[str]:
        return check_agent_specs(specs)

    @field_validator("teacher")
    @classmethod
    def _pimc_teacher(cls, spec: str) -> str:
        return check_teacher(spec)


class ExpertConfig(TeacherConfig, NetworkTrainerConfig):
    """Expert iteration (and :class:`TeacherConfig`'s fields: teacher, opponents, self_play_prob,
    workers, address, eval_opponents; :class:`NetworkTrainerConfig`'s: the warm start, gamma,
    vf_coef, max_grad_norm, eval_deal_sets, torch_threads).

    Teacher
        target_temperature: 0 = the teacher's choice, else a softmax over its action values at
        this temperature.
    Collection
        iterations, games_per_iteration (the workers are spawned once per run); beta: chance a
        student decision plays the teacher's action instead.
    Learning
        learning_rate, epochs over the samples per iteration, minibatch, max_samples (the newest kept).
    Evaluation
        eval_opponents (after each iteration, ``eval_deal_sets`` deal sets each).
    """

    target_temperature: NonNegativeFloat = 0.0
    iterations: PositiveInt = 10
    games_per_iteration: PositiveInt = 32
    beta: Probability = 0.0
    learning_rate: PositiveFloat = 1e-4
    epochs: PositiveInt = 2
    minibatch: PositiveInt = 512
    max_samples: PositiveInt = 500_000


class DistillConfig(TeacherConfig):
    """Distillation from scratch (:class:`training.distill.DistillRun`; and :class:`TeacherConfig`'s
    fields: teacher, opponents, self_play_prob, workers, address, eval_opponents; :class:`RunConfig`'s:
    run_name, runs_dir, seed, rules, hidden, device, time_limit_minutes: no round starts after it).

    Collection (:mod:`training.labels`)
        behaviour: the agent that plays the labelled seats (seat 0, and each other seat with
        ``self_play_prob``): ``heuristic`` by default, so nothing shipped is needed;
        collect_minutes (no shard starts after that; 0 = max_shards only), max_shards,
        shard_games, slots (games in lockstep per worker).
    Learning (:func:`training.distill.fit`)
        imitate (an agent spec, e.g. ``heuristic``; empty: none): first fit a network from
        scratch to ``imitation_games`` games of its play for ``imitation_epochs`` epochs
        (:func:`training.distill.imitate`), then to the teacher's labels from there;
        init_checkpoint (empty: from scratch; not with imitate), temperature (0: the teacher's choice; else a
        softmax over its values), weighting (each label's weight in the cross-entropy: ``none``, or
        ``stakes``, the value a random legal choice would lose there, :func:`training.labels.label_weights`),
        epochs, learning_rate (annealed to 0), minibatch, vf_coef, holdout (the last shards' share
        kept out for the agreement), torch_threads.
    DAgger rounds (each one an iteration of the run's loop)
        dagger_rounds: after the first fit, this many rounds in which the latest network plays the
        labelled seats instead of ``behaviour`` (its own states, labelled by the same teacher)
        for ``dagger_minutes`` (empty: collect_minutes; at most max_shards shards), then a
        network is fitted again, from the same start, to every label so far. 0: none.
    Evaluation
        eval_deal_sets per opponent in eval_opponents, 1 vs the rest (0 = none).
    """

    behaviour: str = "heuristic"
    collect_minutes: NonNegativeFloat = 8.0
    max_shards: PositiveInt = 10_000
    shard_games: PositiveInt = 8
    slots: PositiveInt = 8
    imitate: str = ""
    imitation_games: PositiveInt = 1000
    imitation_epochs: PositiveInt = 4
    init_checkpoint: str = ""
    # the fit's defaults are FitSettings' (one set for labels fit and distillation)
    temperature: NonNegativeFloat = FitSettings.temperature
    weighting: Literal["none", "stakes"] = "none"
    epochs: PositiveInt = FitSettings.epochs
    learning_rate: PositiveFloat = FitSettings.learning_rate
    minibatch: PositiveInt = FitSettings.minibatch
    vf_coef: NonNegativeFloat = FitSettings.vf_coef
    holdout: Probability = 0.05
    torch_threads: PositiveInt = 2
    dagger_rounds: NonNegativeInt = 0
    dagger_minutes: NonNegativeFloat | None = None
    eval_deal_sets: NonNegativeInt = 25

    @field_validator("behaviour")
    @classmethod
    def _known_behaviour(cls, spec: str) -> str:
        check_agent_specs([spec])
        return spec

    @field_validator("imitate")
    @classmethod
    def _known_imitated(cls, spec: str) -> str:
        if spec:
            check_agent_specs([spec])
        return spec

    def fit_settings(self) -> FitSettings:
        """This config's fit (:func:`training.distill.fit`)."""
        return FitSettings(temperature=self.temperature, epochs=self.epochs, learning_rate=self.learning_rate,
                           minibatch=self.minibatch, hidden=tuple(self.hidden), vf_coef=self.vf_coef, seed=self.seed,
                           action_head=self.action_head, weighting=self.weighting, trunk=self.trunk)

    @model_validator(mode="after")
    def _one_start(self) -> DistillConfig:
        if self.imitate and self.init_checkpoint:
            raise ValueError(f"imitate ({self.imitate!r}) and init_checkpoint ({self.init_checkpoint!r}) "
                             f"both choose the starting network: set one of them")
        return self


class RLlibConfig(RunConfig):
    """RLlib self-play PPO settings (YAML keys are these field names, and :class:`RunConfig`'s).

    Policies: ``policies`` = ``"shared"`` (one module for every seat) or ``"per_seat"``.
    Budget: ``iterations`` (RLlib training iterations), ``time_limit_minutes`` (0 = none).
    Scale-out: ``num_env_runners`` (Ray actors collecting games; 0 = collect in the driver),
    ``num_envs_per_env_runner``, ``num_cpus_per_env_runner``.
    PPO: RLlib's names (``train_batch_size`` counts env steps of all agents per iteration).
    Network: ``hidden`` (MLP widths, tanh; shared by the policy and value heads so the module can
    be exported to ``agents.torch_policy.ActorCritic``).
    """

    run_name: str = Field("rllib", min_length=1)
    checkpoint_every: PositiveInt = 5
    policies: Literal["shared", "per_seat"] = "shared"
    iterations: PositiveInt = 20
    num_env_runners: NonNegativeInt = 1
    num_envs_per_env_runner: PositiveInt = 4
    num_cpus_per_env_runner: PositiveFloat = 1.0
    train_batch_size: PositiveInt = 4000
    minibatch_size: PositiveInt = 500
    num_epochs: PositiveInt = 4
    lr: PositiveFloat = 3e-4
    gamma: Probability = 0.99
    lambda_: Probability = 0.95
    clip_param: PositiveFloat = 0.2
    entropy_coeff: NonNegativeFloat = 0.01
    vf_loss_coeff: NonNegativeFloat = 0.5

    @model_validator(mode="after")
    def _consistent(self) -> RLlibConfig:
        if self.action_head:
            raise ValueError(f"action_head {self.action_head}: RLlib's module has the linear policy head only; "
                             f"leave action_head at 0 (the distill, PPO and expert trainers build one)")
        if self.trunk != "tanh":
            raise ValueError(f"trunk {self.trunk!r}: RLlib's module has tanh layers; leave trunk at 'tanh' (the "
                             f"distill, PPO and expert trainers build the others)")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) exceeds train_batch_size "
                             f"({self.train_batch_size})")
        return self

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config`` for :class:`~cf_env.integrations.rllib.ChickenFootMultiAgentEnv`:
        the rules as one value (``raw_env(config=...)``), the reward and its scale."""
        return {"config": self.rules_config, "reward": self.reward, "points_scale": self.points_scale}

    def module_ids(self) -> list[str]:
        n = self.rules_config.num_players
        return ["shared"] if self.policies == "shared" else [f"player_{i}" for i in range(n)]


def packaged_configs() -> dict[str, Path]:
    """The packaged configs by name (``smoke``, ``default``, ``distill``, ...): what ``--config
    NAME`` and ``chickenfoot configs`` offer."""
    return {p.stem: p for p in sorted(CONFIGS_DIR.glob("*.yaml"))}


def config_path(name_or_path: str | Path) -> Path:
    """The YAML file ``--config`` names: a file at that path, else the packaged config of that
    name (``distill`` or ``distill.yaml``). Neither is a :class:`TrainConfigError` that lists the
    packaged names."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    packaged = packaged_configs()
    name = path.stem if path.suffix in (".yaml", ".yml") and path.parent == Path(".") else str(name_or_path)
    if name in packaged:
        return packaged[name]
    raise TrainConfigError(f"no config file at {name_or_path}, and no packaged config of that name; the packaged "
                           f"configs are {', '.join(packaged)} (`chickenfoot configs` lists them, `chickenfoot "
                           f"configs show NAME > mine.yaml` starts a config of your own)")


def load_config(path: str | Path, cls: type[RunConfig] = PPOConfig, **overrides: Any) -> Any:
    """Read a YAML config into ``cls`` (default :class:`PPOConfig`): ``path`` is a file, or the name
    of a packaged config (:func:`config_path`); ``overrides`` replace keys (e.g. from the command
    line; ``None`` values are ignored). An error an override causes names the command line's flag,
    not the file."""
    import yaml

    path = config_path(path)
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
