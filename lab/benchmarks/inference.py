"""How well the search's worlds guess the opponents' hands, per inference mode (JSON).

Plays games of a lineup; at positions where the observer (seat 0) has a choice, samples worlds
from its observation (with the history entry) as the search does, with ``infer=none``,
``constraints`` and ``policy``, and scores them against the true hands: the share of each
opponent's true tiles among the tiles the worlds give it (1.0 would be a perfect guess; uniform
guessing gives about hand size / hidden tiles), and the same share weighted by how many tiles of
the hand the opponents have played this round (late positions, where plays say the most).

    python -m lab.benchmarks.inference --games 20 --worlds 64 --lineup heuristic heuristic heuristic heuristic
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents import load
from agents.search.spec import DEFAULTS
from agents.search.worlds import sample_worlds
from cf_env import ObservationEncoder, RulesConfig, raw_env

MODES = ("none", "constraints", "policy")


def _paired(a: list, b: list) -> dict:
    d = np.asarray(a) - np.asarray(b)
    return {"mean": round(float(d.mean()), 4), "se": round(float(d.std() / np.sqrt(len(d))), 4)}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--proposals", type=int, default=DEFAULTS["proposals"])
    parser.add_argument("--temp", type=float, default=DEFAULTS["temp"])
    parser.add_argument("--lineup", nargs="+", default=["heuristic"], help="one spec per seat, or one for all")
    args = parser.parse_args()
    config = RulesConfig(num_players=args.players)
    n = config.num_players
    specs = args.lineup * n if len(args.lineup) == 1 else args.lineup
    seats = [load(s, config) for s in specs]
    encoder = ObservationEncoder(config)
    env = raw_env(config=config, history=True)
    rng = np.random.default_rng(args.seed)
    share = {m: [] for m in MODES}
    late = {m: [] for m in MODES}
    seconds = dict.fromkeys(MODES, 0.0)
    positions = 0
    for _ in range(args.games):
        env.reset(seed=int(rng.integers(2**63)))
        game = env.game  # a copy that follows the env's game: every action is applied to both
        while not game.is_over:
            seat = game.current_player
            obs = env.observe(env.agent_selection)
            if seat == 0 and int(obs["action_mask"].sum()) > 1:
                positions += 1
                truth = [{t.index for t in game.hand((seat + i) % n)} for i in range(1, n)]
                played = sum(len(game.played_by((seat + i) % n)) for i in range(1, n))
                for mode in MODES:
                    t0 = time.perf_counter()
                    worlds = sample_worlds(obs, args.worlds, np.random.default_rng(positions), encoder, infer=mode,
                                           temp=args.temp, proposals=args.proposals if mode == "policy" else 1)
                    seconds[mode] += time.perf_counter() - t0
                    hits = total = 0
                    for i in range(1, n):
                        dealt = worlds.hands[:, i, :]
                        hits += int(dealt[:, sorted(truth[i - 1])].sum()) if truth[i - 1] else 0
                        total += int(dealt.sum())
                    value = hits / max(total, 1)
                    share[mode].append(value)
                    late[mode].extend([value] * played)
            action = seats[seat].act(obs, rng)
            env.step(action)
            game.apply(action)
    report = {
        "lineup": specs, "games": args.games, "positions": positions, "worlds": args.worlds,
        "proposals": args.proposals, "temp": args.temp,
        "true_tile_share": {m: round(float(np.mean(share[m])), 4) for m in MODES},
        "true_tile_share_se": {m: round(float(np.std(share[m]) / np.sqrt(len(share[m]))), 4) for m in MODES},
        "true_tile_share_by_plays_seen": {m: round(float(np.mean(late[m])), 4) for m in MODES},
        "paired_difference": {f"{a}_minus_{b}": _paired(share[a], share[b])
                              for a, b in (("policy", "constraints"), ("constraints", "none"))},
        "ms_per_world": {m: round(1000 * seconds[m] / max(positions * args.worlds, 1), 4) for m in MODES},
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
