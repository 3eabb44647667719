"""The ``chickenfoot`` command: every user-facing command of the library.

Training: ``distill`` (what ``make train`` runs), ``train`` (PPO), ``expert``, ``labels collect``
and ``labels fit``; the RL frameworks: ``rllib``, ``sb3``, ``tianshou``, ``torchrl``
(:mod:`chickenfoot.frameworks`); evaluation: ``eval``; games: ``play``, ``replay``, ``demo``;
set-up: ``precompile``.

    chickenfoot distill --config distill          # a packaged config's name, or a YAML file's path
    chickenfoot train --config default [--resume]
    chickenfoot configs show distill > mine.yaml   # a packaged config, as a start for your own
    chickenfoot eval runs/default/final.pt greedy greedy greedy --deal-sets 500 --json out.json --plot out.png
    chickenfoot eval search heuristic --deal-sets 250 --workers 2
    chickenfoot play --opponents search,heuristic,zoo:strong-4p --save game.json
    chickenfoot replay game.json --html game.html
"""

from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from cf_env import ChickenFootError, Game, RulesConfig, __version__
from chickenfoot.frameworks import COMMANDS as FRAMEWORK_COMMANDS
from chickenfoot.frameworks import option_group, split_specs, standard_rules
from training.fit import FitSettings  # the fit's one set of defaults (no torch: cheap to import)


def _rules(specs: list[str], players: int | None, max_pip: int | None, rounds: int | None,
           hand_size: int | None) -> RulesConfig:
    """The game's rules: the first checkpoint's among ``specs`` (the baselines bring none), with
    every rule flag the user gave on top. ``players`` that differs from the checkpoint's (a network
    reads one player count) is a usage error naming --players; another flag that contradicts the
    network fails when the agent loads. A spec that names nothing, or a search spec with a bad
    parameter, is a usage error (exit status 2) before any game starts."""
    import agents as agent_lib
    from agents.search import parse_search_spec

    given = {"num_players": players, "max_pip": max_pip, "rounds": rounds, "hand_size": hand_size}
    given = {k: v for k, v in given.items() if v is not None}
    base: dict = {}
    from cf_env.packages import require_extra

    try:
        for spec in specs:
            kind = agent_lib.parse_spec(spec).kind
            if kind == "search":
                parse_search_spec(spec, player=True)
            elif kind == "sb3":  # before any game starts (the entry point prints it as one line)
                require_extra("sb3_contrib", "sb3", f"the agent {spec!r} (a Stable-Baselines3 model)")
        for spec in specs:
            trained = agent_lib.spec_rules(spec)
            if trained is not None:
                if players is not None and players != trained.num_players:
                    raise click.BadParameter(
                        f"{spec} was trained for num_players={trained.num_players}, and this game has {players}: "
                        f"give --players {trained.num_players} (or leave it out: the rules then come from the first "
                        f"checkpoint)", param_hint="--players")
                base = trained.to_dict()
                if "max_pip" in given and given["max_pip"] != trained.max_pip:
                    base.pop("rounds")  # the full game of the flag's set, unless --rounds says otherwise
                break
        return RulesConfig(**{**base, **given})
    except ChickenFootError as exc:
        raise click.BadParameter(str(exc)) from None


@contextlib.contextmanager
def _exit_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal) end the command as an exception would, so that the
    ``finally`` blocks inside run (the game record is written); exit status 128 + the signal."""
    previous = {}

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            previous[sig] = signal.signal(sig, leave)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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


def _precision_option(example: str = ""):
    """--precision: how a written checkpoint stores its weights (agents.checkpoint.store_weights;
    the choices are its PRECISIONS, written out so that --help imports no numba)."""
    return click.option("--precision", type=click.Choice(["float32", "float16", "int8"]), default="float32",
                        show_default=True,
                        help="How the weights are stored: float16 halves the file, int8 quarters it (a scale for "
                             "every 64 weights); both are widened back to float32 on load." + example)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="chickenfoot")
def main() -> None:
    """Chicken Foot dominoes: train, evaluate and play agents."""


def _run_options(config_cls: str, example: str, resume_keeps: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options every training command has (its own come after them): --config (a YAML of
    ``config_cls``'s fields), --resume (``resume_keeps`` says what it continues), --overwrite,
    --runs-dir, --run-name and --no-progress."""
    return option_group(
        click.option("--config", "config_path", required=True,
                     help=f"A YAML file whose keys are {config_cls} fields, or a packaged config's name such as "
                          f"{example} (chickenfoot configs lists them)."),
        click.option("--resume", is_flag=True, help=f"Continue the run ({resume_keeps})."),
        click.option("--overwrite", is_flag=True, help="Delete the run folder's earlier run first (without it, a folder "
                     "that holds a run is refused)."),
        click.option("--runs-dir", default=None, help="Override runs_dir."),
        click.option("--run-name", default=None, help="Override run_name (the folder under runs_dir)."),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
    )


def _arena_options(result: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The last options of the commands that play deal sets to a ``result`` (compare, ladder):
    --workers, --address, --json and --no-progress."""
    return option_group(
        click.option("--workers", type=click.IntRange(min=1), default=None,
                     help="Processes that play deal sets in parallel [default: 1; with --address, one per CPU]."),
        click.option("--address", default=None, help="Play the deal sets on the Ray cluster whose head is at HOST:PORT."),
        click.option("--json", "json_path", type=click.Path(dir_okay=False), help=f"Write the {result} as JSON."),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
    )


#: --players, --max-pip and --rounds with the default rules' values (demo, labels collect)
_table_options = option_group(
    click.option("--players", type=click.IntRange(min=2), default=4, show_default=True, help="Players at the table."),
    click.option("--max-pip", type=click.IntRange(1, 18), default=9, show_default=True,
                 help="Double-N set: the highest pip."),
    click.option("--rounds", type=click.IntRange(min=1), default=None, help="Rounds per game [default: the full game]."),
)


#: the options of the self-play trainers (train, dmc) after _run_options
_self_play_options = option_group(
    click.option("--init-checkpoint", default=None,
                 help="Override init_checkpoint: start from these weights (a path or zoo:NAME, with :temperature=T "
                      "to sharpen or soften its policy) instead of the config's start."),
    click.option("--total-steps", type=int, default=None, help="Override total_steps."),
    click.option("--time-limit-minutes", type=float, default=None, help="Override time_limit_minutes."),
    click.option("--device", default=None, help="Override device: cpu, cuda, cuda:N or auto (cuda when there is one)."),
)


@main.command()
@_run_options("PPOConfig", "default or smoke", "weights, optimizer, step count, pool")
@_self_play_options
def train(config_path: str, resume: bool, overwrite: bool, no_progress: bool, **overrides: Any) -> None:
    """Self-play PPO with an opponent pool; writes checkpoints and TensorBoard logs.

    Ctrl-C or SIGTERM stops after the current update, writes a checkpoint and prints the command
    that resumes it."""
    from training.config import PPOConfig
    from training.ppo import train as run_training

    summary, resume_command = _train(run_training, PPOConfig, "train", config_path, resume, overwrite, no_progress,
                                     overrides)
    _stopped(summary, f"step {summary['learner_steps']}", resume_command)


@main.command()
@_run_options("DMCConfig", "dmc-4p or dmc-smoke", "weights, optimizer, step count, pool")
@_self_play_options
def dmc(config_path: str, resume: bool, overwrite: bool, no_progress: bool, **overrides: Any) -> None:
    """Deep Monte-Carlo self-play (DouZero's DMC): the network's logits are fitted as action values
    to each decision's Monte-Carlo return, and the actors play epsilon-greedy on their argmax;
    writes checkpoints and TensorBoard logs.

    Ctrl-C or SIGTERM stops after the current update, writes a checkpoint and prints the command
    that resumes it."""
    from training.config import DMCConfig
    from training.dmc import dmc as run_dmc

    summary, resume_command = _train(run_dmc, DMCConfig, "dmc", config_path, resume, overwrite, no_progress, overrides)
    _stopped(summary, f"step {summary['learner_steps']}", resume_command)


@main.command()
@_run_options("ExpertConfig", "expert-4p", "weights, optimizer, samples, iteration")
@click.option("--init-checkpoint", default=None, help="Override init_checkpoint (a path or zoo:NAME).")
@click.option("--iterations", type=click.IntRange(min=1), default=None, help="Override iterations.")
@click.option("--time-limit-minutes", type=float, default=None, help="Override time_limit_minutes.")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Override workers.")
@click.option("--address", default=None,
              help="Play the games on the Ray cluster whose head is at HOST:PORT (workers = its actors).")
@click.option("--device", default=None, help="Override device: auto, cpu, cuda or cuda:N.")
def expert(config_path: str, resume: bool, overwrite: bool, no_progress: bool, **overrides: Any) -> None:
    """Expert iteration: the network learns the search agent's choices on the states it reaches
    (DAgger); writes checkpoints, the samples and TensorBoard logs.

    Ctrl-C or SIGTERM stops after the current iteration, writes a checkpoint and prints the command
    that resumes it."""
    from training.expert import ExpertConfig, expert_iteration

    summary, resume_command = _train(expert_iteration, ExpertConfig, "expert", config_path, resume, overwrite,
                                     no_progress, overrides)
    _stopped(summary, f"iteration {summary['iterations']}", resume_command)


@main.command()
@_run_options("DistillConfig", "distill or distill-smoke", "its label shards are kept: it collects on, then fits again")
@click.option("--collect-minutes", type=float, default=None, help="Override collect_minutes.")
@click.option("--dagger-rounds", type=click.IntRange(min=0), default=None,
              help="Override dagger_rounds (with --resume, a larger value goes on with more rounds).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Override workers.")
@click.option("--address", default=None,
              help="Label on the Ray cluster whose head is at HOST:PORT (workers = its actors).")
def distill(config_path: str, resume: bool, overwrite: bool, no_progress: bool, **overrides: Any) -> None:
    """Distil the search into a network: label decisions with the throughput teacher (games in
    lockstep, racing PIMC) for a time budget, then fit a network to the labels (with dagger_rounds,
    then label the network's own decisions and fit again, round by round); writes the label
    shards, final.pt and summary.json.

    Ctrl-C or SIGTERM stops at once, during a collection or a fit: every label shard written is
    kept, and the printed command resumes the run (it collects the missing shards and fits again)."""
    from training.distill import DistillConfig, distill_run

    summary, resume_command = _train(distill_run, DistillConfig, "distill", config_path, resume, overwrite,
                                     no_progress, overrides)
    _stopped(summary, f"round {summary['round']}", resume_command)


def _train(run: Callable[..., dict], config_cls: type, command: str, config_path: str, resume: bool, overwrite: bool,
           no_progress: bool, overrides: dict) -> tuple[dict, str]:
    """Load the config with the command line's ``overrides`` (each option that overrides a config
    field, named as the field; ``None``: not given), run the trainer and print its
    summary; returns it and the command that resumes the run (the starting weights are not
    repeated: a resumed run has its own)."""
    from training.config import load_config

    if resume and overrides.get("init_checkpoint"):
        raise click.BadParameter("a resumed run continues from its own checkpoint; --init-checkpoint starts a new "
                                 "run from other weights: drop one of them", param_hint="--init-checkpoint")
    try:
        cfg = load_config(config_path, config_cls, **overrides)
        summary = run(cfg, resume=resume, progress=not no_progress, overwrite=overwrite)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(summary, indent=2, default=str))
    words = ["chickenfoot", command, "--config", config_path, "--resume"]
    for key, value in overrides.items():
        if value is not None and key != "init_checkpoint":
            words += ["--" + key.replace("_", "-"), str(value)]
    return summary, shlex.join(words)


def _stopped(summary: dict, where: str, resume_command: str) -> None:
    """After a stop signal: say where the run stopped and how to resume it, and exit 130 (SIGINT)
    or 143 (SIGTERM)."""
    if not summary["signal"]:
        return
    click.echo(f"Stopped by {summary['signal']} at {where}; kept in {summary['checkpoint']}. Resume with:\n"
               f"  {resume_command}", err=True)
    sys.exit(130 if summary["signal"] == "SIGINT" else 143)


@main.command(name="eval")
@click.argument("agents", nargs=-1, required=True)
@_rule_options
@click.option("--deal-sets", type=click.IntRange(min=1), default=100, show_default=True,
              help="Duplicate deal sets; games = deal sets x players.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of the deal sets (the same seed deals the same games).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the report as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the report as CSV.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a win-rate bar chart (PNG).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes that play deal sets in parallel (the report is the same, timings aside) "
                   "[default: 1; with --address, one per CPU of the cluster].")
@click.option("--address", default=None,
              help="Play the deal sets on the Ray cluster whose head is at HOST:PORT (docs/frameworks.md sets one "
                   "up); checkpoint paths must be readable on every node.")
@click.option("--save-games", "save_games", type=click.Path(file_okay=False), default=None,
              help="Write game records (JSON, for chickenfoot replay) into this folder, with an index.json.")
@click.option("--worst", type=click.IntRange(min=0), default=0, show_default=True,
              help="With --save-games: keep only the N games where --worst-agent did worst (0 = every game).")
@click.option("--worst-agent", default=None, help="The agent spec --worst judges [default: the first agent].")
@click.option("--save", "save_path", type=click.Path(dir_okay=False), default=None,
              help="Keep each deal set's results in this JSON-lines file as they come; run the same command again "
                   "to resume after the deal sets it holds (a file of another lineup, seed or rules is refused).")
@click.option("--device", default="cpu", show_default=True,
              help="Where checkpoint agents run: cpu, cuda, cuda:N or auto (cuda when there is one).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def eval_command(agents: tuple[str, ...], players: int | None, max_pip: int | None, rounds: int | None,
                 hand_size: int | None, deal_sets: int, seed: int, json_path: str | None, csv_path: str | None,
                 plot_path: str | None, workers: int | None, address: str | None, save_games: str | None, worst: int,
                 worst_agent: str | None, save_path: str | None, device: str, no_progress: bool) -> None:
    """Play AGENTS against each other (one per seat, the last one filling the remaining seats;
    specs: random, greedy, heuristic, search[:name=value...], a checkpoint path, zoo:NAME, sb3:MODEL.zip,
    sb3+trust:MODEL.zip) with rotated seats and duplicate deals; print win rates with 95% intervals (t over
    deal sets), mean points, OpenSkill ratings and each agent's mean time per decision (ms/dec; ms/choice
    counts only decisions with more than one legal action). The rules are the first checkpoint's unless rule flags say otherwise.

    Ctrl-C prints the report of the deal sets played so far and exits 130; with --save FILE the same
    command resumes after them."""
    import agents as agent_lib
    from agents.torch_policy import resolve_device
    from training.evaluate import SaveGames, evaluate

    config = _rules(list(agents), players, max_pip, rounds, hand_size)
    players = config.num_players
    lineup = list(agents)
    if len(lineup) > players:
        raise click.BadParameter(f"{len(lineup)} agents for {players} seats", param_hint="AGENTS")
    lineup += [lineup[-1]] * (players - len(lineup))
    if (worst or worst_agent) and save_games is None:
        raise click.BadParameter("--worst and --worst-agent choose which games --save-games keeps; give --save-games DIR",
                                 param_hint="--worst")
    try:
        device = resolve_device(device)
        if device != "cpu" and ((workers or 1) > 1 or address):
            raise click.BadParameter("--device cuda runs in one process; drop --workers/--address", param_hint="--device")
        built = ({s: agent_lib.load(s, config, device=device) for s in dict.fromkeys(lineup)}
                 if device != "cpu" else None)
        report = evaluate([built[s] for s in lineup] if built else lineup, config, deal_sets=deal_sets, seed=seed,
                          progress=not no_progress, workers=workers, address=address,
                          save_games=SaveGames(save_games, worst, worst_agent) if save_games else None,
                          save=save_path)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("stopped before the first deal set was played: nothing to report", err=True)
        sys.exit(130)
    click.echo(report.table())
    if report.stopped_of is not None:
        again = ("run the same command again to resume" if save_path else
                 "--save FILE keeps the deal sets as they come, and resumes")
        click.echo(f"stopped by Ctrl-C after {report.deal_sets} of {report.stopped_of} deal sets; {again}", err=True)
    if save_games:
        kept = "every game" if not worst else f"the {worst} games where {worst_agent or lineup[0]} did worst"
        click.echo(f"game records ({kept}): {Path(save_games)}/ (index.json lists them; chickenfoot replay FILE)")
    for path in (json_path, csv_path):
        if path:
            report.write(path)
    if plot_path:
        report.plot(plot_path)
    if report.stopped_of is not None:
        sys.exit(130)


@main.command()
@click.argument("a")
@click.argument("b")
@click.option("--vs", default="heuristic", show_default=True,
              help="Comma-separated agent specs for the other seats (the last fills the rest); 'none': A against "
                   "B head to head.")
@_rule_options
@click.option("--deal-sets", type=click.IntRange(min=2), default=None,
              help="Duplicate deal sets each agent plays; with --until-verdict, the most it plays. "
                   "[default: 100; 2000 with --until-verdict]")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of the deal sets (the same seed deals the same games).")
@click.option("--until-verdict", is_flag=True,
              help="Stop as soon as a sequential probability ratio test (SPRT) of elo <= ELO0 against elo >= ELO1 "
                   "reaches a verdict.")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="SPRT: the Elo difference A - B of H0.")
@click.option("--elo1", type=float, default=20.0, show_default=True, help="SPRT: the Elo difference A - B of H1.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="SPRT: the chance of accepting H1 when H0 holds.")
@click.option("--beta", type=float, default=0.05, show_default=True,
              help="SPRT: the chance of accepting H0 when H1 holds.")
@click.option("--save", "save_path", type=click.Path(dir_okay=False), default=None,
              help="Keep every deal set's results in this JSON-lines file as they come; started again with the same "
                   "file, the comparison goes on from there.")
@_arena_options("comparison")
def compare(a: str, b: str, vs: str, players: int | None, max_pip: int | None, rounds: int | None,
            hand_size: int | None, deal_sets: int | None, seed: int, until_verdict: bool, elo0: float, elo1: float,
            alpha: float, beta: float, save_path: str | None, workers: int | None, address: str | None,
            json_path: str | None, no_progress: bool) -> None:
    """Is A stronger than B? Each plays the same seats against --vs on the same deal sets (the same
    deals, boneyard orders and opponents' random streams), and the differences A - B in win rate
    and mean points are measured deal set by deal set, with 95% intervals, the correlation the
    pairing bought and the Elo difference. With --until-verdict it stops at the SPRT's verdict
    (A and B are specs as for eval: paths, zoo:NAME, search:..., module:Class, baselines)."""
    from training.compare import compare as run_compare
    from training.stats import Sprt

    opponents = None if vs.strip().lower() == "none" else split_specs(vs, "--vs", "heuristic, or none")
    config = _rules([a, b, *(opponents or [])], players, max_pip, rounds, hand_size)
    try:
        test = Sprt(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta) if until_verdict else None
    except ChickenFootError as exc:
        raise click.BadParameter(str(exc)) from None
    try:
        result = run_compare(a, b, config, vs=opponents, deal_sets=deal_sets or (2000 if until_verdict else 100),
                             seed=seed, progress=not no_progress, workers=workers, address=address, sprt=test,
                             save=save_path)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(result.table())
    if json_path:
        from training.provenance import write_report

        write_report(json_path, result.to_json(), [a, b, *(opponents or [])])


@main.command()
@click.argument("agent", required=False)
@click.option("--players", type=click.Choice(["2", "4"]), default="4", show_default=True,
              help="The ladder's game: the default rules of 2 or 4 players.")
@click.option("--deal-sets", type=click.IntRange(min=2), default=50, show_default=True,
              help="Duplicate deal sets against each rung.")
@click.option("--calibrate", is_flag=True,
              help="Fit the panel's ratings again (a round robin of the rungs) and print them, instead of rating AGENT.")
@_arena_options("result")
def ladder(agent: str | None, players: str, deal_sets: int, calibrate: bool, workers: int | None,
           address: str | None, json_path: str | None, no_progress: bool) -> None:
    """Rate AGENT on a fixed scale: it plays 1 vs the rest against each rung of a fixed panel
    (random, greedy, heuristic, a fixed-simulation search, the shipped network) on fixed deal sets,
    and its rating is the Elo (random = 0) that best explains its results against the panel's fixed
    ratings. Ratings from different machines compare."""
    from training.ladder import PANELS
    from training.ladder import calibrate as run_calibrate
    from training.ladder import ladder as run_ladder

    config = RulesConfig(num_players=int(players))
    if calibrate == (agent is not None):
        raise click.UsageError("give an AGENT to rate, or --calibrate (not both)")
    try:
        if calibrate:
            specs = [spec for spec, _ in PANELS[config.num_players]]
            result: Any = run_calibrate(specs, config, deal_sets, workers, not no_progress, address)
            ordered = sorted(result["panel"], key=lambda x: x[1])
            click.echo("\n".join(f"{spec:<28} {rating:>7.1f}" for spec, rating in ordered))
            data = result
        else:
            assert agent is not None
            # a spec that names nothing, or a network of another player count, is a usage error
            _rules([agent], config.num_players, None, None, None)
            result = run_ladder(agent, config, deal_sets, workers, not no_progress, address)
            click.echo(result.table())
            data = result.to_json()
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    if json_path:
        from training.provenance import write_report

        write_report(json_path, data, [spec for spec, _ in PANELS[config.num_players]] + ([agent] if agent else []))


@main.command()
@click.option("--opponents", default=None,
              help="Comma-separated agent specs for the other seats (the last one fills the rest). [default: heuristic]")
@click.option("--level", type=click.IntRange(1, 5), default=None,
              help="Opponents of a difficulty level instead: the ladder's rungs, weakest first (1 random, 2 greedy, "
                   "3 heuristic, 4 and 5 a 16-simulation search and the shipped network; in 2 players the other way "
                   "round).")
@_rule_options
@click.option("--seat", type=click.IntRange(min=0), default=0, show_default=True,
              help="Your seat (0 moves after the dealer's left...).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Deal the game from this seed [default: a fresh one each game].")
@click.option("--save", "save_path", type=click.Path(dir_okay=False), default=None,
              help="Write the game's record (JSON, for chickenfoot replay) here when it ends or you quit.")
@click.option("--web", is_flag=True, help="Play in the browser instead: serve the game on 127.0.0.1.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="With --web: the port.")
@click.option("--no-browser", is_flag=True, help="With --web: do not open a browser, only print the address.")
def play(opponents: str | None, level: int | None, players: int | None, max_pip: int | None, rounds: int | None,
         hand_size: int | None, seat: int, seed: int | None, save_path: str | None, web: bool, port: int,
         no_browser: bool) -> None:
    """Play a game in the terminal against agents (the rules are the first checkpoint's among
    them unless rule flags say otherwise). Every move is echoed with where it went; type ? for
    the rules."""
    from cf_env.replay import game_record, save_record
    from chickenfoot.play import Table, play_terminal

    if level is not None:
        from training.ladder import level_spec

        if opponents is not None:
            raise click.UsageError("give --opponents or --level, not both")
        opponents = level_spec(level, 2 if players == 2 else 4)
    specs = split_specs(opponents or "heuristic", "--opponents", "heuristic,greedy")
    config = _rules(specs, players, max_pip, rounds, hand_size)
    if not 0 <= seat < config.num_players:
        raise click.BadParameter(f"seat must be in [0, {config.num_players})", param_hint="--seat")
    if web:
        from chickenfoot.web import LiveGame, serve

        try:
            live = LiveGame(config, specs, seat, seed)
        except ChickenFootError as exc:
            raise click.ClickException(str(exc)) from None
        try:
            with _exit_on_signals():
                serve(live, port, open_browser=not no_browser)
        except OSError as exc:
            raise click.ClickException(f"cannot serve on 127.0.0.1:{port}: {exc.strerror}; choose another --port") from None
        finally:  # Ctrl-C, SIGTERM, SIGHUP: the game so far is kept
            if save_path:
                save_record(live.record(), save_path)
                click.echo(f"game record written to {save_path} (chickenfoot replay {save_path})")
        return
    try:
        table = Table(config, seat, specs)

        def save(game: Game) -> None:
            if save_path:
                save_record(game_record(game, table.lineup, source="chickenfoot play", seed=seed, human_seat=seat),
                            save_path)
                click.echo(f"game record written to {save_path} (chickenfoot replay {save_path})")

        with _exit_on_signals():
            play_terminal(table, seed, ask=lambda text: click.prompt(text, type=str), say=click.echo, save=save)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.argument("record_path", metavar="RECORD.json", type=click.Path(dir_okay=False))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Write a self-contained replay page (open it in a browser; #step=N in its address).")
@click.option("--gif", "gif_path", type=click.Path(dir_okay=False), default=None,
              help="Write an animated GIF of the game (Pillow).")
@click.option("--gif-every", type=click.IntRange(min=1), default=1, show_default=True,
              help="One GIF frame per this many steps.")
@click.option("--gif-ms", type=click.IntRange(min=20), default=600, show_default=True, help="Milliseconds per GIF frame.")
@click.option("--step", "start", type=click.IntRange(min=0), default=0, show_default=True,
              help="Step to open at in the terminal (the position after that many actions).")
def replay(record_path: str, html_path: str | None, gif_path: str | None, gif_every: int, gif_ms: int,
           start: int) -> None:
    """Replay a game record (from play --save or eval --save-games): step through it in the
    terminal (Enter or n: next step, p: previous, N/P: next/previous round, g K: go to step K,
    q: quit), or write it as an HTML page (--html) or a GIF (--gif)."""
    from cf_env.replay import load_record, replay_steps, write_gif, write_html
    from chickenfoot.replay import replay_terminal

    try:
        record = load_record(record_path)
        if html_path or gif_path:
            if html_path:
                click.echo(f"replay page written to {write_html(record, html_path)}")
            if gif_path:
                click.echo(f"GIF written to {write_gif(record, gif_path, ms_per_step=gif_ms, every=gif_every)}")
            return
        steps = [(text, game.clone()) for _, text, game in replay_steps(record)]
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    replay_terminal(record, steps, min(start, len(steps) - 1),
                    ask=lambda text: click.prompt(text, default="n", show_default=False), say=click.echo)


@main.group()
def labels() -> None:
    """Search labels for distillation: collect them in resumable shards, fit a network to them."""


@labels.command()
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="The collection folder (its shards are kept; the same command resumes it).")
@_table_options
@click.option("--shards", type=click.IntRange(min=1), default=None,
              help="Shards the folder should hold when the command ends [default: no limit; stop with --minutes "
                   "or Ctrl-C].")
@click.option("--shard-games", type=click.IntRange(min=1), default=16, show_default=True, help="Games per shard.")
@click.option("--slots", type=click.IntRange(min=1), default=16, show_default=True, help="Games in lockstep.")
@click.option("--student", default=None, help="The network that plays [default: zoo:strong-Np].")
@click.option("--teacher", default=None, help="The search spec that labels [default: the racing PIMC search].")
@click.option("--opponents", default="heuristic", show_default=True, help="Comma-separated agent specs.")
@click.option("--self-play-prob", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Chance that a game's other seats are the student too.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes (each one core), or Ray actors with --address.")
@click.option("--address", default=None, help="Label on the Ray cluster whose head is at HOST:PORT.")
@click.option("--minutes", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Start no shard after this long (0: no limit).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of the labelling games (each shard's from it and its index).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def collect(out: str, players: int, max_pip: int, rounds: int | None, shards: int | None, shard_games: int,
            slots: int, student: str | None, teacher: str | None, opponents: str, self_play_prob: float,
            workers: int, address: str | None, minutes: float, seed: int, no_progress: bool) -> None:
    """Label the student's decisions with the teacher's search, shard by shard (each written
    atomically with its own seed, so a stopped collection resumes where it stopped)."""
    from training.labels import DEFAULT_TEACHER, collect_shards, collection_settings

    try:
        config = standard_rules(players, max_pip, rounds)
        specs = split_specs(opponents)
        settings = collection_settings(student or f"zoo:strong-{players}p", teacher or DEFAULT_TEACHER, specs, config,
                                       seed, shard_games, self_play_prob, slots)
        summary = collect_shards(out, settings, shards, workers, minutes,
                                 progress=not no_progress, address=address)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(summary, indent=2))


@labels.command(name="fit")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The checkpoint to write.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Train on the first N labels only.")
@click.option("--holdout", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1, show_default=True,
              help="The last folder's last shards' share kept out (held-out agreement).")
@click.option("--heldout", type=click.Path(file_okay=False, exists=True), default=None,
              help="Score on this label folder's shards instead, training on every shard of FOLDERS "
                   "(--holdout unused): fits to collections of different sizes are scored on the same states.")
@click.option("--temperature", type=click.FloatRange(min=0), default=FitSettings.temperature, show_default=True,
              help="0: the teacher's choice; else softmax(q / T) over its action values.")
@click.option("--weighting", type=click.Choice(["none", "stakes"]), default="none", show_default=True,
              help="Each label's weight: 'stakes' weighs it by the teacher's value a random legal choice loses there.")
@click.option("--init", default=None, help="Start from this checkpoint (zoo:NAME or a path) [default: scratch].")
@click.option("--imitate", default=None, help="First fit the network to this agent's own play (e.g. heuristic).")
@click.option("--imitation-games", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Games of the --imitate agent to fit first.")
@click.option("--imitation-epochs", type=click.IntRange(min=1), default=4, show_default=True,
              help="Passes over those games' decisions.")
@click.option("--epochs", type=click.IntRange(min=1), default=FitSettings.epochs, show_default=True,
              help="Passes over the labels.")
@click.option("--learning-rate", type=click.FloatRange(min=0, min_open=True), default=FitSettings.learning_rate,
              show_default=True,
              help="Adam's, annealed linearly to 0.")
@click.option("--hidden", default="256,256", show_default=True, help="The network's layer widths, comma-separated.")
@click.option("--action-head", type=click.IntRange(min=0), default=0, show_default=True,
              help="Width of an action-scoring head beside the linear one (0: none).")
@click.option("--trunk", type=click.Choice(["tanh", "layernorm"]), default="tanh", show_default=True,
              help="The hidden layers' kind: tanh, or layernorm (linear, layer norm, ReLU).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds the fit (shuffling, the network's initial weights) and the measuring deal sets.")
@click.option("--deal-sets", type=click.IntRange(min=0), default=100, show_default=True,
              help="Then measure it: deal sets of 1 vs the rest --opponent (0: not measured).")
@click.option("--opponent", default="heuristic", show_default=True, help="The agent spec in the other seats.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes that play the measuring deal sets.")
@click.option("--torch-threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads torch may use for the fit.")
@_precision_option(" The strength is measured on the stored weights.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def fit_command(folders: tuple[str, ...], out: str, limit: int | None, holdout: float, heldout: str | None,
                temperature: float,
                weighting: str, init: str | None, imitate: str | None, imitation_games: int, imitation_epochs: int, epochs: int,
                learning_rate: float, hidden: str, action_head: int, trunk: str, seed: int, deal_sets: int, opponent: str,
                workers: int, torch_threads: int, precision: str, no_progress: bool) -> None:
    """Fit a network to the labels in FOLDERS (read in this order; the held-out shards are the
    last folder's, or --heldout's), write it to --out and print its held-out agreement, the teacher's value its
    choices lose, and its strength."""
    import torch

    from training.distill import FitSettings, agreement, fit, label_rules, save_model, split_labels, strength
    from training.distill import imitate as imitate_agent

    if imitate and init:
        raise click.BadParameter("--imitate and --init both choose the starting network: give one",
                                 param_hint="--imitate")
    try:
        widths = tuple(int(w) for w in hidden.split(","))
    except ValueError:
        raise click.BadParameter(f"{hidden!r}: write widths such as 256,256", param_hint="--hidden") from None
    torch.set_num_threads(torch_threads)
    try:
        config = label_rules(list(folders))
        train, test = split_labels(list(folders), holdout, limit=limit, temperature=temperature,
                                   weighting=weighting, heldout=heldout)
        start: Any = init
        warm: dict[str, Any] = {}
        if imitate:
            start, warm = imitate_agent(imitate, config, imitation_games, imitation_epochs, widths, seed,
                                        progress=not no_progress, action_head=action_head, trunk=trunk)
            warm = {k: v for k, v in warm.items() if k != "history"} | {"test_agreement": agreement(start, test)}
        settings = FitSettings(temperature=temperature, epochs=epochs, learning_rate=learning_rate,
                               hidden=tuple(widths), seed=seed, action_head=action_head, weighting=weighting,
                               trunk=trunk)
        model, stats = fit(train, config, settings, init=start, test=test, progress=not no_progress)
        stats["imitation"] = warm
        save_model(model, config, out, stats, precision=precision)
        stats["precision"] = precision
        if precision != "float32":  # play what was written: the weights as stored, widened back
            from agents.checkpoint import load_checkpoint

            model.load_state_dict(load_checkpoint(out)["model"])
        if deal_sets:
            stats[f"vs_{opponent}"] = strength(model, config, opponent, deal_sets, seed, workers)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    from training.provenance import with_provenance

    shown = {k: v for k, v in stats.items() if k != "history"}
    if stats.get("history"):  # the last epoch's figures (held-out agreement and regret among them)
        shown["end"] = stats["history"][-1]
    click.echo(json.dumps(with_provenance(shown, [out, init] if init else [out]), indent=2, default=str))
    click.echo(f"checkpoint written to {out} (chickenfoot eval {out} {opponent})")


@main.command()
@click.argument("checkpoints", nargs=-1, required=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The ensemble checkpoint to write.")
@_precision_option(" lab/zoo/strong-2p-ensemble.pt is int8.")
def ensemble(checkpoints: tuple[str, ...], out: str, precision: str) -> None:
    """Write one checkpoint that plays CHECKPOINTS (paths or zoo:NAME, two or more networks of
    the same game) as one agent: the move their policies agree on most (the mean of their
    log-probabilities). It plays wherever a checkpoint plays; trainers refuse it as a start."""
    if len(checkpoints) < 2:
        raise click.UsageError("an ensemble needs at least two checkpoints")
    from cf_env.packages import require_extra

    try:
        require_extra("torch", "train", "chickenfoot ensemble")
        from agents.checkpoint import model_payload, save_checkpoint
        from agents.torch_policy import PolicyEnsemble

        model, config = PolicyEnsemble.from_checkpoints(list(checkpoints))
        save_checkpoint(out, model_payload(model, config, 0, {"ensemble": list(checkpoints)}, precision=precision))
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None
    params = sum(p.numel() for p in model.parameters())
    click.echo(f"ensemble of {len(checkpoints)} networks ({params:,} weights, {precision}) written to {out} "
               f"(chickenfoot eval {out} heuristic --players {config.num_players})")


@main.command()
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of the game's deals.")
@_table_options
def demo(seed: int, players: int, max_pip: int, rounds: int | None) -> None:
    """Print one seeded game between random players, move by move."""
    from cf_env.demo import play_demo

    try:
        click.echo("\n".join(play_demo(standard_rules(players, max_pip, rounds), seed)))
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.option("--spec", "specs", multiple=True,
              help="A search spec whose kernels to compile (repeat) [default: the search specs make train and "
                   "the tests use].")
@click.option("--no-threads", is_flag=True, help="Skip the engine's threaded kernels.")
def precompile(specs: tuple[str, ...], no_threads: bool) -> None:
    """Compile and cache the engine's, the heuristic's and the search's numba kernels (about a
    minute), so that later commands start with them compiled."""
    from agents.precompile import DEFAULT_SPECS, describe
    from agents.precompile import precompile as compile_kernels

    try:
        click.echo(describe(compile_kernels(specs=specs or DEFAULT_SPECS, threads=not no_threads)))
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None


@main.group(invoke_without_command=True)
@click.pass_context
def configs(ctx: click.Context) -> None:
    """The packaged training configs: what --config NAME reads. Without a subcommand, lists them
    with the first line of each; `configs show NAME` prints one, as a start for your own."""
    if ctx.invoked_subcommand is not None:
        return
    from training.config import packaged_configs

    found = packaged_configs()
    width = max(map(len, found))
    for name, path in found.items():
        first = next((line.lstrip("# ").strip() for line in path.read_text(encoding="utf-8").splitlines()
                      if line.startswith("#")), "")
        click.echo(f"{name:<{width}}  {first}")
    click.echo("\nchickenfoot configs show NAME > mine.yaml   (then --config mine.yaml)")


@configs.command(name="show")
@click.argument("name")
def configs_show(name: str) -> None:
    """Print the packaged config NAME (or the YAML file at NAME)."""
    from training.config import config_path

    try:
        click.echo(config_path(name).read_text(encoding="utf-8"), nl=False)
    except ChickenFootError as exc:
        raise click.ClickException(str(exc)) from None


for _command in FRAMEWORK_COMMANDS:
    main.add_command(_command)


if __name__ == "__main__":
    sys.exit(main())
