"""Policy-based inference: the history read back into the public states the opponents faced, the
likelihood of their plays against a direct computation, and worlds that guess hands better."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.baselines import HeuristicAgent, score_plays
from agents.search.inference import log_likelihood, read_history
from agents.search.worlds import new_scratch, sample_worlds
from cf_env import Game, GameEncoder, RulesConfig
from cf_env.engine import EventKind

CONFIG = RulesConfig(rounds=2)


def _round_with_states(seed: int, stop_after: int):
    """A heuristic game played ``stop_after`` decisions into round 0 (or to just before the move
    that ends it),
    and for every play the engine's own state just before it: seat, action, open ends, forced
    slots, every seat's latest failure, whether the seat had drawn this round, its observation."""
    game = Game(CONFIG, seed=seed)
    encoder = GameEncoder(CONFIG)
    heuristic = HeuristicAgent(CONFIG)
    rng = np.random.default_rng(seed)
    plays = []
    for _ in range(stop_after):
        p = game.current_player
        obs = encoder.observe(game)
        action = heuristic.act(obs, rng)
        if action < CONFIG.num_actions - 2:
            pend = game.pending
            plays.append({"seat": p, "action": action, "ends": game.open_ends, "pend": pend.count if pend else 0,
                          "pend_val": pend.value if pend else 0, "unmatched": [game.unmatched(q) for q in range(4)],
                          "drew": game.draws(p) > 0, "after_draw": game.drawn_tile is not None,
                          "obs": obs, "hand": game.hand_bits(p)})
        before = game.clone()
        game.apply(action)
        if game.round_index != 0:  # that move ended round 0: stop just before it
            if plays and plays[-1]["action"] == action and plays[-1]["seat"] == p:
                plays.pop()
            return before, plays
    return game, plays


@pytest.mark.parametrize("seed", range(4))
def test_read_history_replays_the_public_state_of_every_opponent_play(seed):
    game, plays = _round_with_states(seed, 30)
    observer = game.current_player
    encoder = GameEncoder(CONFIG)
    decisions = read_history(encoder.history(game, observer), encoder)
    expected = [p for p in plays if p["seat"] != observer and not p["after_draw"]]
    assert decisions.seat.size == len(expected) > 3
    for d, p in enumerate(expected):
        assert decisions.seat[d] == (p["seat"] - observer) % 4
        assert decisions.action[d] == p["action"]
        assert decisions.ends[d].tolist() == p["ends"]
        assert (decisions.pend[d], decisions.pend_val[d] if p["pend"] else 0) == (p["pend"], p["pend_val"])
        assert decisions.unmatched[d].tolist() == [p["unmatched"][(observer + i) % 4] for i in range(4)]


def _no_draw_after_a_play(game: Game) -> bool:
    """No seat has drawn after its first play this round (R6 search draws come before any play)."""
    played: set[int] = set()
    for ev in game.round_events():
        if ev.kind == EventKind.PLAY:
            played.add(ev.player)
        elif ev.kind == EventKind.DRAW and ev.player in played:
            return False
    return True


def test_likelihood_of_the_true_hands_is_the_softmax_of_the_heuristic_scores():
    """Given the true hands and no draw after a seat's first play (so the hand at each play is
    exactly the hand now plus the tiles played since), the compiled likelihood is the sum of log softmax of
    score_plays over each opponent's real observation."""
    encoder = GameEncoder(CONFIG)
    tables = HeuristicAgent(CONFIG).kernel_tables
    checked = 0
    for seed in range(40):
        game, plays = _round_with_states(seed, 10)
        if not _no_draw_after_a_play(game):
            continue
        observer = game.current_player
        decisions = read_history(encoder.history(game, observer), encoder)
        hands = np.zeros((4, CONFIG.num_tiles), np.uint8)
        for i in range(4):
            for tile in game.hand((observer + i) % 4):
                hands[i, tile.index] = 1
        scratch = new_scratch(4, CONFIG.num_tiles, encoder.size, CONFIG.max_pip + 1)
        for temp in (0.5, 6.0):
            got = log_likelihood(hands, decisions, temp, tables, scratch.held, scratch.row, scratch.plays,
                                 scratch.scores)
            want = 0.0
            for p in plays:
                if p["seat"] == observer or p["after_draw"]:
                    continue
                legal = np.flatnonzero(p["obs"]["action_mask"][: CONFIG.num_actions - 2]).astype(np.int64)
                if legal.size < 2:
                    continue
                scores = np.zeros(legal.size)
                score_plays(p["obs"]["observation"], legal, scores, tables)
                z = scores / temp
                want += z[legal == p["action"]][0] - (z.max() + math.log(np.exp(z - z.max()).sum()))
            assert got == pytest.approx(want, abs=1e-6)
        checked += 1
    assert checked >= 3


def test_policy_worlds_hold_more_of_the_true_tiles():
    """At late positions of heuristic games, worlds weighted by the heuristic opponents' plays
    give them more of their true tiles than the constraint sampler alone (paired, same positions)."""
    encoder = GameEncoder(CONFIG)
    diffs = []
    for seed in range(3):
        game, _ = _round_with_states(seed, 28)
        observer = game.current_player
        obs = encoder.observe(game, history=True)
        truth = [[t.index for t in game.hand((observer + i) % 4)] for i in range(1, 4)]
        share = {}
        for mode in ("constraints", "policy"):
            worlds = sample_worlds(obs, 200, np.random.default_rng(seed), encoder, infer=mode, temp=1.0,
                                   proposals=32)
            share[mode] = sum(worlds.hands[:, i, truth[i - 1]].sum() for i in range(1, 4)) / worlds.hands[:, 1:].sum()
        diffs.append(share["policy"] - share["constraints"])
    assert len(diffs) >= 2 and np.mean(diffs) > 0.02
