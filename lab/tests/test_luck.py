"""The luck-corrected evaluation (lab.luck): its terms are mean-zero, exactly on a game small
enough to list every deal, draw and decision, and within noise on many real games."""

from __future__ import annotations

import functools
import hashlib
import itertools

import numpy as np
import pytest

from agents import HeuristicAgent
from cf_env import ConfigError, Game, GameEncoder, RulesConfig
from cf_env.engine import Tile
from lab.luck import (
    LuckCorrector,
    LuckFeatures,
    LuckValue,
    corrected_outcomes,
    fit_luck_value,
    luck_evaluate,
    replay_decisions,
)
from tests.scripted import deal
from training.stats import t_interval, t_quantile

TINY = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=2)


def _deal(perm: tuple[int, ...], config: RulesConfig) -> dict:
    """A scripted deal (hands, then the boneyard top first) from a shuffle of tile indices."""
    tiles = [str(Tile.from_index(t)) for t in perm]
    h, n = config.hand_size, config.num_players
    return deal(config, [tiles[i * h:(i + 1) * h] for i in range(n)], top=tiles[n * h:])


def _policy(game: Game) -> np.ndarray:
    """A known, non-uniform policy: weights 1, 2, 3, 1, 2, 3, ... over the legal actions."""
    probs = np.zeros(game.config.num_actions)
    legal = game.legal_actions()
    probs[legal] = [1 + i % 3 for i in range(len(legal))]
    return probs / probs.sum()


@functools.lru_cache(maxsize=2)
def _every_game(config: RulesConfig) -> tuple[list[dict], list[float], list[list[np.ndarray]]]:
    """Every (shuffle, decisions) path of ``config`` with both seats playing :func:`_policy`:
    the records, their probabilities and the policies at their decisions."""
    records, weights, policies = [], [], []
    shuffles = list(itertools.permutations(range(config.num_tiles)))

    def walk(game: Game, weight: float, probs: list[np.ndarray]) -> None:
        if game.is_over:
            records.append(game.to_record())
            weights.append(weight)
            policies.append(probs)
            return
        pi = _policy(game)
        for a in np.flatnonzero(pi).tolist():
            after = game.clone()
            after.apply(a)
            walk(after, weight * pi[a], [*probs, pi])

    for perm in shuffles:
        walk(Game(config, deals=[_deal(perm, config)]), 1.0 / len(shuffles), [])
    return records, weights, policies


class _NoiseValue:
    """A deliberately wrong ``v``: random numbers, a fixed function of the state (seeded by a
    hash of each state's features)."""

    def __init__(self, config: RulesConfig, seed: int) -> None:
        self.config = config
        self.features = LuckFeatures(config)
        self.seed = seed

    def values(self, rows: dict) -> np.ndarray:
        x = self.features(rows["hands"], rows["totals"], rows["mover"], rows["open_values"], rows["pending"],
                          rows["bone"], rows["rounds"])
        n = self.config.num_players
        out = np.empty((len(x), n, 2))
        for i, row in enumerate(x):
            digest = hashlib.blake2b(row.tobytes(), digest_size=8, key=bytes([self.seed])).digest()
            out[i] = np.random.default_rng(int.from_bytes(digest, "little")).normal(size=(n, 2))
        return out * [0.5, 40.0]


@pytest.mark.parametrize("value", ["network", "noise"])
def test_the_correction_has_mean_zero_over_every_deal_draw_and_decision(value: str) -> None:
    records, weights, policies = _every_game(TINY)
    assert abs(sum(weights) - 1.0) < 1e-12 and len(records) > 720  # decisions and draws branch
    v: LuckValue | _NoiseValue = LuckValue(TINY, hidden=8) if value == "network" else _NoiseValue(TINY, 0)
    if isinstance(v, LuckValue):  # an arbitrary v: random weights, far from zero
        import torch

        torch.manual_seed(3)
        for p in v.net.parameters():
            torch.nn.init.normal_(p, std=1.0)
    raw, corrected = corrected_outcomes(v, records, np.random.default_rng(0), policies,
                                        LuckCorrector(TINY, deal_samples=0))
    w = np.array(weights)[:, None, None]
    luck = ((raw - corrected) * w).sum(axis=0)
    assert np.abs(luck).max() < 1e-9, luck
    assert np.allclose((corrected * w).sum(axis=0), (raw * w).sum(axis=0), atol=1e-9)
    assert np.abs(raw - corrected).max() > 0.01  # the terms are not all zero: they cancel in expectation


def test_deal_terms_follow_r6_as_the_engine_does() -> None:
    """The deals a deal term averages over reach the round's first decision exactly as the engine
    does: the R6 search for the starting double (whoever draws it, from the dealer's left), its
    placement and the first player."""
    config = RulesConfig(max_pip=6, num_players=3, hand_size=5, rounds=7)
    corrector = LuckCorrector(config)
    rng = np.random.default_rng(1)
    agent = HeuristicAgent(config)
    encoder = GameEncoder(config)
    searched = 0
    for _ in range(6):
        played = Game(config, seed=rng)
        while not played.is_over:
            played.apply(agent.act(encoder.observe(played), rng))
        record = played.to_record()
        replay = Game(config, deals=record["deals"])
        for r in range(config.rounds):
            hands_dealt, pile = played.deal_tiles(r)
            perm = np.array([[*itertools.chain(*hands_dealt), *pile]])
            hands, mover, bone = corrector.starts(perm, r)
            assert replay.round_index == r
            for p in range(config.num_players):
                held = {t.index for t in replay.hand(p)}
                assert set(np.flatnonzero(hands[0, p]).tolist()) == held
            assert mover[0] == replay.current_player and bone[0] == replay.boneyard_size
            searched += sum(replay.draws(p) for p in range(config.num_players)) > 0
            while replay.round_index == r and not replay.is_over:
                replay.apply(record["actions"][len(replay.actions())])
    assert searched > 3  # the search for the starting double was exercised


@pytest.mark.slow
def test_on_many_games_raw_and_corrected_agree_and_a_noise_value_only_widens() -> None:
    """4,000 games of a small lineup: the mean correction is within 2 standard errors of 0 for the
    fitted v and for random numbers, and the random numbers widen the interval (so their corrected
    mean may leave the raw mean's narrower interval while the difference stays within those 2
    standard errors)."""
    config = RulesConfig(max_pip=4, num_players=2, hand_size=4, rounds=2, center_arms=3)
    value = _small_value(config)
    rng = np.random.default_rng(7)
    heuristic = HeuristicAgent(config)
    encoder = GameEncoder(config)
    records, policies = [], []
    for _ in range(4000):
        game = Game(config, seed=rng)
        probs: list = []
        while not game.is_over:
            if game.current_player == 0:  # seat 0 plays the known policy
                pi = _policy(game)
                probs.append(pi)
                game.apply(int(rng.choice(config.num_actions, p=pi)))
            else:
                probs.append(None)
                game.apply(heuristic.act(encoder.observe(game), rng))
        records.append(game.to_record())
        policies.append(probs)
    for v in (value, _NoiseValue(config, 1)):
        raw, corrected = corrected_outcomes(v, records, np.random.default_rng(8), policies)
        for column in (0, 1):
            luck = raw[:, 0, column] - corrected[:, 0, column]
            se = luck.std(ddof=1) / np.sqrt(len(luck))
            assert abs(luck.mean()) < 2 * se, (column, luck.mean(), se)
            if v is value:  # the fitted v narrows the interval: each mean lies in the other's interval
                lo, hi = t_interval(raw[:, 0, column])
                clo, chi = t_interval(corrected[:, 0, column])
                assert lo <= corrected[:, 0, column].mean() <= hi and clo <= raw[:, 0, column].mean() <= chi
        if isinstance(v, _NoiseValue):
            assert corrected[:, 0, 1].std() > 1.5 * raw[:, 0, 1].std()


@functools.lru_cache(maxsize=4)
def _small_value(config: RulesConfig) -> LuckValue:
    return fit_luck_value(config, games=300, epochs=4, hidden=16, progress=False)


def test_t_interval_and_bad_input() -> None:
    assert abs(t_quantile(10) - 2.228139) < 1e-3 and abs(t_quantile(1000) - 1.962339) < 1e-6
    lo, hi = t_interval([0.0, 1.0, 1.0, 1.0], 0.0, 1.0)
    assert 0.0 <= lo < 0.75 < hi == 1.0
    assert t_interval([0.5], 0.0, 1.0) == (0.0, 1.0)
    with pytest.raises(ConfigError, match="deal_samples"):
        LuckCorrector(TINY, deal_samples=-1)
    with pytest.raises(ConfigError, match="every shuffle"):
        LuckCorrector(RulesConfig(), deal_samples=0)


SMALL = RulesConfig(max_pip=4, num_players=2, hand_size=4, rounds=2, center_arms=3)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Value functions fitted on first use go to a fresh cache."""
    monkeypatch.setenv("CHICKENFOOT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_evaluate_reports_corrected_figures_over_deal_sets_the_same_with_two_workers(cache, tmp_path) -> None:
    from training.evaluate import evaluate

    value = _small_value(SMALL)
    path = tmp_path / "v.pt"
    value.save(path)
    one = luck_evaluate(["heuristic", "random"], SMALL, deal_sets=12, seed=4, progress=False, value=path)
    two = luck_evaluate(["heuristic", "random"], SMALL, deal_sets=12, seed=4, progress=False, value=path, workers=2)
    for a, b in zip(one.report.results, two.report.results):
        for name in ("win_rate", "win_rate_ci95", "mean_points_ci95"):
            assert getattr(a, name) == pytest.approx(getattr(b, name)), name
        for name in ("win_rate", "win_rate_ci95", "mean_points", "mean_points_ci95"):
            assert one.corrected[a.spec][name] == pytest.approx(two.corrected[b.spec][name]), name
    r, c = one.report.results[0], one.corrected["heuristic"]
    for lo, hi in (r.win_rate_ci95, c["win_rate_ci95"]):
        assert 0.0 <= lo <= hi <= 1.0
    assert c["win_rate"] != r.win_rate  # the random seat's decisions and the draws were corrected
    assert len(c["per_deal_set"]) == 12 and one.ms_per_game > 0
    assert "luck-corrected (AIVAT)" in one.table() and one.table().endswith(" ms per game")  # units said
    plain = evaluate(["heuristic", "random"], SMALL, deal_sets=12, seed=4, progress=False)
    assert plain.results[0].win_rate == r.win_rate and not plain.hook_results
    assert not list(cache.glob("luck/*.pt"))  # a given value function is not fitted again


def test_the_lab_command_writes_the_corrected_fields_and_fits_a_missing_value_function_once(cache, tmp_path,
                                                                                          monkeypatch) -> None:
    import json

    import lab.luck.value as luck
    from lab.luck.__main__ import main

    monkeypatch.setattr(luck, "fit_luck_value", lambda config, progress=True: _small_value(config))
    out = tmp_path / "report.json"
    args = ["eval", "heuristic", "greedy", "--players", "2", "--max-pip", "4", "--hand-size", "4", "--rounds", "2",
            "--deal-sets", "6", "--no-progress", "--json", str(out)]
    main(args)
    data = json.loads(out.read_text())
    assert data["results"][0]["win_rate"] is not None
    for name in ("win_rate", "win_rate_ci95", "mean_points", "mean_points_ci95"):
        assert data["luck"]["corrected"]["heuristic"][name] is not None, name
    assert len(list(cache.glob("luck/*.pt"))) == 1
    with pytest.raises(ConfigError, match="not a luck value function"):
        main(args[:-2] + ["--value", str(out)])


def test_bad_luck_arguments_are_typed_errors() -> None:
    with pytest.raises(ConfigError, match="value must be"):
        luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=1, progress=False, value=3)
    with pytest.raises(ConfigError, match="no luck value function"):
        luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=1, progress=False, value="/nonexistent/v.pt")
    with pytest.raises(ConfigError, match="not finished"):
        corrected_outcomes(LuckValue(SMALL, hidden=4), [Game(SMALL, seed=0)], np.random.default_rng(0))


def test_following_the_event_log_gives_the_terms_of_playing_again() -> None:
    """The fast path (the event log and the boards recorded in a replay) and playing again agree."""
    from cf_env import raw_env
    from training.evaluate import play_game

    config = RulesConfig(max_pip=6, num_players=3, hand_size=5, rounds=3)
    env = raw_env(config=config)
    seats = [HeuristicAgent(config)] * 3
    value = LuckValue(config, hidden=8)
    for seed in range(4):
        game = play_game(env, seats, None, np.random.default_rng(seed), seed=seed)
        policies, boards = replay_decisions(game, seats)
        assert policies == [None] * len(game.actions())  # the heuristic's policy is not known
        assert len(boards) == sum(1 for e in game.events() if e.kind == 3)  # one per draw
        fast = corrected_outcomes(value, [game], np.random.default_rng(1), boards=[boards])
        slow = corrected_outcomes(value, [game], np.random.default_rng(1))
        assert np.allclose(fast[1], slow[1]) and not np.allclose(fast[1], fast[0])
    with pytest.raises(ConfigError, match="boards were recorded"):
        corrected_outcomes(value, [game], np.random.default_rng(1), boards=[boards[:-1]])


def test_a_single_deal_set_still_writes_finite_json(tmp_path) -> None:
    import json

    value = _small_value(SMALL)
    report = luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=1, seed=2, progress=False, value=value)
    text = json.dumps(report.to_json(), allow_nan=False)  # no Infinity: one deal set has no spread between sets
    r = json.loads(text)["results"][0]
    assert r["win_rate_ci95"] == list(r["win_rate_wilson_ci95"]) and r["mean_points_ci95"][1] < 1e6


@pytest.mark.parametrize("seats", [None, ["random", "greedy"]])
def test_draws_valued_by_rollouts_are_mean_zero_too(seats: list[str] | None) -> None:
    """Draw terms from compiled rollouts with common random numbers: over every shuffle and
    decision of the tiny round (a fresh generator per game, so games that part at a draw share
    their rollouts' orders) their expectation is 0, and they are not all 0: with heuristic
    rollouts, and with each seat rolled out by its own policy (a random one, which draws from the
    rollouts' random numbers too)."""
    records, weights, policies = _every_game(TINY)
    corrector = LuckCorrector(TINY, deal_samples=0, draw_samples=0, rollouts=2, round_points=(1.0, 1.0),
                              events=("draw",))
    v = _NoiseValue(TINY, 0)  # never asked: the draw terms are the rollouts'
    luck = np.zeros((TINY.num_players, 2))
    moved = 0.0
    for record, w in zip(records, weights):
        raw, corrected = corrected_outcomes(v, [record], np.random.default_rng(0), corrector=corrector,
                                            seats=[seats])
        luck += w * (raw - corrected)[0]
        moved = max(moved, float(np.abs(raw - corrected).max()))
    assert np.abs(luck).max() < 1e-9 and moved > 0.01
    with pytest.raises(ConfigError, match="rollouts"):
        LuckCorrector(TINY, rollouts=-1)
    with pytest.raises(ConfigError, match="seats must name"):
        corrected_outcomes(v, records[:1], np.random.default_rng(0), corrector=corrector, seats=[["random"]])
    with pytest.raises(ConfigError, match="played under"):
        corrected_outcomes(v, [Game.from_record(_finished(SMALL))], np.random.default_rng(0), corrector=corrector)


def _finished(config: RulesConfig) -> dict:
    """The record of a game of ``config`` the heuristic played to its end."""
    game = Game(config, seed=0)
    agent, encoder = HeuristicAgent(config), GameEncoder(config)
    while not game.is_over:
        game.apply(agent.act(encoder.observe(game), np.random.default_rng(0)))
    return game.to_record()


def test_evaluate_values_draws_by_rollouts_on_request(tmp_path) -> None:
    """``rollouts``: the same games, other corrected figures, unbiased-looking and finite; bad
    values are typed errors."""
    value = _small_value(SMALL)
    by_v = luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=6, seed=3, progress=False, value=value)
    rolled = luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=6, seed=3, progress=False, value=value,
                           rollouts=2)
    a, b = by_v.corrected["heuristic"], rolled.corrected["heuristic"]
    assert by_v.report.results[0].win_rate == rolled.report.results[0].win_rate and a["win_rate"] != b["win_rate"]
    assert 0.0 <= b["win_rate_ci95"][0] <= b["win_rate_ci95"][1] <= 1.0
    for bad in (-1, 1.5, True):
        with pytest.raises(ConfigError, match="rollouts"):
            luck_evaluate(["heuristic", "greedy"], SMALL, deal_sets=1, progress=False, value=value, rollouts=bad)


def test_a_luck_value_file_runs_no_code(tmp_path):
    import torch

    from lab.luck.value import LuckValue

    class Touch:
        def __reduce__(self):
            return (open, (str(tmp_path / "ran"), "w"))

    path = tmp_path / "crafted.pt"
    torch.save({"format": "chickenfoot-luck-value", "trap": Touch()}, path)
    with pytest.raises(ConfigError, match="not a luck value function"):
        LuckValue.load(path)
    assert not (tmp_path / "ran").exists()
