"""``chickenfoot rllib|sb3|tianshou|torchrl``: train with an RL framework on this environment.

Each command needs its framework's extra (``pip install 'chickenfoot-rl[sb3]'``, ...); without
it the command says which one. The trained model is written as this project's checkpoint (or an
SB3 zip) that ``chickenfoot eval`` reads, and ``summary.json`` beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cf_env import ChickenFootError, RulesConfig
from cf_env.packages import require_extra


def option_group(*options: Callable) -> Callable:
    """One decorator of several ``click.option`` calls, listed in ``--help`` in the order given."""
    def decorate(fn: Callable) -> Callable:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorate


def _game_options(out_default: str) -> Callable:
    """The flags every framework command takes: the rules, the output folder, the seed, progress, threads."""
    return option_group(
        click.option("--players", type=click.IntRange(min=2), default=4, show_default=True,
                     help="Players at the table."),
        click.option("--max-pip", type=click.IntRange(1, 18), default=9, show_default=True,
                     help="Double-N set: the highest pip."),
        click.option("--rounds", type=click.IntRange(min=1), default=None,
                     help="Rounds per game [default: the full game]."),
        click.option("--out", type=click.Path(file_okay=False), default=out_default, show_default=True,
                     help="Folder for the model and summary.json."),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Seeds the framework, the network and the env's games."),
        click.option("--torch-threads", type=click.IntRange(min=1), default=1, show_default=True,
                     help="torch intra-op threads (1 is fastest for these small batches)."),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
    )


def standard_rules(players: int, max_pip: int, rounds: int | None) -> RulesConfig:
    """The rules of the rule flags (``rounds`` None: the full game)."""
    if rounds is None:
        return RulesConfig(num_players=players, max_pip=max_pip)
    return RulesConfig(num_players=players, max_pip=max_pip, rounds=rounds)


def _rules(players: int, max_pip: int, rounds: int | None, torch_threads: int) -> RulesConfig:
    import torch

    torch.set_num_threads(torch_threads)
    try:
        return standard_rules(players, max_pip, rounds)
    except ChickenFootError as exc:
        raise click.BadParameter(str(exc)) from None


def _time_limit() -> Callable:
    return click.option("--time-limit-minutes", type=click.FloatRange(min=0, min_open=True), default=None,
                        help="Stop at this wall-clock time if the steps are not done by then (equal-time comparisons).")


def _learner_options(steps: int, opponents: str) -> Callable:
    """The flags of a command that trains one seat against opponents: --steps and --opponents."""
    return option_group(
        click.option("--steps", type=click.IntRange(min=1), default=steps, show_default=True,
                     help="Learner decisions to train for."),
        click.option("--opponents", default=opponents, show_default=True,
                     help="Comma-separated agent specs for the other seats (the last one fills the rest)."),
    )


def split_specs(text: str, option: str = "--opponents", example: str = "heuristic,greedy") -> list[str]:
    """The agent specs of a comma-separated option; a usage error when it names none."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise click.BadParameter(f"no agent spec in {text!r}; e.g. {example}", param_hint=option)
    return specs


def _train(run: Callable[[], dict[str, Any]], out: str, evaluate_with: Callable[[dict[str, Any]], str],
           errors: tuple[type[Exception], ...] = (ChickenFootError,)) -> None:
    """Run a framework's training; a user error (``errors``) is a message, not a traceback. Then
    write ``out/summary.json``, print it and the command that evaluates the result."""
    try:
        summary = run()
    except errors as exc:
        raise click.ClickException(str(exc)) from None
    from training.provenance import write_report

    model = summary.get("model")
    write_report(Path(out, "summary.json"), summary, [model] if model else [])
    click.echo(json.dumps(summary, indent=2))
    click.echo(f"evaluate with: {evaluate_with(summary)}")


def _flags(players: int, max_pip: int, rounds: int | None) -> str:
    return f" --players {players} --max-pip {max_pip}" + (f" --rounds {rounds}" if rounds else "")


@click.command()
@_game_options("runs/sb3")
@_learner_options(steps=100_000, opponents="heuristic")
@click.option("--num-envs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Games stepped together: 1 is the single-agent Gymnasium view; more (e.g. 1024) the vector env "
                   "over the batched engine (its SB3 VecEnv).")
@click.option("--n-steps", type=click.IntRange(min=2), default=None,
              help="MaskablePPO rollout length per env [default: 1024 for one env, 16384 / num-envs for more].")
@click.option("--batch-size", type=click.IntRange(min=2), default=None,
              help="MaskablePPO minibatch [default: 256 for one env, 2048 for more].")
@_time_limit()
def sb3(players: int, max_pip: int, rounds: int | None, out: str, seed: int, torch_threads: int, no_progress: bool,
        steps: int, opponents: str, num_envs: int, n_steps: int | None, batch_size: int | None,
        time_limit_minutes: float | None) -> None:
    """sb3-contrib's MaskablePPO for one seat (a new random seat every game) against OPPONENTS;
    writes OUT/model.zip (evaluate it as sb3:OUT/model.zip)."""
    require_extra("sb3_contrib", "sb3", "chickenfoot sb3")
    from training.sb3_maskable_ppo import train

    rules = _rules(players, max_pip, rounds, torch_threads)
    specs = split_specs(opponents)
    _train(lambda: train(rules, specs, steps, Path(out), seed=seed, n_steps=n_steps, batch_size=batch_size,
                         progress=not no_progress, num_envs=num_envs, time_limit_minutes=time_limit_minutes), out,
           lambda s: f"chickenfoot eval sb3:{s['model']} {specs[0]}{_flags(players, max_pip, rounds)} --deal-sets 50",
           errors=(ValueError, ChickenFootError))  # SB3 raises ValueError for settings it cannot use


@click.command()
@_game_options("runs/tianshou")
@_learner_options(steps=50_000, opponents="greedy")
@click.option("--num-envs", type=click.IntRange(min=1), default=4, show_default=True,
              help="Envs Tianshou's collector steps side by side.")
@_time_limit()
def tianshou(players: int, max_pip: int, rounds: int | None, out: str, seed: int, torch_threads: int,
             no_progress: bool, steps: int, opponents: str, num_envs: int, time_limit_minutes: float | None) -> None:
    """Tianshou's masked DQN for one seat against OPPONENTS; writes OUT/model.pt, a checkpoint
    that chickenfoot eval reads without Tianshou."""
    require_extra("tianshou", "tianshou", "chickenfoot tianshou")
    from training.tianshou_dqn import train

    rules = _rules(players, max_pip, rounds, torch_threads)
    specs = split_specs(opponents)
    _train(lambda: train(rules, specs, steps, Path(out), seed=seed, num_envs=num_envs, progress=not no_progress,
                         time_limit_minutes=time_limit_minutes),
           out, lambda s: f"chickenfoot eval {s['model']} {specs[0]}{_flags(players, max_pip, rounds)} --deal-sets 50")


@click.command()
@_game_options("runs/torchrl")
@click.option("--frames", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="Env steps (decisions of all seats).")
@click.option("--frames-per-batch", type=click.IntRange(min=2), default=1024, show_default=True,
              help="Env steps collected for each PPO update.")
@_time_limit()
def torchrl(players: int, max_pip: int, rounds: int | None, out: str, seed: int, torch_threads: int,
            no_progress: bool, frames: int, frames_per_batch: int, time_limit_minutes: float | None) -> None:
    """Self-play PPO through TorchRL's own PettingZooWrapper; writes OUT/model.pt, a checkpoint
    that chickenfoot eval reads without TorchRL."""
    require_extra("torchrl", "torchrl", "chickenfoot torchrl")
    from training.torchrl_ppo import train

    rules = _rules(players, max_pip, rounds, torch_threads)
    _train(lambda: train(rules, frames, Path(out), seed=seed, frames_per_batch=frames_per_batch,
                         progress=not no_progress, time_limit_minutes=time_limit_minutes),
           out, lambda s: f"chickenfoot eval {s['model']} greedy{_flags(players, max_pip, rounds)} --deal-sets 50")


@click.command()
@click.option("--config", "config_path", default="rllib", show_default=True,
              help="A YAML file of RLlibConfig fields, or a packaged config's name (chickenfoot configs).")
@click.option("--address", default=None, help="Join this Ray cluster (HOST:PORT) instead of starting Ray locally.")
@click.option("--iterations", type=click.IntRange(min=1), default=None, help="Override the config's iterations.")
@click.option("--runs-dir", default=None, help="Override the config's runs_dir.")
@click.option("--policies", type=click.Choice(["shared", "per_seat"]), default=None,
              help="Override the config's policies: one module for all seats, or one per seat.")
@click.option("--resume", is_flag=True, help="Continue from runs_dir/run_name/checkpoint.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def rllib(config_path: str, address: str | None, iterations: int | None, runs_dir: str | None,
          policies: str | None, resume: bool, no_progress: bool) -> None:
    """Self-play PPO with RLlib (new API stack), locally or spread over a Ray cluster; every
    checkpoint's modules are exported as checkpoints chickenfoot eval reads without Ray."""
    require_extra("ray.rllib", "rllib", "chickenfoot rllib")
    from training.config import load_config
    from training.rllib_ppo import RLlibConfig, train

    try:
        cfg = load_config(config_path, cls=RLlibConfig, iterations=iterations, runs_dir=runs_dir, policies=policies)
        summary = train(cfg, address=address, resume=resume, progress=not no_progress)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(summary, indent=2))
    click.echo(f"evaluate with: chickenfoot eval {summary['exported'][0]} greedy --deal-sets 50")


COMMANDS = (rllib, sb3, tianshou, torchrl)
