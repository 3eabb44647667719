"""Bring your own agent: write one, evaluate it in Python and on the command line, and save your
own PyTorch network in the checkpoint format that ``chickenfoot eval`` and ``chickenfoot play``
load.

    python examples/my_agent.py                 # 50 deal sets per match-up, files in runs/example
    python examples/my_agent.py --deal-sets 5 --out /tmp/example

Every command that takes an agent spec takes your class too, as ``FILE.py:Class`` or
``module:Class``, with keyword arguments after it::

    chickenfoot eval examples/my_agent.py:MyAgent heuristic
    chickenfoot compare examples/my_agent.py:MyAgent examples/my_agent.py:MyAgent:doubles_first=False
    chickenfoot ladder examples/my_agent.py:MyAgent
    chickenfoot play --opponents examples/my_agent.py:MyAgent

An agent is any object with ``name``, ``config`` and ``act(observation, rng) -> action id``
(:class:`agents.Agent`); ``observation`` is the env's dict: ``"observation"`` (float32 vector,
:class:`cf_env.ObservationEncoder` names its blocks) and ``"action_mask"`` (int8, 1 = legal).
All randomness must come from ``rng``: then an evaluation with a seed is reproducible.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from agents import load
from agents.checkpoint import model_payload, save_checkpoint
from agents.torch_policy import ActorCritic, observation_scale
from cf_env import ObservationEncoder, RulesConfig, action_table
from training.evaluate import evaluate


class LightestFirst:
    """Plays its lightest legal tile: the opposite of the greedy baseline (a poor idea, since the
    heavy tiles then stay in hand, which is what makes it a clear example)."""

    name = "lightest-first"

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        table = action_table(config.max_pip)
        self.draw = table.draw  # ids below it are plays; draw and pass come last
        self.pips = np.array([table.match[a] + table.expose[a] for a in range(table.draw)])
        self.encoder = ObservationEncoder(config)  # decode(vector) names every block, if you need them

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        plays = legal[legal < self.draw]
        if plays.size == 0:
            return int(legal[0])  # the one legal draw or pass
        lightest = plays[self.pips[plays] == self.pips[plays].min()]
        return int(rng.choice(lightest))  # ties broken by the evaluation's generator: reproducible


class MyAgent:
    """Gets rid of its doubles first (a double opens a chicken foot that others must satisfy),
    then plays its heaviest tile, as the greedy baseline does. ``doubles_first=False`` makes it
    the greedy baseline. Loaded by ``chickenfoot ... examples/my_agent.py:MyAgent`` as
    ``MyAgent(config)`` (``:doubles_first=False`` adds the keyword)."""

    name = "my-agent"

    def __init__(self, config: RulesConfig, doubles_first: bool = True) -> None:
        self.config = config
        table = action_table(config.max_pip)
        self.draw = table.draw
        low, high = np.array(table.tile_low), np.array(table.tile_high)
        tile = np.array(table.action_tile[: table.draw])
        self.weight = (low[tile] + high[tile]).astype(float)  # the pips each play sheds
        if doubles_first:
            self.weight += 100.0 * (low[tile] == high[tile])

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        plays = legal[legal < self.draw]
        if plays.size == 0:
            return int(legal[0])
        best = plays[self.weight[plays] == self.weight[plays].max()]
        return int(rng.choice(best))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deal-sets", type=int, default=50)
    parser.add_argument("--out", default="runs/example")
    args = parser.parse_args()
    config = RulesConfig(num_players=2, max_pip=6, rounds=3)

    # 1. Your agent against a baseline, in Python: duplicate deals, every seat rotation.
    report = evaluate([LightestFirst(config), "greedy"], config, deal_sets=args.deal_sets, seed=0, progress=False)
    print(report.table())

    # 2. Your own PyTorch network, saved so that the command line can load it. The checkpoint
    #    format holds an agents.torch_policy.ActorCritic (an MLP over the observation; give it the
    #    widths you trained); train its weights with any code you like before saving.
    encoder = ObservationEncoder(config)
    model = ActorCritic(encoder.size, config.num_actions, (64, 64), obs_scale=observation_scale(config))
    path = save_checkpoint(Path(args.out) / "my_network.pt",
                           model_payload(model, config, train_step=0, train_config={"trainer": "examples/my_agent.py"}))
    network = load(str(path))  # what `chickenfoot eval` and `chickenfoot play` do with the path
    report = evaluate([network, "random"], config, deal_sets=args.deal_sets, seed=0, progress=False)
    print(report.table())
    print(f"\nOn the command line (the rules come from the checkpoint):\n"
          f"  chickenfoot eval {path} greedy --deal-sets {args.deal_sets}\n"
          f"  chickenfoot play --opponents {path}")


if __name__ == "__main__":
    main()
