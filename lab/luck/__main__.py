"""``python -m lab.luck``: a luck-corrected evaluation (``eval``) or a value function's fit (``fit``).

    python -m lab.luck eval zoo:strong-4p heuristic --deal-sets 500 --workers 2 --json eval.json
    python -m lab.luck eval heuristic greedy --deal-sets 40 --rollouts 16
    python -m lab.luck fit --players 4 --games 12000
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cf_env import RulesConfig


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.luck", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate a lineup, raw and luck-corrected (duplicate deals)")
    ev.add_argument("agents", nargs="+", help="agent specs; the last fills the remaining seats")
    fit = sub.add_parser("fit", help="fit and write a value function")
    for p in (ev, fit):
        p.add_argument("--players", type=int, default=4)
        p.add_argument("--max-pip", type=int, default=9)
        p.add_argument("--rounds", type=int, default=None)
        p.add_argument("--hand-size", type=int, default=None)
    ev.add_argument("--deal-sets", type=int, default=100)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--workers", type=int, default=1)
    ev.add_argument("--value", default=None, help="a value function [default: the shipped or cached one]")
    ev.add_argument("--rollouts", type=int, default=0, help="value draws by this many rollouts per tile")
    ev.add_argument("--json", default=None, help="write the report here")
    ev.add_argument("--no-progress", action="store_true")
    fit.add_argument("--games", type=int, default=4000)
    fit.add_argument("--epochs", type=int, default=3)
    fit.add_argument("--hidden", type=int, default=64)
    fit.add_argument("--seed", type=int, default=20_180_202)
    fit.add_argument("--tiles", action="store_true", help="also read every hand tile by tile (a larger input)")
    fit.add_argument("--out", default=None, help="[default: lab/zoo/luck-KEY.pt]")
    args = parser.parse_args(argv)
    rules: dict[str, Any] = {"num_players": args.players, "max_pip": args.max_pip}
    if args.rounds is not None:
        rules["rounds"] = args.rounds
    if args.hand_size is not None:
        rules["hand_size"] = args.hand_size
    config = RulesConfig(**rules)
    if args.command == "eval":
        from lab.luck.evaluation import luck_evaluate

        report = luck_evaluate(args.agents, config, deal_sets=args.deal_sets, seed=args.seed, value=args.value,
                               rollouts=args.rollouts, workers=args.workers, progress=not args.no_progress)
        print(report.table())
        if args.json:
            Path(args.json).write_text(json.dumps(report.to_json(), indent=2))
        return
    from lab.luck.value import fit_luck_value, shipped_path

    value = fit_luck_value(config, games=args.games, seed=args.seed, epochs=args.epochs, hidden=args.hidden,
                           tiles=args.tiles)
    out = Path(args.out) if args.out else shipped_path(config)
    value.save(out)
    print(json.dumps({"path": str(out), "rules": config.to_dict(), **value.meta}, indent=1))


if __name__ == "__main__":
    main()
