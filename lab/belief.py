"""A learned belief over the hidden tiles, measured against the search's samplers (the strength issue, item 3).

Where is each tile a seat cannot see: in which opponent's hand, or in the boneyard? The search
answers by sampling worlds (:mod:`agents.search.worlds`: ``infer=constraints`` keeps to what the
opponents' failures to match rule out, ``infer=policy`` also weights worlds by how likely the
opponents' plays were under a heuristic softmax). This module trains a network that answers it
from the observation alone, and scores all of them the same way on held-out positions: the
log-loss of the true location of every hidden tile (nats per tile; lower is sharper) and the mean
probability given to it.

    python -m lab.belief collect --out DIR --games 600            # self-play positions (resumable shards)
    python -m lab.belief fit DIR --out belief.pt                  # train on all but the last shards
    python -m lab.belief score DIR --model belief.pt --positions 1000 --worlds 128

A sampler's probabilities are the share of ``--worlds`` sampled worlds that put the tile there,
smoothed by ``alpha`` (reported for several; a location that cannot hold a tile, an empty hand
or an empty boneyard, gets none). Labels are observer-relative: ``0 .. n-2`` the opponents
clockwise from the observer's left, ``n-1`` the boneyard, ``-1`` a tile the observer sees.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from agents import load
from agents.search.spec import DEFAULTS
from agents.search.worlds import World, sample_worlds
from cf_env import ObservationEncoder, RulesConfig, raw_env
from lab.belief_net import BeliefNet, load_belief, location_open

SEEN = -1  #: the label of a tile the observer sees (own hand, layout)


def truth_labels(game, seat: int) -> np.ndarray:
    """Each tile's location as seen from ``seat``: the opponent (0 = the next seat clockwise), the
    boneyard (``n - 1``) or :data:`SEEN` (:meth:`cf_env.Game.hidden_tiles` as labels)."""
    rows = game.hidden_tiles(seat).reshape(game.config.num_players, game.config.num_tiles)
    return np.where(rows.any(0), rows.argmax(0), SEEN).astype(np.int8)


# ------------------------------------------------------------------------------------- collect

def collect(out: Path, games: int, lineup: list[str], seed: int, shard_games: int, players: int) -> None:
    """Self-play ``games`` games of ``lineup`` and keep every position with a choice: the seat's
    observation (float16), the true labels (int8) and its history entry; one ``.npz`` shard per
    ``shard_games`` games, skipped when it exists (so a stopped collection resumes)."""
    from tqdm.auto import tqdm

    config = RulesConfig(num_players=players)
    n = config.num_players
    specs = lineup * n if len(lineup) == 1 else lineup
    seats = [load(s, config) for s in specs]
    env = raw_env(config=config, history=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(json.dumps({"lineup": specs, "players": players, "seed": seed,
                                               "shard_games": shard_games}))
    for shard in tqdm(range((games + shard_games - 1) // shard_games), desc="shards", unit="shard"):
        path = out / f"shard-{shard:05d}.npz"
        if path.exists():
            continue
        rng = np.random.default_rng([seed, shard])
        obs_l, lab_l, hist_l = [], [], []
        for _ in range(shard_games):
            env.reset(seed=int(rng.integers(2**63)))
            game = env.game  # a copy that follows the env's game: every action is applied to both
            while not game.is_over:
                seat = game.current_player
                o = env.observe(env.agent_selection)
                if int(o["action_mask"].sum()) > 1:
                    obs_l.append(o["observation"].astype(np.float16))
                    lab_l.append(truth_labels(game, seat))
                    hist_l.append(o["history"].copy())
                action = seats[seat].act(o, rng)
                env.step(action)
                game.apply(action)
        lengths = np.array([len(h) for h in hist_l], np.int64)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, obs=np.stack(obs_l), labels=np.stack(lab_l), history_len=lengths,
                            history=np.concatenate(hist_l))
        tmp.rename(path)


def load_shards(folder: Path, holdout: float) -> tuple[dict, dict, RulesConfig]:
    """The positions of ``folder``, split by shard: the last ``holdout`` share held out."""
    meta = json.loads((folder / "meta.json").read_text())
    paths = sorted(folder.glob("shard-*.npz"))
    if len(paths) < 2:
        raise SystemExit(f"{folder}: {len(paths)} shards; collect at least 2 (python -m lab.belief collect)")
    cut = max(1, min(len(paths) - 1, round(len(paths) * (1 - holdout))))

    def read(part: list[Path]) -> dict:
        data = [np.load(p) for p in part]
        hist = [np.split(d["history"], np.cumsum(d["history_len"])[:-1]) for d in data]
        return {"obs": np.concatenate([d["obs"] for d in data]).astype(np.float32),
                "labels": np.concatenate([d["labels"] for d in data]),
                "history": [h for part_h in hist for h in part_h], "shards": [p.name for p in part]}

    return read(paths[:cut]), read(paths[cut:]), RulesConfig(num_players=meta["players"])


# ------------------------------------------------------------------------------------- fit

def fit(folder: Path, out: Path, epochs: int, lr: float, batch: int, holdout: float, seed: int,
        hidden: tuple[int, ...] = (256, 256), weight_decay: float = 0.01, threads: int | None = None) -> dict:
    """Train a :class:`BeliefNet` by cross-entropy over the hidden tiles of every training position;
    the epoch with the lowest held-out loss is the one saved (the positions of one game are alike,
    so the network overfits them within a few epochs). ``threads``: torch's intra-op threads
    (``None`` keeps torch's default; beside a busy process give it 1: two threads that wait on a
    taken core ran this fit 50 times slower, lab/results/belief.md)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _fit(folder, out, epochs, lr, batch, holdout, seed, hidden, weight_decay)
    finally:
        torch.set_num_threads(before)  # a caller in the same process keeps its own setting


def _fit(folder: Path, out: Path, epochs: int, lr: float, batch: int, holdout: float, seed: int,
         hidden: tuple[int, ...], weight_decay: float) -> dict:
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    train, test, config = load_shards(folder, holdout)
    net = BeliefNet(config, hidden)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * ((len(train["labels"]) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1 - s / steps)
    x, y = torch.as_tensor(train["obs"]), torch.as_tensor(train["labels"].astype(np.int64))
    curve: list[dict] = []
    best = (float("inf"), 0, {})
    with tqdm(total=steps, desc=f"fit {len(y)} positions", unit="batch") as bar:
        for epoch in range(epochs):
            perm = torch.randperm(len(y))
            for s in range(0, len(y), batch):
                j = perm[s:s + batch]
                loss = nll(net(x[j]), y[j])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                bar.update()
            loss_now = heldout_loss(net, test)
            curve.append({"epoch": epoch + 1, "heldout_nats_per_tile": round(loss_now, 4)})
            bar.set_postfix(curve[-1])
            if loss_now < best[0]:
                best = (loss_now, epoch + 1, {k: v.clone() for k, v in net.state_dict().items()})
    net.load_state_dict(best[2])
    torch.save(net.payload(epoch=best[1], train_positions=len(y), train_shards=train["shards"]), out)
    return {"train_positions": len(y), "heldout_positions": len(test["labels"]), "hidden": net.hidden,
            "lr": lr, "weight_decay": weight_decay, "saved_epoch": best[1], "curve": curve}


def nll(logp: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood of the true locations over the hidden tiles."""
    hidden = labels >= 0
    return -logp.gather(-1, labels.clamp(min=0)[..., None])[..., 0][hidden].mean()


@torch.no_grad()
def heldout_loss(net: BeliefNet, test: dict) -> float:
    return float(nll(net(torch.as_tensor(test["obs"])), torch.as_tensor(test["labels"].astype(np.int64))))


# ------------------------------------------------------------------------------------- score

def sampler_probs(obs: np.ndarray, history: np.ndarray, mask_n: int, encoder: ObservationEncoder, mode: str,
                  worlds: int, rng: np.random.Generator, temp: float = DEFAULTS["temp"],
                  proposals: int = DEFAULTS["proposals"], belief: np.ndarray | None = None) -> np.ndarray:
    """``(T, n)`` counts of the worlds that put each tile in each location (opponents, boneyard);
    ``temp`` and ``proposals`` are the policy sampler's (the search spec's parameters), ``belief``
    the belief network's rows for ``mode`` ``belief`` or ``both`` (as :class:`lab.samplers.Belief`
    weighs worlds, without or with the policy)."""
    config = encoder.config
    n, t = config.num_players, config.num_tiles
    observation = {"observation": obs, "action_mask": np.ones(mask_n, np.int8), "history": history}

    def weigh(world: World, _observation: dict) -> World:
        return world._replace(belief=np.ascontiguousarray(belief, dtype=np.float64))

    infer = "policy" if mode in ("policy", "both") else "constraints"
    sw = sample_worlds(observation, worlds, rng, encoder, infer=infer, temp=temp, proposals=proposals if mode != "constraints" else 1,
                       sampler=weigh if mode in ("belief", "both") else None)
    counts = np.zeros((t, n))
    counts[:, : n - 1] = sw.hands[:, 1:, :].sum(0).T
    np.add.at(counts[:, n - 1], sw.boneyards.ravel(), 1)
    return counts


def score(folder: Path, model: Path | None, positions: int, worlds: int, holdout: float, seed: int,
          alphas: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 4.0), temps: tuple[float, ...] = (DEFAULTS["temp"],),
          proposals: int = DEFAULTS["proposals"]) -> dict:
    """Log-loss (nats per hidden tile) and mean probability of the true location, on the held-out
    shards' first ``positions`` positions, for the learned belief, hand-size proportions, and the
    ``constraints`` and ``policy`` samplers (``worlds`` worlds each; the policy sampler at each of
    ``temps`` with ``proposals`` candidates a world, named ``policy`` for one temperature and
    ``policy_tT`` for several); with a ``model``, also the search's ``belief`` sampler (worlds
    resampled by the network, as ``lab.samplers:Belief`` deals them) and ``both`` (network times policy)."""
    from tqdm.auto import tqdm

    _train, test, config = load_shards(folder, holdout)
    encoder = ObservationEncoder(config)
    n = config.num_players
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(test["labels"]), size=min(positions, len(test["labels"])), replace=False))
    obs, labels = test["obs"][pick], test["labels"][pick].astype(np.int64)
    hidden = labels >= 0
    open_ = location_open(torch.as_tensor(obs), encoder.slices["hand_sizes"], encoder.slices["boneyard"]).numpy()
    sizes = np.concatenate([obs[:, encoder.slices["hand_sizes"]][:, 1:], obs[:, encoder.slices["boneyard"]]], 1)
    per_method: dict[str, np.ndarray] = {}  # (P, T) probability of the true location
    prop = np.broadcast_to((sizes / sizes.sum(1, keepdims=True))[:, None, :], (len(pick), config.num_tiles, n))
    per_method["hand_sizes"] = np.take_along_axis(prop, np.clip(labels, 0, None)[..., None], -1)[..., 0]
    seconds = {}
    net = None
    if model is not None:
        net = load_belief(model, config)
        t0 = time.perf_counter()
        with torch.no_grad():
            logp = net(torch.as_tensor(obs)).numpy()
        seconds["learned"] = time.perf_counter() - t0
        per_method["learned"] = np.exp(np.take_along_axis(logp, np.clip(labels, 0, None)[..., None], -1)[..., 0])
    samplers = [("constraints", "constraints", 1.0)]
    samplers += [("policy" if len(temps) == 1 else f"policy_t{t:g}", "policy", t) for t in temps]
    if net is not None:
        samplers.append(("belief", "belief", 1.0))
        samplers += [("both" if len(temps) == 1 else f"both_t{t:g}", "both", t) for t in temps]
    for name, mode, temp in samplers:
        counts = np.zeros((len(pick), config.num_tiles, n))
        t0 = time.perf_counter()
        for i, p in enumerate(tqdm(pick, desc=name, unit="position", leave=False)):
            counts[i] = sampler_probs(obs[i], test["history"][p], config.num_actions, encoder, mode, worlds,
                                      np.random.default_rng([seed, i]), temp, proposals,
                                      net.seat_rows(obs[i]) if net is not None and mode in ("belief", "both") else None)
        seconds[name] = time.perf_counter() - t0
        for a in alphas:
            smoothed = (counts + a * open_[:, None, :]) / (worlds + a * open_.sum(1))[:, None, None]
            per_method[f"{name}_alpha{a:g}"] = np.take_along_axis(smoothed, np.clip(labels, 0, None)[..., None],
                                                                  -1)[..., 0]
    report: dict = {"positions": len(pick), "hidden_tiles": int(hidden.sum()), "worlds": worlds,
                    "heldout_shards": test["shards"], "methods": {}}
    base = None
    for name, p in per_method.items():
        loss = -np.log(np.clip(p, 1e-12, None))
        per_pos = (loss * hidden).sum(1) / hidden.sum(1)
        entry = {"nats_per_tile": round(float(loss[hidden].mean()), 4),
                 "se": round(float(per_pos.std() / np.sqrt(len(per_pos))), 4),
                 "p_true": round(float(p[hidden].mean()), 4)}
        if name == "learned":
            base = per_pos
        report["methods"][name] = entry
    if base is not None:  # paired over positions: learned minus each sampler's best smoothing
        for mode in ("constraints", "policy", "belief", "both"):
            tried = [k for k in report["methods"] if k.startswith(mode)]
            if not tried:
                continue
            best = min(tried, key=lambda k: report["methods"][k]["nats_per_tile"])
            loss = -np.log(np.clip(per_method[best], 1e-12, None))
            d = base - (loss * hidden).sum(1) / hidden.sum(1)
            report[f"learned_minus_{best}"] = {"mean": round(float(d.mean()), 4),
                                               "ci95": [round(float(d.mean() - 1.96 * d.std() / np.sqrt(len(d))), 4),
                                                        round(float(d.mean() + 1.96 * d.std() / np.sqrt(len(d))), 4)]}
    report["seconds"] = {k: round(v, 2) for k, v in seconds.items()}
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m lab.belief", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="self-play positions with their true hidden tiles")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--games", type=int, default=600)
    c.add_argument("--shard-games", type=int, default=20)
    c.add_argument("--lineup", nargs="+", default=["zoo:strong-4p"], help="one spec per seat, or one for all")
    c.add_argument("--players", type=int, default=4)
    c.add_argument("--seed", type=int, default=0)
    f = sub.add_parser("fit", help="train the belief network")
    f.add_argument("folder", type=Path)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--batch", type=int, default=256)
    f.add_argument("--holdout", type=float, default=0.1)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    f.add_argument("--weight-decay", type=float, default=0.01)
    f.add_argument("--torch-threads", type=int, help="torch's intra-op threads (default: torch's own; 1 beside a busy "
                   "process)")
    s = sub.add_parser("score", help="log-loss of the learned belief and the samplers on held-out positions")
    s.add_argument("folder", type=Path)
    s.add_argument("--model", type=Path)
    s.add_argument("--positions", type=int, default=1000)
    s.add_argument("--worlds", type=int, default=128)
    s.add_argument("--holdout", type=float, default=0.1)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--temp", type=float, nargs="+", default=[DEFAULTS["temp"]],
                   help="the policy sampler's temperature(s) (default: the search's fitted one)")
    s.add_argument("--proposals", type=int, default=DEFAULTS["proposals"],
                   help="the policy sampler's candidate worlds per world kept")
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.out, args.games, args.lineup, args.seed, args.shard_games, args.players)
        return {"shards": len(list(args.out.glob("shard-*.npz")))}
    if args.command == "fit":
        report = fit(args.folder, args.out, args.epochs, args.lr, args.batch, args.holdout, args.seed,
                     tuple(args.hidden), args.weight_decay, args.torch_threads)
    else:
        report = score(args.folder, args.model, args.positions, args.worlds, args.holdout, args.seed,
                       temps=tuple(args.temp), proposals=args.proposals)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
