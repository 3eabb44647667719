"""The PettingZoo AEC env: PettingZoo's own suites, turn flow, rewards, illegal actions, hidden
information, and masks/scores checked against the reference implementation move by move."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import cf_env
from cf_env import Game, GameEncoder, ObservationEncoder, ResetNeededError, env, raw_env
from cf_env.engine import ConfigError, EventKind, IllegalActionError, RulesConfig, Tile, string_to_action
from tests.reference_engine import ReferenceGame as ReferenceEngine
from tests.reference_rules import ReferenceGame
from tests.scripted import deal, swap_held_tiles

CONFIGS = [
    {},
    {"num_players": 2, "max_pip": 6, "reward": "points"},
    {"num_players": 6, "max_pip": 12, "center_arms": 6, "draw_rule": "until_playable", "reward": "relative"},
    {"num_players": 3, "max_pip": 4, "hand_size": 3, "center_arms": 3, "rounds": 2},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
@pytest.mark.parametrize("factory", [env, raw_env])
def test_pettingzoo_api(factory, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # api_test's advice about Dict observations
        api_test(factory(**kwargs), num_cycles=2000)


@pytest.mark.parametrize("kwargs", CONFIGS[:2])
def test_pettingzoo_seed(kwargs):
    seed_test(lambda: env(**kwargs), num_cycles=500)


def test_pettingzoo_render():
    render_test(lambda render_mode=None: env(render_mode=render_mode),
                custom_tests={"ansi": lambda text: "centre" in text and "hand of player_" in text})


def test_spec_and_spaces():
    e = env()
    assert e.metadata["name"] == "chicken_foot_v1"
    assert set(e.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    space = e.observation_space("player_0")
    assert space is e.observation_space("player_0") is e.observation_space("player_3")
    assert e.action_space("player_1") is e.action_space("player_1")
    assert e.action_space("player_1").n == 102
    assert space["observation"].shape == (513,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (102,) and space["action_mask"].dtype == np.int8


@pytest.mark.parametrize("kwargs, message", [
    ({"reward": "score"}, "reward"), ({"points_scale": 0}, "points_scale"),
    ({"render_mode": "video"}, "render_mode"), ({"illegal_action": "ignore"}, "illegal_action"),
    ({"max_pip": 40}, "max_pip"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        env(**kwargs)


def test_use_before_reset_is_a_clear_error():
    e = env()
    with pytest.raises(ResetNeededError):
        e.step(0)
    with pytest.raises(ResetNeededError):
        e.observe("player_0")


# ---------------------------------------------------------------- turn flow, scripted

def _mask_strings(obs: dict, max_pip: int) -> set[str]:
    return {cf_env.action_to_string(int(a), max_pip) for a in np.flatnonzero(obs["action_mask"])}


def _step(e, move: str) -> None:
    e.step(string_to_action(move, e.config.max_pip))


def _foot_env():
    config = RulesConfig(max_pip=4, num_players=2, hand_size=5, rounds=1, center_arms=2)
    e = env(config=config)
    e.reset(options={"deals": [deal(config, [["4-4", "0-4", "1-2", "0-2", "1-3"],
                                             ["1-4", "1-1", "0-1", "3-3", "2-3"]])]})
    return e


def test_forced_centre_arms_and_toes_in_the_mask():
    e = _foot_env()
    assert e.agent_selection == "player_1"
    obs, *_ = e.last()
    assert _mask_strings(obs, 4) == {"4>1"}
    assert not e.observe("player_0")["action_mask"].any()  # not to move: all zeros
    _step(e, "4>1")
    assert _mask_strings(e.last()[0], 4) == {"4>0"}
    _step(e, "4>0")
    _step(e, "1>1")
    obs, *_ = e.last()
    assert _mask_strings(obs, 4) == {"1>2", "1>3"}
    view = e.encoder.decode(obs["observation"])
    assert view["pending_value"][1] == 1 and view["pending_count"][0] == 3
    assert list(view["pending_kind"]) == [0, 1]
    _step(e, "1>2")
    _step(e, "1>0")
    _step(e, "1>3")
    assert _mask_strings(e.last()[0], 4) == {"3>3", "2>3", "3>2"}


def _draw_env(top, **kw):
    config = RulesConfig(max_pip=3, num_players=2, hand_size=2, rounds=1, center_arms=1, **kw)
    e = env(config=config)
    e.reset(options={"deals": [deal(config, [["3-3", "0-3"], ["1-1", "1-2"]], top=top)]})
    return e


def test_draw_only_then_play_or_keep_then_unplayable_moves_on():
    e = _draw_env(["2-3"])
    obs, _, _, _, info = e.last()
    assert e.agent_selection == "player_1" and _mask_strings(obs, 3) == {"draw"}
    assert "action_mask" not in info  # in the observation only, as PettingZoo's classic envs
    _step(e, "draw")
    assert e.agent_selection == "player_1"
    obs = e.last()[0]
    assert _mask_strings(obs, 3) == {"3>2", "pass"}
    drawn = e.encoder.decode(obs["observation"])["drawn"]
    assert np.flatnonzero(drawn).tolist() == [Tile(2, 3).index]
    _step(e, "pass")
    assert e.agent_selection == "player_0"

    e = _draw_env(["0-0", "2-3"])
    _step(e, "draw")  # 0-0 cannot be played: the turn moves on
    assert e.agent_selection == "player_0"
    assert _mask_strings(e.last()[0], 3) == {"3>0"}


def test_pass_only_with_empty_boneyard():
    config = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=1)
    e = env(config=config)
    e.reset(options={"deals": [deal(config, [["2-2", "1-2"], ["0-0", "0-1"]], top=["0-2", "1-1"])]})
    for move in ("draw", "2>0", "draw", "0>1", "1>1"):
        _step(e, move)
    assert e.agent_selection == "player_1"
    assert _mask_strings(e.last()[0], 2) == {"pass"}
    _step(e, "pass")
    _step(e, "1>2")
    assert all(e.terminations.values())
    assert e.infos["player_0"]["round_scores"].tolist() == [[0, 50]]
    assert e.infos["player_0"]["winners"].tolist() == [1, 0] and e.winners == [0]
    assert e.infos["player_1"]["totals"].tolist() == [0, 50] == e.totals
    assert e.infos["player_1"]["rounds_finished"] == 1 and e.round_scores == [[0, 50]]


def test_bad_scripted_deal_is_a_clear_error():
    e = env(max_pip=3, num_players=2, hand_size=2, rounds=1, center_arms=3)
    with pytest.raises(cf_env.DealError, match="exactly once"):
        e.reset(options={"deals": [{"hands": [[[0, 0], [0, 0]], [[1, 1], [1, 2]]], "boneyard": []}]})


# ---------------------------------------------------------------- rewards

def _play_out(e, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.integers(len(legal))]))
    return totals


@pytest.mark.parametrize("seed", range(3))
def test_reward_win_is_zero_sum_and_pays_winners(seed):
    e = env(num_players=4, max_pip=6, hand_size=5, rounds=3)
    e.reset(seed=seed)
    totals = _play_out(e, seed)
    assert sum(totals.values()) == pytest.approx(0.0)
    winners = e.game.winners
    for p, a in enumerate(e.possible_agents):
        expected = (1 / len(winners) if p in winners else 0.0) - 1 / 4
        assert totals[a] == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(3))
def test_reward_points_and_relative(seed):
    for mode in ("points", "relative"):
        e = env(num_players=3, max_pip=6, rounds=3, reward=mode, points_scale=50)
        e.reset(seed=seed)
        totals = _play_out(e, seed)
        scores = e.game.round_scores
        for p, a in enumerate(e.possible_agents):
            if mode == "points":
                expected = -sum(r[p] for r in scores) / 50
            else:
                expected = sum((sum(r) - r[p]) / 2 - r[p] for r in scores) / 50
            assert totals[a] == pytest.approx(expected)
        if mode == "relative":
            assert sum(totals.values()) == pytest.approx(0.0)


def test_round_rewards_arrive_at_each_round_end():
    e = env(num_players=2, max_pip=4, reward="points", rounds=3)
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    seen_rounds = 0
    while not e.game_over:
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if e.game.rounds_finished != seen_rounds:
            seen_rounds = e.game.rounds_finished
            pts = e.game.round_scores[-1]
            assert [e.rewards[a] for a in e.possible_agents] == pytest.approx([-x / 100 for x in pts])
            scores = e.infos["player_0"]["round_scores"]
            assert scores[:seen_rounds].tolist() == e.game.round_scores == e.round_scores
            assert (scores[seen_rounds:] == -1).all()
        else:
            assert all(r == 0 for r in e.rewards.values())


# ---------------------------------------------------------------- illegal actions

def test_illegal_action_raw_env_raises_and_changes_nothing():
    e = raw_env()
    e.reset(seed=0)
    before = e.game.to_record()
    obs = e.observe(e.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal actions"):
        e.step(illegal)
    with pytest.raises(IllegalActionError):
        e.step(None)
    assert e.game.to_record() == before
    assert not any(e.terminations.values())


def test_illegal_action_env_terminates_like_the_wrapper():
    e = env()
    e.reset(seed=0)
    offender = e.agent_selection
    obs = e.observe(offender)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(illegal)
    assert all(e.terminations.values()) and all(e.truncations.values())
    assert e.rewards[offender] == -1 and all(r == 0 for a, r in e.rewards.items() if a != offender)
    finished = set()
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        assert term and trunc
        assert reward == (-1 if agent == offender else 0)
        finished.add(agent)
        e.step(None)
    assert finished == set(e.possible_agents) and e.agents == []


def test_env_illegal_raise_mode():
    e = env(illegal_action="raise")
    e.reset(seed=0)
    with pytest.raises(IllegalActionError):
        e.step(101)


# ---------------------------------------------------------------- hidden information

def _swap_deal(config: RulesConfig, seed: int, a: int, b: int):
    """The seed's first deal, and a copy where opponents ``a`` and ``b`` trade a tile and (when
    nobody has to search for the starting double) the boneyard's top and bottom tiles trade places."""
    game = Game(config, seed=seed)
    d = game.to_record()["deals"][0]
    start = [config.max_pip, config.max_pip]
    swapped = {"hands": [list(h) for h in d["hands"]], "boneyard": list(d["boneyard"])}
    i = next(j for j, t in enumerate(d["hands"][a]) if t != start)
    k = next(j for j, t in enumerate(d["hands"][b]) if t != start)
    swapped["hands"][a][i], swapped["hands"][b][k] = d["hands"][b][k], d["hands"][a][i]
    if start not in d["boneyard"]:
        swapped["boneyard"][0], swapped["boneyard"][-1] = d["boneyard"][-1], d["boneyard"][0]
    return d, swapped


@pytest.mark.parametrize("seed", range(10))
def test_observation_does_not_see_hidden_tiles(seed):
    config = RulesConfig(num_players=4, rounds=1)
    original, swapped = _swap_deal(config, seed, 1, 2)
    e1, e2 = env(config=config), env(config=config)
    e1.reset(options={"deals": [original]})
    e2.reset(options={"deals": [swapped]})
    for seat in (0, 3):
        o1 = e1.observe(f"player_{seat}")["observation"]
        o2 = e2.observe(f"player_{seat}")["observation"]
        np.testing.assert_array_equal(o1, o2)
    # the swapped players do see their own change
    assert not np.array_equal(e1.observe("player_1")["observation"], e2.observe("player_1")["observation"])


def test_observation_blocks_decode_to_the_state():
    e = env()
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    seat = e.game.current_player
    view = e.encoder.decode(e.observe(f"player_{seat}")["observation"])
    assert np.flatnonzero(view["hand"]).tolist() == [t.index for t in e.game.hand(seat)]
    assert view["layout"].sum() == len(e.game.layout())
    assert view["open_ends"].tolist() == e.game.open_ends
    assert view["hand_sizes"].tolist() == [e.game.hand_sizes[(seat + i) % 4] for i in range(4)]
    assert view["boneyard"][0] == e.game.boneyard_size
    assert view["unmatched"].shape == (3, 10)
    for i in range(3):
        bits = e.game.unmatched((seat + 1 + i) % 4)
        assert np.flatnonzero(view["unmatched"][i]).tolist() == [v for v in range(10) if bits >> v & 1]
    assert ObservationEncoder(e.config).size == 513
    assert ObservationEncoder(e.config, version=1).size == 229


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 2}, {"num_players": 3, "draw_rule": "until_playable"}],
                         ids=["p4", "p2", "p3-until"])
def test_memory_blocks_follow_the_public_events(kwargs):
    """v2's played / draws / void / void_draws, against a memory kept here from the event log:
    who placed each tile, each seat's draws, and for each failure to match (a DRAW, or a PASS
    not right after the seat's own draw) the values the seat showed it lacked then."""
    e = env(**kwargs)
    n, k = e.config.num_players, e.config.max_pip + 1
    v1 = GameEncoder(e.config, version=1)
    rng = np.random.default_rng(5)
    for seed in range(3):
        e.reset(seed=seed)
        game = e.game  # a copy, which follows the env's game: each action is applied to both
        seen, memory = 0, None
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            if memory is None or memory[0] != game.round_index:  # a new round: start from its opening events
                memory = (game.round_index, [set() for _ in range(n)], [0] * n, [{} for _ in range(n)], 0)
            _, played, draws, void_at, known = memory
            events = game.round_events()
            for ev in events[known:]:
                if ev.kind in (EventKind.PLAY, EventKind.START):
                    played[ev.player].add(ev.tile.index)
                if ev.kind in (EventKind.DRAW, EventKind.SEARCH_DRAW):
                    draws[ev.player] += 1
                if ev.kind == EventKind.DRAW or (ev.kind == EventKind.PASS and ev.detail == 0):
                    faced = game.unmatched(ev.player)  # one decision per step: the values it just failed
                    for v in range(k):
                        if faced >> v & 1:
                            void_at[ev.player][v] = draws[ev.player] - (ev.kind == EventKind.DRAW)
            memory = memory[:4] + (len(events),)
            seat = game.current_player
            view = e.encoder.decode(obs["observation"])
            for i in range(n):
                p = (seat + i) % n
                assert set(np.flatnonzero(view["played"][i]).tolist()) == played[p]
                assert view["draws"][i] == draws[p]
            for i in range(1, n):
                p = (seat + i) % n
                assert np.flatnonzero(view["void"][i - 1]).tolist() == sorted(void_at[p])
                assert view["void_draws"][i - 1].tolist() == [draws[p] - void_at[p][v] if v in void_at[p] else 0
                                                              for v in range(k)]
                seen += bool(void_at[p])
            np.testing.assert_array_equal(v1.encode(game, seat), v1.select(obs["observation"]))
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            e.step(action)
            game.apply(action)
        assert seen  # the games had failures to match


# ---------------------------------------------------------------- against the reference rules

@pytest.mark.parametrize("kwargs", CONFIGS + [{"num_players": 8, "max_pip": 15, "hand_size": 9, "rounds": 2}])
def test_masks_and_scores_match_reference_move_by_move(kwargs):
    e = env(**kwargs)
    config = e.config
    for seed in range(3):
        game = Game(config, seed=seed)  # only to draw full deals for every round
        rng = np.random.default_rng(seed)
        while not game.is_over:
            game.apply(game.legal_actions()[int(rng.integers(len(game.legal_actions())))])
        deals = game.to_record()["deals"]
        ref = ReferenceGame(**config.to_dict(), deals=deals)
        e.reset(options={"deals": deals})
        for agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            assert agent == f"player_{ref.player}"
            assert set(np.flatnonzero(obs["action_mask"]).tolist()) == ref.legal()
            action = sorted(ref.legal())[int(rng.integers(len(ref.legal())))]
            ref.step(action)
            e.step(action)
        assert ref.over
        assert ref.round_scores == e.game.round_scores
        assert ref.winners == e.game.winners


# ---------------------------------------------------------------- declared spaces and misuse

LARGE = [{"num_players": 2, "max_pip": 18, "hand_size": 7, "rounds": 2},
         {"num_players": 8, "max_pip": 15, "hand_size": 7, "rounds": 2}]


@pytest.mark.parametrize("kwargs", LARGE, ids=["d18p2", "d15p8"])
def test_pettingzoo_api_on_large_sets(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(**kwargs), num_cycles=1000)


@pytest.mark.parametrize("kwargs", LARGE + [{}, {"num_players": 3, "max_pip": 4, "hand_size": 3, "center_arms": 3}],
                         ids=["d18p2", "d15p8", "default", "d4p3"])
def test_every_observation_lies_in_the_declared_space(kwargs):
    e = env(**kwargs)
    space = e.observation_space("player_0")["observation"]
    low, high = e.encoder.bounds()
    np.testing.assert_array_equal(space.low, low)
    np.testing.assert_array_equal(space.high, high)
    rng = np.random.default_rng(0)
    for seed in range(4):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            assert space.contains(obs["observation"]), (agent, obs["observation"][obs["observation"] > high])
            e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_step_and_last_after_every_agent_is_done_say_the_game_is_over():
    e = env(num_players=2, max_pip=4, hand_size=3, rounds=1, center_arms=2)
    e.reset(seed=0)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.agents == []
    with pytest.raises(cf_env.GameOverError, match="call reset"):
        e.step(None)
    with pytest.raises(cf_env.GameOverError, match="call reset"):
        e.last()
    with pytest.raises(ResetNeededError):
        env().last()
    with pytest.raises(cf_env.AgentNameError, match="player_0"):
        e.observe("player_9")


def test_reset_options_are_checked():
    e = env(num_players=2, max_pip=6)
    e.reset(seed=3)
    before = e.game.to_record()
    with pytest.raises(ConfigError, match=r"'deal' \(did you mean 'deals'\?\).*\['deals'\]"):
        e.reset(seed=4, options={"deal": []})
    with pytest.raises(ConfigError, match=r"mapping.*\['deals'\]"):
        e.reset(seed=4, options=[("deals", [])])
    assert e.game.to_record() == before  # a refused reset changes nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.reset(seed=4, options={"other": 1})  # ignored, as Gymnasium's envs ignore options they do not use
    # fewer deals than rounds: the rest are dealt from the seed
    d = Game(e.config, seed=9).to_record()["deals"][:1]
    e.reset(seed=5, options={"deals": d})
    assert e.game.to_record()["deals"][0] == d[0]


# ---------------------------------------------------------------- the history entry

@pytest.mark.parametrize("kwargs", [{}, {"num_players": 2}, {"num_players": 3, "draw_rule": "until_playable"},
                                    {"num_players": 4, "max_pip": 4, "hand_size": 3, "center_arms": 3}],
                         ids=["p4", "p2", "p3-until", "d4p4"])
def test_history_is_the_round_events_each_seat_may_see(kwargs):
    """history=True: the entry equals Game.round_events(observer) row by row (the compiled
    reader against the engine's own R17 filter), it is padded with -1, it never outgrows
    history_length(), and it lies in the declared space."""
    e = env(history=True, **kwargs)
    n = e.config.num_players
    space = e.observation_space("player_0")["history"]
    rng = np.random.default_rng(2)
    longest = 0
    for seed in range(4):
        e.reset(seed=seed)
        game = e.game  # a copy, which follows the env's game: each action is applied to both
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            seat = e.agent_name_mapping[agent]
            hist = obs["history"]
            assert hist.dtype == np.int16 and space.contains(hist)
            expected = [ev for ev in game.round_events(seat) if ev.kind != EventKind.ROUND_END]
            rows = [[(ev.player - seat) % n, int(ev.kind), -1 if ev.action is None else ev.action,
                     -1 if ev.tile is None else ev.tile.index] for ev in expected]
            assert hist[: len(rows)].tolist() == rows
            assert (hist[len(rows):] == -1).all()
            longest = max(longest, len(rows))
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            e.step(action)
            if action is not None:
                game.apply(action)
    assert 0 < longest <= e.encoder.history_length()


def test_history_off_by_default_and_checked():
    assert "history" not in env().observation_space("player_0").spaces
    e = env()
    e.reset(seed=0)
    assert set(e.observe("player_0")) == {"observation", "action_mask"}
    with pytest.raises(ConfigError, match="history must be True or False"):
        env(history="yes")


def test_history_hides_what_the_observation_hides():
    """Opponents 1 and 2 trade tiles they still hold, and the game is replayed from the deal with
    the same moves: seats 0 and 3 see the same observation and the same history; the traders
    see the change (their hands), and a draw's tile only in the drawer's own history."""
    config = RulesConfig(num_players=4, rounds=1)
    checked = 0
    for seed in range(30):
        game = Game(config, seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(25):
            if game.is_over:
                break
            game.apply(int(rng.choice(game.legal_actions())))
        if game.is_over or not any(ev.kind == EventKind.DRAW for ev in game.round_events()):
            continue
        hands = game.to_record()["deals"][0]["hands"]
        a = next((t for t in hands[1] if Tile.of(*t) in game.hand(1)), None)
        b = next((t for t in hands[2] if Tile.of(*t) in game.hand(2)), None)
        swapped = None if a is None or b is None else swap_held_tiles(game, a, b)
        if swapped is None:
            continue
        envs = []
        for g in (game, swapped):
            e = env(history=True, config=config)
            e.reset_to_game(g)
            envs.append(e)
        for seat in (0, 3):
            o1, o2 = (e.observe(f"player_{seat}") for e in envs)
            np.testing.assert_array_equal(o1["observation"], o2["observation"])
            np.testing.assert_array_equal(o1["history"], o2["history"])
            drawn = o1["history"][o1["history"][:, 1] == int(EventKind.DRAW)]
            assert (drawn[drawn[:, 0] != 0, 3] == -1).all()  # others' draws: no tile
        assert not np.array_equal(envs[0].observe("player_1")["observation"],
                                  envs[1].observe("player_1")["observation"])
        checked += 1
        if checked >= 3:
            break
    assert checked >= 3


@pytest.mark.parametrize("kwargs", CONFIGS + [{"num_players": 8, "max_pip": 15, "hand_size": 9, "rounds": 2},
                                              {"num_players": 3, "max_pip": 3, "hand_size": 1, "center_arms": 3}])
def test_a_game_read_through_the_compiled_engine_equals_the_encoder_built_from_the_reference(kwargs):
    """Every seat's vector (both versions) and history of a ``Game``, read by :class:`GameEncoder`
    (the compiled engine's writers) after every decision of several games and of a clone, equal
    the ones an independent encoder builds from the reference engine's state and event log (the
    oracles in tests/env/reference_observation.py and tests/reference_engine.py) dealt the same,
    bit for bit; so do the game's whole event log, the layout's geometry and the hands at each
    round's end."""
    from tests.env.reference_observation import ReferenceEncoder

    config = RulesConfig(**{"rounds": 4, **{k: v for k, v in kwargs.items() if k != "reward"}})
    encoders = [(GameEncoder(config, version=v), ReferenceEncoder(config, version=v)) for v in (1, 2)]
    n = config.num_players
    for seed in range(3):
        rng = np.random.default_rng(seed)
        game, reference = Game(config, seed=seed), ReferenceEngine(config, seed=seed)
        step = 0
        while True:
            read = game.clone() if step == 7 else game
            for new, ref in encoders:
                for seat in range(n):
                    got, want = new.encode(read, seat), ref.encode(reference, seat)
                    assert got.dtype == want.dtype == np.float32
                    np.testing.assert_array_equal(got, want)
                    got, want = new.history(read, seat), ref.history(reference, seat)
                    assert got.dtype == want.dtype == np.int16
                    np.testing.assert_array_equal(got, want)
            assert game.event_codes().tolist() == reference.event_codes().tolist()  # the whole log, hidden tiles too
            assert game.layout() == reference.layout() and game.open_end_nodes() == reference.open_end_nodes()
            assert game.round_end_hands == reference.round_end_hands
            if game.is_over:
                assert reference.is_over
                break
            legal = game.legal_actions()
            assert legal == reference.legal_actions()
            for play in legal[:2]:
                if play < config.num_actions - 2:
                    assert game.placement_of(play) == reference.placement_of(play)
            a = legal[int(rng.integers(len(legal)))]
            game.apply(a)
            reference.apply(a)
            step += 1


def test_the_encoder_reads_a_game_whose_next_draw_was_chosen():
    """A game whose next draw is chosen (``set_next_draw``, the OpenSpiel adapter's chance nodes),
    read at every decision, equals the independent encoder over the reference engine given the
    same choices; a game of other rules is refused."""
    from tests.env.reference_observation import ReferenceEncoder

    config = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=3)
    encoder, reference_encoder = GameEncoder(config), ReferenceEncoder(config)
    rng = np.random.default_rng(4)
    game, reference = Game(config, seed=5), ReferenceEngine(config, seed=5)
    chosen = 0
    while not game.is_over:
        for seat in range(config.num_players):
            np.testing.assert_array_equal(encoder.encode(game, seat), reference_encoder.encode(reference, seat))
        np.testing.assert_array_equal(encoder.history(game, 0), reference_encoder.history(reference, 0))
        legal = game.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        if action == config.num_actions - 2 and game.boneyard_size > 1:
            tile = game.boneyard_tiles()[0]  # not always the tile on top
            game.set_next_draw(tile)
            reference.set_next_draw(tile)
            chosen += 1
        game.apply(action)
        reference.apply(action)
    assert game.rounds_finished == 3 and chosen
    assert game.to_record() == reference.to_record()
    with pytest.raises(ConfigError, match="reads games of"):  # a game of other rules
        encoder.encode(Game(RulesConfig(num_players=3, max_pip=6, hand_size=4, rounds=3), seed=0), 0)


def test_a_game_the_encoder_follows_pickles_and_copies():
    import copy
    import pickle

    game = Game(RulesConfig(), seed=3)
    encoder = GameEncoder(game.config)
    for _ in range(25):
        encoder.encode(game, game.current_player)
        encoder.history(game, game.current_player)
        game.apply(game.legal_actions()[0])
    for other in (pickle.loads(pickle.dumps(game)), copy.deepcopy(game), game.clone()):
        for seat in range(game.num_players):
            np.testing.assert_array_equal(encoder.encode(other, seat), encoder.encode(game, seat))
            np.testing.assert_array_equal(encoder.history(other, seat), encoder.history(game, seat))
        other.apply(other.legal_actions()[0])  # the copy moves on alone
        assert not np.array_equal(encoder.encode(other, 0), encoder.encode(game, 0))
