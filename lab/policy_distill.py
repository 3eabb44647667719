"""Distil a network's (or an ensemble's) policy into one network, on the states of label shards.

The search's labels give each state a target from the teacher's values; here the target is what
``--teacher`` (a checkpoint, typically ``chickenfoot ensemble``'s) plays there instead, mixed with
the search's target by ``--mix`` (1: the teacher network's policy alone). The student is fitted
by :func:`training.distill.fit` as any distillation is, and its held-out figures are the search's
(agreement with the search's choice, the search's value its choices lose)::

    python -m lab.policy_distill --teacher ENSEMBLE.pt --init START.pt --out OUT.pt \
        --hidden 1024,1024 --trunk layernorm --epochs 3 --learning-rate 3e-4 --labels F1 F2 ...

The states need not come from a search's labels: ``--states F.npz ...`` reads states that
``python -m lab.policy_distill play`` wrote from games a network (the teacher, or a student:
DAgger with the ensemble as the expert) plays against opponents, at no search's cost. Its held-out
figure is then the agreement with the teacher's own choice::

    python -m lab.policy_distill play --player ENSEMBLE.pt --opponents heuristic zoo:strong-2p-545k \
        --games 13000 --out states-0.npz
    python -m lab.policy_distill --teacher ENSEMBLE.pt --init teacher:0 --states states-0.npz --out KD.pt

What it measured (the six-network ensemble, ``lab/zoo/strong-2p-ensemble.pt``, distilled into its
1024x1024 member: on the search's states, then on played states, which made ``zoo:strong-2p``) is
in ``lab/results/distill-2p.md``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from agents import checkpoint_file, load
from agents.base import act_batch
from agents.checkpoint import PRECISIONS, atomic_write, load_checkpoint
from agents.torch_policy import ActorCritic, PolicyEnsemble, TorchAgent
from cf_env import ConfigError, RulesConfig
from cf_env.vector import VectorGame
from training.distill import FitSettings, PackedObs, fit, label_rules, save_model, split_labels


def policy_targets(model: ActorCritic | PolicyEnsemble, obs: object, mask: np.ndarray,
                   batch: int = 16384) -> np.ndarray:
    """``model``'s move probabilities ``(N, A)`` on observations ``obs`` (an array or
    :class:`training.distill.PackedObs`, indexed by rows) with legal masks ``mask``."""
    return teacher_outputs(model, obs, mask, batch)[0]


@torch.no_grad()
def teacher_outputs(model: ActorCritic | PolicyEnsemble, obs: object, mask: np.ndarray,
                    batch: int = 16384) -> tuple[np.ndarray, np.ndarray]:
    """``model``'s move probabilities ``(N, A)`` and values ``(N,)``, one forward pass a batch."""
    model.eval()
    probs, values = np.zeros(mask.shape, np.float32), np.zeros(len(mask), np.float32)
    for s in range(0, len(mask), batch):
        rows = np.arange(s, min(len(mask), s + batch))
        logits, value = model(torch.as_tensor(obs[rows]), torch.as_tensor(mask[rows]))  # type: ignore[index]
        probs[rows], values[rows] = torch.softmax(logits, dim=-1).numpy(), value.numpy()
    return probs, values


def play_states(player: object, opponents: Sequence[object], config: RulesConfig, games: int, seed: int,
                self_play: float = 0.25, slots: int = 64, progress: bool = False) -> dict[str, np.ndarray]:
    """The states at which ``player`` (an agent) had a choice in ``games`` games: it takes seat 0
    of every game and each other seat with chance ``self_play``, the rest drawn uniformly from
    ``opponents``; the games run in lockstep on the batched engine, ``slots`` at a time (a
    progress bar of games with ``progress``). Returns
    ``obs`` (int16 codes, :class:`training.distill.PackedObs`) and ``mask`` (bool)."""
    if games < 1 or slots < 1 or not opponents:
        raise ConfigError(f"play_states needs games and slots >= 1 and an opponent, got {games}, {slots}, "
                          f"{len(opponents)}")
    rng = np.random.default_rng(seed)
    n = config.num_players
    slots = min(slots, games)
    vg = VectorGame(config, num_games=slots, reward="win", seed=np.random.default_rng(rng.integers(2**63)))
    obs, mask, seat = vg.reset()
    agents = [player, *opponents]
    who = np.zeros((slots, n), np.int64)  # 0: the player, i > 0: opponents[i - 1]
    live = np.ones(slots, bool)  # slots past the last game still step, unrecorded

    def deal(slot: int) -> None:
        who[slot, 1:] = [0 if rng.random() < self_play else 1 + int(rng.integers(len(opponents)))
                         for _ in range(n - 1)]

    for slot in range(slots):
        deal(slot)
    from tqdm.auto import tqdm

    bar = tqdm(total=games, desc="play", unit="game", disable=not progress)
    started, finished = slots, 0
    codes: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    while finished < games:
        actor = who[np.arange(slots), seat]
        actions = np.zeros(slots, np.int64)
        for kind in np.unique(actor):
            idx = np.flatnonzero(actor == kind)
            actions[idx] = act_batch(agents[kind], obs[idx], mask[idx], rng)
        recorded = np.flatnonzero(live & (actor == 0) & (mask.sum(axis=1) > 1))
        packed = PackedObs.pack(obs[recorded])
        if packed is None:
            raise ConfigError("these observations do not pack into int16 codes exactly")
        codes.append(packed)
        masks.append(mask[recorded] != 0)
        obs, mask, seat, _, done = vg.step(actions)
        for b in np.flatnonzero(done):
            finished += int(live[b])
            bar.update(int(live[b]))
            live[b] = started < games
            started += int(live[b])
            deal(int(b))
    bar.close()
    return {"obs": np.concatenate(codes), "mask": np.concatenate(masks)}


def play_parser() -> argparse.ArgumentParser:
    """The command line :func:`play_main` reads."""
    p = argparse.ArgumentParser(prog="python -m lab.policy_distill play",
                                description=(play_states.__doc__ or "").split("\n\n")[0])
    p.add_argument("--player", required=True, help="The agent whose choices are recorded (a checkpoint or zoo:NAME).")
    p.add_argument("--opponents", nargs="+", default=["heuristic"], help="Agent specs for the other seats.")
    p.add_argument("--games", type=int, required=True)
    p.add_argument("--self-play", type=float, default=0.25, help="Chance each other seat is the player too.")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--no-progress", action="store_true", help="No progress bar.")
    p.add_argument("--out", required=True, help="The .npz file the states go to.")
    return p


def play_main(argv: Sequence[str]) -> dict:
    """``python -m lab.policy_distill play``: write :func:`play_states`' states to ``--out``."""
    args = play_parser().parse_args(argv)
    if not 0.0 <= args.self_play <= 1.0:
        play_parser().error(f"--self-play is a chance, in [0, 1], got {args.self_play}")
    torch.set_num_threads(args.torch_threads)
    config = RulesConfig.from_dict(load_checkpoint(checkpoint_file(args.player))["rules"])
    states = play_states(load(args.player, config), [load(o, config) for o in args.opponents], config,
                         args.games, args.seed, args.self_play, progress=not args.no_progress)
    meta = {"rules": json.dumps(config.to_dict()), "player": args.player, "opponents": json.dumps(args.opponents),
            "games": args.games, "seed": args.seed, "self_play": args.self_play}
    atomic_write(args.out, lambda f: np.savez_compressed(f, obs=states["obs"], mask=states["mask"], **meta))
    out = {"states": len(states["mask"]), "games": args.games, "out": args.out}
    print(json.dumps(out))
    return out


def read_states(paths: Sequence[str], holdout: float) -> tuple[dict[str, Any], dict[str, np.ndarray], RulesConfig]:
    """The states of ``play`` files (training part as a PackedObs, held-out part unpacked: the
    last ``holdout`` of the last file) and their rules, which must agree."""
    codes, masks, rules = [], [], set()
    for path in paths:
        with np.load(path) as f:
            codes.append(f["obs"])
            masks.append(f["mask"])
            rules.add(str(f["rules"]))
    if len(rules) != 1:
        raise ConfigError(f"the state files {list(paths)} are of different rules")
    cut = sum(len(m) for m in masks) - int(round(holdout * len(masks[-1])))
    obs, mask = np.concatenate(codes), np.concatenate(masks)
    return ({"obs": PackedObs(obs[:cut]), "mask": mask[:cut]}, {"obs": PackedObs(obs[cut:])[:], "mask": mask[cut:]},
            RulesConfig.from_dict(json.loads(rules.pop())))


def parser() -> argparse.ArgumentParser:
    """The command line :func:`main` reads."""
    parser = argparse.ArgumentParser(prog="python -m lab.policy_distill", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--labels", nargs="+", help="Label folders (the last one's last shards held out).")
    source.add_argument("--states", nargs="+", help="State files of `play` (the last one's last part held out).")
    parser.add_argument("--teacher", required=True, help="The checkpoint (a path or zoo:NAME) whose policy is the target.")
    parser.add_argument("--out", required=True)
    parser.add_argument("--init", default=None, help="The checkpoint the student starts from, or teacher:K for the "
                        "teacher ensemble's member K [default: a new network].")
    parser.add_argument("--mix", type=float, default=1.0, help="The teacher network's share of the target.")
    parser.add_argument("--temperature", type=float, default=0.03, help="The search target's temperature.")
    parser.add_argument("--holdout", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--hidden", default="1024,1024")
    parser.add_argument("--trunk", default="layernorm", choices=["tanh", "layernorm"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument("--precision", default="float32", choices=PRECISIONS, help="How the weights are stored.")
    return parser


def main(argv: Sequence[str] | None = None) -> dict:
    argv = list(argv) if argv is not None else sys.argv[1:]
    if argv[:1] == ["play"]:
        return play_main(argv[1:])
    args = parser().parse_args(argv)
    if not 0.0 <= args.mix <= 1.0:
        parser().error(f"--mix is the teacher network's share, in [0, 1], got {args.mix}")
    torch.set_num_threads(args.torch_threads)
    teacher_path = checkpoint_file(args.teacher)
    if args.labels:
        config = label_rules(args.labels)
        train, test = split_labels(args.labels, args.holdout, temperature=args.temperature)
        teacher = TorchAgent.from_checkpoint(teacher_path, config).model
        target = policy_targets(teacher, train["obs"], train["mask"])
        train["target"] = args.mix * target + (1 - args.mix) * train["target"]
    else:
        if args.mix != 1.0:
            parser().error("--mix needs --labels: played states have no search target to mix with")
        train, test, config = read_states(args.states, args.holdout)
        teacher = TorchAgent.from_checkpoint(teacher_path, config).model
        train["target"], train["ret"] = teacher_outputs(teacher, train["obs"], train["mask"])  # value: the teacher's
        train["choice"] = train["target"].argmax(axis=1).astype(np.int16)
        train |= {"target_temperature": args.temperature, "weighting": "none"}
        test["choice"] = policy_targets(teacher, test["obs"], test["mask"]).argmax(axis=1).astype(np.int16)
    members = load_checkpoint(teacher_path).get("train_config", {}).get("ensemble")
    init: str | ActorCritic | None = args.init
    if args.init and args.init.startswith("teacher:"):
        if not isinstance(teacher, PolicyEnsemble):
            parser().error(f"--init {args.init} needs an ensemble teacher; {args.teacher} is one network")
        k = args.init.split(":", 1)[1]
        if not k.isdigit() or not 0 <= (k := int(k)) < len(teacher.members):
            parser().error(f"--init {args.init}: the teacher has members 0 to {len(teacher.members) - 1}")
        member = teacher.members[k]
        assert isinstance(member, ActorCritic)
        init = copy.deepcopy(member)
    settings = FitSettings(temperature=args.temperature, epochs=args.epochs, learning_rate=args.learning_rate,
                           hidden=tuple(int(w) for w in args.hidden.split(",")), trunk=args.trunk, seed=args.seed)
    model, stats = fit(train, config, settings, init=init, test=test, progress=False)
    stats |= {"teacher": args.teacher, "mix": args.mix, "init": args.init, "learning_rate": args.learning_rate,
              "source": {"labels": args.labels} if args.labels else {"states": args.states}}
    if members:  # the teacher's members, so that the student's file says what it learnt from
        stats["teacher_ensemble"] = members
    save_model(model, config, args.out, stats, precision=args.precision)
    print(json.dumps({k: v for k, v in stats.items() if k != "history"} | {"end": stats["history"][-1]}, indent=2))
    return stats


if __name__ == "__main__":
    main()
