"""Agents that act on the Chicken Foot env's observation dicts.

``agents.load(spec, config)`` builds one from a spec:

- ``"random"``, ``"greedy"``, ``"heuristic"``: the baselines;
- a checkpoint path, or ``"zoo:NAME"`` for a checkpoint shipped in the package; either followed by
  ``:temperature=T`` samples the move from ``softmax(logits / T)`` instead of playing the most
  likely one;
- ``"zoo:NAME"`` for a search spec shipped under a name (``agents/zoo/NAME.spec``; see
  :mod:`agents.spec`);
- ``"module:Class"`` or ``"path/file.py:Class"`` (with ``:key=value`` arguments): your own agent class;
- ``"search"`` / ``"search:name=value:..."``: the search agents (PIMC and ISMCTS, see :mod:`agents.search`);
- ``"sb3:PATH.zip"``: an sb3-contrib MaskablePPO model (extra ``sb3``; see
  ``training/sb3_maskable_ppo.py``); ``"sb3+trust:PATH.zip"`` also unpickles what the file pickles,
  for files you trust (see :mod:`agents.sb3_agent`).

RLlib, Tianshou and TorchRL runs export to the checkpoint format.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from agents.base import Agent, act_batch, legal_actions
from agents.baselines import GreedyAgent, HeuristicAgent, RandomAgent
from agents.spec import ZOO_DIR, AgentSpec, AgentSpecError, import_target, literal_value, named_specs, parse_spec
from cf_env import RulesConfig
from cf_env.packages import require_extra

__all__ = ["Agent", "AgentSpec", "AgentSpecError", "act_batch", "GreedyAgent", "HeuristicAgent", "RandomAgent",
           "BASELINES", "ZOO_DIR", "checkpoint_file", "checkpoint_temperature", "import_target", "legal_actions",
           "literal_value", "load", "named_specs", "parse_spec", "spec_rules", "zoo_path", "zoo_names"]

BASELINES: dict[str, Callable[[RulesConfig], Agent]] = {"random": RandomAgent, "greedy": GreedyAgent,
                                                         "heuristic": HeuristicAgent}


def zoo_names() -> list[str]:
    """Names of the checkpoints shipped in ``agents/zoo``."""
    return sorted(p.stem for p in ZOO_DIR.glob("*.pt"))


def zoo_path(name: str) -> Path:
    path = ZOO_DIR / f"{name}.pt"
    if not path.exists():
        raise AgentSpecError(f"no shipped checkpoint 'zoo:{name}'; available: {zoo_names() or 'none'} (named search "
                             f"specs: {named_specs() or 'none'})")
    return path


def checkpoint_file(spec: str) -> Path:
    """The file a checkpoint argument names: ``zoo:NAME`` a shipped checkpoint
    (:class:`AgentSpecError` when there is none), anything else the path as given, unchecked
    (loading it says what is wrong with it)."""
    return zoo_path(spec[4:]) if spec.startswith("zoo:") else Path(spec)


def spec_rules(spec: str) -> RulesConfig | None:
    """The rules a checkpoint spec (a path or ``zoo:NAME``) was trained for; ``None`` for a spec
    that brings no rules of its own (the baselines, ``sb3:``). A missing or unreadable checkpoint
    raises :class:`AgentSpecError` / ``CheckpointError``."""
    if not isinstance(spec, str) or parse_spec(spec).kind != "checkpoint":
        return None
    require_extra("torch", "train", f"the agent {spec!r} (a PyTorch network)")
    from agents.checkpoint import load_checkpoint

    return RulesConfig.from_dict(load_checkpoint(_checkpoint_path(parse_spec(spec).argument))["rules"])


def _checkpoint_path(spec: str) -> Path:
    """The file a checkpoint spec (a path or ``zoo:NAME``) names; :class:`AgentSpecError` when
    there is none."""
    path = checkpoint_file(spec)
    if spec.startswith("zoo:"):
        return path
    looks_like_path = "/" in spec or "\\" in spec or path.suffix in (".pt", ".pth", ".ckpt", ".zip")
    if not path.exists() and looks_like_path:
        hint = ""
        if path.name == "final.pt":
            hint = (f"; a training run writes final.pt when it ends (`make train` writes runs/distill/final.pt in "
                    f"about 12 minutes), or play a shipped network: {', '.join(f'zoo:{n}' for n in zoo_names())}")
        raise AgentSpecError(f"no such file: {spec} (a checkpoint spec must name an existing .pt file){hint}")
    if not path.is_file():
        raise AgentSpecError(
            f"unknown agent spec {spec!r}: use one of {sorted(BASELINES)}, search[:name=value...], a checkpoint path, "
            f"zoo:NAME ({zoo_names() or 'no shipped checkpoints'}) or your own class as module:Class or "
            f"path/to/file.py:Class"
        )
    return path


def load(spec: str, config: RulesConfig | None = None, device: str = "cpu") -> Agent:
    """An agent from a spec (see the module docstring) for the rules ``config`` (default rules
    when omitted; a checkpoint brings its own and must match ``config`` when both are given)."""
    parsed = parse_spec(spec)
    if parsed.kind == "baseline":
        return BASELINES[spec](config if config is not None else RulesConfig())
    if parsed.kind == "search":
        from agents.search import SearchAgent

        return SearchAgent.from_spec(spec, config if config is not None else RulesConfig())
    if parsed.kind == "python":
        return _load_python(spec, parsed, config if config is not None else RulesConfig())
    if parsed.kind == "sb3":
        require_extra("sb3_contrib", "sb3", f"the agent {spec!r} (a Stable-Baselines3 model)")
        from agents.sb3_agent import SB3Agent, UntrustedFileError

        try:
            return SB3Agent(parsed.argument, config if config is not None else RulesConfig(), name=spec,
                            trust=bool(parsed.params.get("trust")))
        except UntrustedFileError:
            raise
        except (FileNotFoundError, ValueError) as exc:
            raise AgentSpecError(f"{spec}: {exc}") from None
    path = _checkpoint_path(parsed.argument)
    temperature = checkpoint_temperature(spec)
    require_extra("torch", "train", f"the agent {spec!r} (a PyTorch network)")
    from agents.torch_policy import TorchAgent

    return TorchAgent.from_checkpoint(path, config=config, device=device, name=spec,
                                      deterministic=temperature is None, temperature=temperature or 1.0)


def checkpoint_temperature(spec: str) -> float | None:
    """A checkpoint spec's ``temperature=T`` (``None``: the most likely move); :class:`AgentSpecError`
    for another parameter or a value that is not a positive number."""
    import math

    params = parse_spec(spec).params
    unknown = sorted(set(params) - {"temperature"})
    if unknown:
        raise AgentSpecError(f"{spec!r}: a checkpoint takes one parameter, temperature=T (sample the move from "
                             f"softmax(logits / T)), not {', '.join(unknown)}")
    if "temperature" not in params:
        return None
    try:
        value = float(params["temperature"])
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise AgentSpecError(f"{spec!r}: temperature must be a positive number (1 samples the network's own policy), "
                             f"got {params['temperature']!r}")
    return value


def _load_python(spec: str, parsed: AgentSpec, config: RulesConfig) -> Agent:
    """Your own agent: ``Class(config, **kwargs)`` for ``module:Class[:key=value...]``."""
    target = import_target(parsed.argument)
    kwargs = {key: literal_value(value) for key, value in parsed.params.items()}
    if not callable(target):
        raise AgentSpecError(f"{spec}: {parsed.argument} is not a class or function that makes an agent")
    try:
        agent = target(config, **kwargs)
    except TypeError as exc:
        raise AgentSpecError(f"{spec}: calling {parsed.argument}(config, **{kwargs}) failed: {exc}; an agent class "
                             f"takes the RulesConfig first, then the spec's key=value pairs as keyword "
                             f"arguments") from None
    if not callable(getattr(agent, "act", None)):
        raise AgentSpecError(f"{spec}: {parsed.argument} made a {type(agent).__name__}, which has no "
                             f"act(observation, rng) method (see agents.Agent)")
    with contextlib.suppress(AttributeError):  # a read-only name: reported under its own
        agent.name = spec  # an evaluation reports it under the spec it was given
    if getattr(agent, "config", None) is None:
        with contextlib.suppress(AttributeError):
            agent.config = config
    return agent
