"""Expert iteration's teachers: labels per second per core, and whether a faster teacher labels alike.

Two collections, each in one process with one torch thread (the trainer runs ``workers`` such
processes side by side), a student network (``zoo:strong-4p``; ``zoo:strong-2p-545k``, a network of
the same size, in 2 players) in seat 0 and, with
``self_play_prob`` 0.5, in the other seats, heuristic opponents:

* ``aec``: the one-decision teacher (:func:`training.expert.collect_games` with ``one_by_one``,
  :func:`training.labels.collect_labels_env`): the PettingZoo env, one search per decision,
  ``--teacher`` (default the plain ``search:ms=0:sims=256``);
* ``lockstep``: the throughput teacher (:func:`training.labels.collect_labels`): ``--slots`` games
  stepped together on the batched engine, one forward pass for the student's seats, and
  ``--fast-teacher`` (default the racing ``search:ms=0:sims=256:race=2``) at each labelled decision.

With ``--agreement N`` it also labels N states (from the lockstep collection) twice with the plain
teacher (two seeds: its self-agreement) and once with the fast one (and with each of ``--compare
SPEC ...``): a fast teacher is as good as the plain one when it agrees with it as often as the
plain one agrees with itself.

``--student zoo:NAME`` picks the network (a tanh 256x256 one for the aec run); copied onto an older
checkout, the script times that release's one-decision teacher with the same network. Prints
JSON, medians over ``--runs``::

    python -m lab.benchmarks.expert --games 4 --runs 3 --agreement 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np


def aec_run(games: int, teacher: str, players: int, seed: int, student: str) -> dict[str, float]:
    from agents import checkpoint_file
    from agents.checkpoint import load_checkpoint
    from cf_env import RulesConfig
    from training.expert import collect_games, collector_state
    from training.workers import WorkerPool

    config = RulesConfig(num_players=players)
    data = load_checkpoint(checkpoint_file(student))
    if data["model_kwargs"].get("hidden") != [256, 256] or data["model_kwargs"].get("trunk", "tanh") != "tanh":
        raise SystemExit(f"the aec run's collector builds a tanh 256x256 network, and {student} is "
                         f"{data['model_kwargs'].get('hidden') or 'an ensemble'}: pass --student with such a network "
                         f"(zoo:strong-4p, zoo:strong-2p-545k) or --only lockstep")
    weights = data["model"]
    with WorkerPool(1, collector_state, (config, teacher, ["heuristic"], [256, 256])) as pool:
        start = time.perf_counter()
        out = pool.submit(collect_games, weights, list(range(seed, seed + games)),
                          {"self_play_prob": 0.5, "beta": 0.0, "target_temperature": 0.0, "gamma": 0.99,
                           "one_by_one": True}).result()
        seconds = time.perf_counter() - start
    return {"labels_per_second": out["teacher_decisions"] / seconds,
            "ms_per_label_teacher": 1000 * out["teacher_seconds"] / max(out["teacher_decisions"], 1),
            "labels_per_game": out["teacher_decisions"] / games, "seconds": seconds}


def lockstep_run(games: int, teacher: str, players: int, seed: int, slots: int,
                 student: str) -> tuple[dict[str, float], dict]:
    from agents import load
    from cf_env import RulesConfig
    from training.labels import collect_labels

    config = RulesConfig(num_players=players)
    student_agent, search = load(student, config), load(teacher, config)
    out = collect_labels(student_agent, search, [load("heuristic", config)], config, games, seed=seed, slots=slots)
    n = len(out["ret"])
    return {"labels_per_second": n / out["seconds"], "ms_per_label_teacher": 1000 * out["teacher_seconds"] / max(n, 1),
            "labels_per_game": n / games, "seconds": out["seconds"],
            "rollout_decisions_per_label": out["rollout_decisions"] / max(n, 1)}, out


def agreement(labels: dict, count: int, plain: str, others: list[str], players: int) -> dict:
    """The plain teacher's self-agreement on ``count`` of the states (two seeds), and each of
    ``others``' agreement with it (with each of its two labellings, and their mean), with the
    search milliseconds and rollout decisions per label of each."""
    from agents import load
    from cf_env import RulesConfig

    config = RulesConfig(num_players=players)
    rows = np.random.default_rng(0).permutation(len(labels["ret"]))[:count]
    views = [{"observation": labels["obs"][r], "action_mask": labels["mask"][r].astype(np.int8)} for r in rows]

    def label(spec: str, seed: int) -> tuple[np.ndarray, float, float]:
        agent: Any = load(spec, config)  # a SearchAgent: it has last_search
        agent.act(views[0], np.random.default_rng(0))  # compiled before the clock
        t0, steps, choices = time.perf_counter(), 0, []
        for i, v in enumerate(views):
            choices.append(agent.act(v, np.random.default_rng(seed + i)))
            steps += agent.last_search["rollout_decisions"]
        return np.array(choices), 1000 * (time.perf_counter() - t0) / len(views), steps / len(views)

    first, plain_ms, plain_steps = label(plain, 10_000)
    second = label(plain, 20_000)[0]
    result: dict = {"states": len(views), "plain": plain, "plain_self_agreement": float(np.mean(first == second)),
                    "plain_ms_per_label": plain_ms, "plain_rollout_decisions_per_label": plain_steps, "others": []}
    for spec in others:
        quick, ms, steps = label(spec, 30_000)
        a, b = float(np.mean(quick == first)), float(np.mean(quick == second))
        result["others"].append({"teacher": spec, "agreement_with_plain": (a + b) / 2, "with_each_seed": [a, b],
                                 "ms_per_label": ms, "rollout_decisions_per_label": steps,
                                 "search_speedup": plain_ms / ms})
    return result


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--student", default="",
                        help="the student network, a zoo:NAME [default: zoo:strong-4p, in 2 players zoo:strong-2p-545k]; "
                             "the aec run takes its weights (tanh 256x256)")
    parser.add_argument("--teacher", default="search:ms=0:sims=256")
    parser.add_argument("--fast-teacher", default="search:ms=0:sims=256:race=2")
    parser.add_argument("--agreement", type=int, default=0, help="states to compare the two teachers on")
    parser.add_argument("--compare", nargs="+", default=[],
                        help="with --agreement, more teachers to compare with the plain one on the same states")
    parser.add_argument("--only", choices=("aec", "lockstep"), default=None,
                        help="one collection only (e.g. the aec one run against an earlier checkout)")
    args = parser.parse_args()
    student = args.student or ("zoo:strong-2p-545k" if args.players == 2 else f"zoo:strong-{args.players}p")
    torch.set_num_threads(1)  # one worker's share of the machine, as in a collection with workers
    aec, lock, labels = [], [], None
    for k in range(args.runs):  # in turns, so that load on the machine falls on both alike
        if args.only != "lockstep":
            aec.append(aec_run(args.games, args.teacher, args.players, seed=100 * k, student=student))
        if args.only != "aec":
            figures, out = lockstep_run(args.games, args.fast_teacher, args.players, 100 * k, args.slots, student)
            lock.append(figures)
            labels = out if labels is None else {key: np.concatenate([labels[key], out[key]])
                                                 for key in ("obs", "mask", "ret")}
    result: dict = {"players": args.players, "student": student, "games_per_run": args.games, "runs": args.runs}
    if aec:
        result["aec"] = {"teacher": args.teacher, **{k: statistics.median(r[k] for r in aec) for k in aec[0]}}
    if lock:
        result["lockstep"] = {"teacher": args.fast_teacher, "slots": args.slots,
                              **{k: statistics.median(r[k] for r in lock) for k in lock[0]}}
    if aec and lock:
        result["labels_per_second_ratio"] = statistics.median(b["labels_per_second"] / a["labels_per_second"]
                                                              for a, b in zip(aec, lock))
    if args.agreement and labels is not None:
        result["agreement"] = agreement(labels, args.agreement, args.teacher,
                                        list(dict.fromkeys([args.fast_teacher, *args.compare])), args.players)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
