"""How near a network's greedy move is to its second choice, and how much noise reorders them.

A network that plays its argmax (DMC's actors, ``chickenfoot eval`` of a checkpoint) changes its
play wherever its top two logits trade places. Read as DMC's advantages (``init_checkpoint``
divided by ``temperature``), a distilled network's margins must be compared with the size of the
updates the returns make to them. This measures, over seat 0's decisions with a choice in games
of ``--player`` against ``--opponents`` (:func:`lab.oracle_regret.collect_positions`), the gap
between the checkpoint's top two legal logits (in the logits' own units, and divided by
``--temperature``), and the share of decisions whose argmax changes when Gaussian noise of each
``--noise`` standard deviation (in the divided units) is added to every logit::

    python -m lab.argmax_margin zoo:strong-4p --temperature 10 --games 40 --noise 0.01 0.03 0.1

prints one JSON object; ``--against CKPT`` adds where that checkpoint's argmax differs
(:func:`moved`: the share, the kinds of change, and whether the new tiles are lighter). What
noise of that size costs in play, :class:`NoisyNetwork` measures: the network playing the argmax
of its logits plus fresh Gaussian noise at each decision, an agent spec like any other::

    chickenfoot eval lab.argmax_margin:NoisyNetwork:sigma=0.3 heuristic --deal-sets 100 --workers 2

What they found is in lab/results/dmc.md (session 76).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from agents import checkpoint_file, spec_rules
from agents.checkpoint import load_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, model_from_checkpoint
from cf_env import RulesConfig
from lab.oracle_regret import collect_positions

__all__ = ["NoisyNetwork", "argmax_margin", "main", "moved"]

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def argmax_margin(model: ActorCritic, obs: np.ndarray, mask: np.ndarray, temperature: float,
                  noise: Sequence[float], draws: int, seed: int) -> dict:
    """The top-two gaps of ``model``'s logits at these positions and the argmax changes under
    ``noise`` (see the module docstring); ``draws`` noise draws each, averaged."""
    obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask.astype(bool))
    if not bool((mask_t.sum(1) > 1).all()):
        raise ValueError("every position needs two legal actions or more: a gap needs a second choice")
    with torch.no_grad():
        logits, _ = model(obs_t, mask_t)
    top = logits.topk(2, dim=1).values
    gap = (top[:, 0] - top[:, 1]).numpy()
    best = logits.argmax(1)
    gen = torch.Generator().manual_seed(seed)
    changed = {}
    for sigma in noise:
        shares = []
        for _ in range(draws):
            noisy = logits + torch.randn(logits.shape, generator=gen) * sigma * temperature
            shares.append(float((noisy.masked_fill(~mask_t, float("-inf")).argmax(1) != best).float().mean()))
        changed[str(sigma)] = round(float(np.mean(shares)), 4)
    return {"positions": len(gap), "temperature": temperature,
            "gap_quantiles": {str(q): round(float(np.quantile(gap, q)), 4) for q in QUANTILES},
            "gap_quantiles_divided": {str(q): round(float(np.quantile(gap, q)) / temperature, 4) for q in QUANTILES},
            "share_gap_below_divided": {str(s): round(float((gap / temperature < s).mean()), 4) for s in noise},
            "argmax_changed_by_noise": changed}


def moved(before: torch.nn.Module, after: torch.nn.Module, obs: np.ndarray, mask: np.ndarray,
          config: RulesConfig) -> dict:
    """Where ``after``'s argmax differs from ``before``'s at these positions: the share changed,
    the changes by kind (``play``, ``draw``, ``pass``: ``"play->pass"``...), and over the changes
    from one play to another the mean pips of the two tiles and the share where the new one is
    lighter."""
    from collections import Counter

    from cf_env import action_table

    table = action_table(config.max_pip)
    obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask.astype(bool))
    with torch.no_grad():
        old = before(obs_t, mask_t)[0].argmax(1).numpy()
        new = after(obs_t, mask_t)[0].argmax(1).numpy()

    def kind(a: int) -> str:
        return "draw" if a == table.draw else "pass" if a == table.pass_ else "play"

    changed = np.flatnonzero(old != new)
    kinds = dict(Counter(f"{kind(old[i])}->{kind(new[i])}" for i in changed))
    plays = [(table.match[old[i]] + table.expose[old[i]], table.match[new[i]] + table.expose[new[i]])
             for i in changed if kind(old[i]) == kind(new[i]) == "play"]
    pips = np.array(plays, dtype=float).reshape(-1, 2)
    return {"positions": len(old), "changed": round(float(len(changed) / max(len(old), 1)), 4), "kinds": kinds,
            "play_to_play": {"count": len(plays),
                             "pips_before": round(float(pips[:, 0].mean()), 3) if plays else None,
                             "pips_after": round(float(pips[:, 1].mean()), 3) if plays else None,
                             "share_lighter": round(float((pips[:, 1] < pips[:, 0]).mean()), 4) if plays else None}}


class NoisyNetwork:
    """A checkpoint (``net``: a path or a zoo name, ``strong-4p`` by default) playing the argmax of
    its logits plus Gaussian noise of standard deviation ``sigma`` (in the logits' units; DMC's
    divided units times the temperature), drawn afresh at every decision with the generator
    given to :meth:`act`: a network whose near-ties are broken at random, not a worse one."""

    def __init__(self, config: RulesConfig, net: str = "strong-4p", sigma: float = 0.0) -> None:
        if not sigma >= 0:
            raise ValueError(f"sigma must be >= 0, got {sigma}")
        spec = net if Path(str(net)).suffix == ".pt" else f"zoo:{net}"
        self.agent = TorchAgent.from_checkpoint(checkpoint_file(spec), config)
        self.config, self.sigma, self.name = config, float(sigma), f"noisy {spec} sigma={sigma}"

    @torch.no_grad()
    def act(self, observation: dict, rng: np.random.Generator) -> int:
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
        legal = np.asarray(observation["action_mask"]).astype(bool)
        logits = self.agent.model(obs, torch.from_numpy(legal)[None])[0][0].numpy()
        noisy = logits + rng.normal(0.0, self.sigma, logits.shape) if self.sigma else logits
        return int(np.flatnonzero(legal)[np.argmax(noisy[legal])])


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m lab.argmax_margin", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a checkpoint path or zoo:NAME")
    parser.add_argument("--temperature", type=float, default=1.0, help="the logits' divisor (init_checkpoint's)")
    parser.add_argument("--player", default="heuristic", help="seat 0's agent in the games the positions come from")
    parser.add_argument("--opponents", default="heuristic")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--noise", type=float, nargs="+", default=[0.01, 0.03, 0.1])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", help="another checkpoint: also report where its argmax differs (moved())")
    args = parser.parse_args(argv)
    if args.temperature <= 0:
        parser.error(f"--temperature must be > 0, got {args.temperature}")
    config = spec_rules(args.checkpoint) or RulesConfig()

    def network(spec: str) -> ActorCritic:
        path = checkpoint_file(spec)
        model = model_from_checkpoint(load_checkpoint(path), config, path)
        if not isinstance(model, ActorCritic):
            parser.error(f"{spec} is an ensemble; give one of its members")
        return model.eval()

    model = network(args.checkpoint)
    found = collect_positions(config, args.player, args.opponents, args.games, args.seed)
    obs = np.stack([p["observation"] for p in found]).astype(np.float32)
    mask = np.stack([p["action_mask"] for p in found]).astype(bool)
    report = {"checkpoint": args.checkpoint, "games": args.games, "player": args.player, "opponents": args.opponents,
              **argmax_margin(model, obs, mask, args.temperature, args.noise, args.draws, args.seed)}
    if args.against:
        report["moved"] = {"against": args.against, **moved(model, network(args.against), obs, mask, config)}
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
