"""The ``chickenfoot`` command: ``train``, ``eval`` and ``play``.

    chickenfoot train --config configs/default.yaml [--resume]
    chickenfoot eval runs/default/final.pt greedy greedy greedy --deal-sets 500 --json out.json --plot out.png
    chickenfoot eval search heuristic --deal-sets 250 --workers 2
    chickenfoot play --opponents search,heuristic,zoo:strong-4p
"""

from __future__ import annotations

import json
import shlex
import sys

import click
import numpy as np

from cf_env import ChickenFootError, RulesConfig, __version__


def _rules(specs: list[str], players: int | None, max_pip: int | None, rounds: int | None,
           hand_size: int | None) -> RulesConfig:
    """The game's rules: the first checkpoint's among ``specs`` (the baselines bring none), with
    every rule flag the user gave on top; a flag that contradicts the checkpoint's network fails
    when the agent loads."""
    import agents as agent_lib

    given = {"num_players": players, "max_pip": max_pip, "rounds": rounds, "hand_size": hand_size}
    given = {k: v for k, v in given.items() if v is not None}
    base: dict = {}
    try:
        for spec in specs:
            trained = agent_lib.spec_rules(spec)
            if trained is not None:
                base = trained.to_dict()
                if "max_pip" in given and given["max_pip"] != trained.max_pip:
                    base.pop("rounds")  # the full game of the flag's set, unless --rounds says otherwise
                break
        return RulesConfig(**{**base, **given})
    except ChickenFootError as exc:
        raise click.BadParameter(str(exc)) from None


def _rule_options(fn):
    """--players/--max-pip/--rounds/--hand-size: by default the first checkpoint's rules, else the standard game."""
    for option in reversed([
        click.option("--players", type=click.IntRange(min=2), default=None,
                     help="Players [default: the first checkpoint's, else 4]."),
        click.option("--max-pip", type=click.IntRange(1, 18), default=None,
                     help="Double-N set [default: the first checkpoint's, else 9]."),
        click.option("--rounds", type=click.IntRange(min=1), default=None,
                     help="Rounds per game [default: the first checkpoint's, else the full game]."),
        click.option("--hand-size", type=click.IntRange(min=1), default=None,
                     help="Tiles dealt to each player [default: the first checkpoint's, else 7]."),
    ]):
        fn = option(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="chickenfoot")
def main() -> None:
    """Chicken Foot dominoes: train, evaluate and play agents."""


@main.command()
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="YAML whose keys are PPOConfig fields (see configs/).")
@click.option("--resume", is_flag=True, help="Continue the run's checkpoint (weights, optimizer, step count, pool).")
@click.option("--overwrite", is_flag=True, help="Delete the run folder's earlier run first (without it, a folder that "
              "holds a run is refused).")
@click.option("--runs-dir", default=None, help="Override runs_dir.")
@click.option("--run-name", default=None, help="Override run_name (the folder under runs_dir).")
@click.option("--init-checkpoint", default=None,
              help="Override init_checkpoint: start from these weights (a path or zoo:NAME) instead of cloning the heuristic.")
@click.option("--total-steps", type=int, default=None, help="Override total_steps.")
@click.option("--time-limit-minutes", type=float, default=None, help="Override time_limit_minutes.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def train(config_path: str, resume: bool, overwrite: bool, runs_dir: str | None, run_name: str | None,
          init_checkpoint: str | None, total_steps: int | None, time_limit_minutes: float | None,
          no_progress: bool) -> None:
    """Self-play PPO with an opponent pool; writes checkpoints and TensorBoard logs.

    Ctrl-C or SIGTERM stops after the current update, writes a checkpoint and prints the command
    that resumes it."""
    from training.config import load_config
    from training.ppo import train as run_training

    try:
        cfg = load_config(config_path, runs_dir=runs_dir, run_name=run_name, init_checkpoint=init_checkpoint,
                          total_steps=total_steps, time_limit_minutes=time_limit_minutes)
        summary = run_training(cfg, resume=resume, progress=not no_progress, overwrite=overwrite)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(summary, indent=2, default=str))
    if summary["signal"]:
        flags = {"--runs-dir": runs_dir, "--run-name": run_name, "--total-steps": total_steps,
                 "--time-limit-minutes": time_limit_minutes}
        command = ["chickenfoot", "train", "--config", config_path, "--resume"]
        for flag, value in flags.items():
            if value is not None:
                command += [flag, str(value)]
        click.echo(f"Stopped by {summary['signal']} at step {summary['learner_steps']}; checkpoint "
                   f"{summary['checkpoint']}. Resume with:\n  {shlex.join(command)}", err=True)
        sys.exit(130 if summary["signal"] == "SIGINT" else 143)


@main.command(name="eval")
@click.argument("agents", nargs=-1, required=True)
@_rule_options
@click.option("--deal-sets", type=click.IntRange(min=1), default=100, show_default=True,
              help="Duplicate deal sets; games = deal sets x players.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the report as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the report as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a win-rate bar chart (PNG).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes that play deal sets in parallel (the report is the same, timings aside).")
@click.option("--no-progress", is_flag=True)
def eval_command(agents: tuple[str, ...], players: int | None, max_pip: int | None, rounds: int | None,
                 hand_size: int | None, deal_sets: int, seed: int, json_path: str | None, csv_path: str | None,
                 plot_path: str | None, workers: int, no_progress: bool) -> None:
    """Play AGENTS against each other (one per seat, the last one filling the remaining seats;
    specs: random, greedy, heuristic, search[:name=value...], a checkpoint path, zoo:NAME, sb3:MODEL.zip,
    sb3+trust:MODEL.zip) with rotated seats and duplicate deals; print win rates with 95% Wilson
    intervals, mean points, OpenSkill ratings and each agent's mean time per decision (ms/dec; ms/choice
    counts only decisions with more than one legal action). The rules are the first checkpoint's unless rule flags say otherwise."""
    from training.evaluate import evaluate

    config = _rules(list(agents), players, max_pip, rounds, hand_size)
    players = config.num_players
    lineup = list(agents)
    if len(lineup) > players:
        raise click.BadParameter(f"{len(lineup)} agents for {players} seats", param_hint="AGENTS")
    lineup += [lineup[-1]] * (players - len(lineup))
    try:
        report = evaluate(lineup, config, deal_sets=deal_sets, seed=seed, progress=not no_progress, workers=workers)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.table())
    for path in (json_path, csv_path):
        if path:
            report.write(path)
    if plot_path:
        report.plot(plot_path)


@main.command()
@click.option("--opponents", default="heuristic", show_default=True,
              help="Comma-separated agent specs for the other seats (the last one fills the rest).")
@_rule_options
@click.option("--seat", type=click.IntRange(min=0), default=0, show_default=True,
              help="Your seat (0 moves after the dealer's left...).")
@click.option("--seed", type=click.IntRange(min=0), default=None)
def play(opponents: str, players: int | None, max_pip: int | None, rounds: int | None, hand_size: int | None,
         seat: int, seed: int | None) -> None:
    """Play a game in the terminal against agents (the rules are the first checkpoint's among
    them unless rule flags say otherwise)."""
    import agents as agent_lib
    from cf_env import action_to_string, raw_env

    specs = [s.strip() for s in opponents.split(",") if s.strip()]
    if not specs:
        raise click.BadParameter(f"no agent spec in {opponents!r}; e.g. heuristic,greedy", param_hint="--opponents")
    config = _rules(specs, players, max_pip, rounds, hand_size)
    players, max_pip = config.num_players, config.max_pip
    if not 0 <= seat < players:
        raise click.BadParameter(f"seat must be in [0, {players})", param_hint="--seat")
    specs += [specs[-1]] * (players - 1 - len(specs))
    try:
        bots = [agent_lib.load(s, config) for s in specs[: players - 1]]
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    env = raw_env(**config.to_dict(), render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    game = env.game
    others = [s for s in range(players) if s != seat]
    rounds_seen = 0
    while not game.is_over:
        current = game.current_player
        obs = env.observe(env.agent_selection)
        if current != seat:
            action = bots[others.index(current)].act(obs, rng)
            click.echo(f"player_{current} ({specs[others.index(current)]}): {action_to_string(action, max_pip)}")
            env.step(action)
        else:
            click.echo("\n" + env.render())
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            for k, a in enumerate(legal):
                click.echo(f"  [{k}] {action_to_string(a, max_pip)}")
            while True:
                answer = click.prompt("your move (number, or a move like 9>4 / draw / pass; q quits)", type=str)
                if answer.strip().lower() in ("q", "quit", "exit"):
                    click.echo("bye")
                    return
                choice = _parse_choice(answer, legal, max_pip)
                if isinstance(choice, str):
                    click.echo(choice)
                    continue
                env.step(choice)
                break
        if game.rounds_finished != rounds_seen:
            rounds_seen = game.rounds_finished
            click.echo(f"--- round {rounds_seen} over: points {game.round_scores[-1]}, totals {game.totals}")
    names = ", ".join("you" if p == seat else f"player_{p}" for p in game.winners)
    click.echo(f"Game over. Totals {game.totals}. Winner(s): {names}")


def _parse_choice(answer: str, legal: list[int], max_pip: int) -> int | str:
    """A legal action id from a menu number or a move string, or a message saying what is wrong."""
    from cf_env import string_to_action

    text = answer.strip()
    if text.isdigit():
        k = int(text)
        if 0 <= k < len(legal):
            return legal[k]
        return f"pick a number from 0 to {len(legal) - 1}"
    try:
        action = string_to_action(text, max_pip)
    except ChickenFootError as exc:
        return str(exc)
    if action not in legal:
        return f"{text} is not legal now; legal moves are listed above"
    return action


if __name__ == "__main__":
    sys.exit(main())
