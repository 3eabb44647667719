"""OpenSpiel: python_chicken_foot under pyspiel's own tests, parity with the env, the resampler
under OpenSpiel's ISMCTSBot, and the bot bridge both ways."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import agents  # noqa: E402
from agents.spiel import AgentBot, BotAgent, resampler  # noqa: E402
from cf_env import RulesConfig, raw_env  # noqa: E402
from cf_env.integrations.openspiel import (  # noqa: E402
    GAME_NAME,
    ChickenFootState,
    game_from_rules,
    max_game_length,
    rules_from_params,
    state_from_game,
)
from training.evaluate import play_game  # noqa: E402

pytestmark = pytest.mark.framework


def test_parameters_are_the_rules_fields_with_the_same_defaults():
    game = pyspiel.load_game(GAME_NAME)
    assert game.rules == RulesConfig()
    assert game.num_players() == 4 and game.num_distinct_actions() == 102 and game.max_chance_outcomes() == 55
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert game.min_utility() == -0.25 and game.max_utility() == 0.75 and game.utility_sum() == 0.0
    params = {"players": 3, "max_pip": 6, "hand_size": 5, "rounds": 3, "center_arms": 3, "draw_rule": "until_playable",
              "double_blank_points": 25}
    game = pyspiel.load_game(GAME_NAME, params)
    assert game.rules == RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=3, center_arms=3,
                                     draw_rule="until_playable", double_blank_points=25) == rules_from_params(params)
    assert game.max_game_length() == max_game_length(game.rules)
    with pytest.raises(Exception, match="center_arms"):
        pyspiel.load_game(GAME_NAME, {"max_pip": 3, "hand_size": 2})  # 4 arms on a double-3 set (R9)


@pytest.mark.parametrize("params", [
    {"players": 2, "max_pip": 6, "rounds": 2},
    {"players": 3, "max_pip": 6, "rounds": 2, "center_arms": 3, "draw_rule": "until_playable"},
    {"players": 4, "max_pip": 9, "rounds": 1},
    {"players": 2, "max_pip": 9, "rounds": 1, "draw_rule": "until_playable"},
])
def test_pyspiel_random_sim_test(params):
    pyspiel.random_sim_test(pyspiel.load_game(GAME_NAME, params), num_sims=3, serialize=False, verbose=False)


def _random_playthrough(game, rng):
    """A game with uniform chance and random decisions; yields each decision state."""
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1.0) < 1e-9 and len(set(outcomes)) == len(outcomes)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            yield state
            legal = state.legal_actions()
            state.apply_action(int(legal[rng.integers(len(legal))]))
        steps += 1
    assert steps <= game.max_game_length()
    yield state


@pytest.mark.parametrize("rules,games", [(RulesConfig(num_players=2, max_pip=6, rounds=3), 25),
                                         (RulesConfig(num_players=4, max_pip=9, rounds=2), 8),
                                         (RulesConfig(num_players=3, max_pip=6, center_arms=3,
                                                      draw_rule="until_playable", rounds=2), 10)])
def test_same_deal_and_actions_as_the_env(rules, games):
    """Replay each OpenSpiel game's deals and decisions in the PettingZoo env (reward="win"): the
    legal actions, the observations, the returns and the winners agree at every step."""
    game = game_from_rules(rules)
    rng = np.random.default_rng(0)
    for _ in range(games):
        decisions = []
        for state in _random_playthrough(game, rng):
            if not state.is_terminal():
                decisions.append((state.current_player(), state.legal_actions(), state.observation_tensor(),
                                  state.history()[-1] if state.history() else None))
        env = raw_env(config=rules, reward="win")
        env.reset(options={"deals": state.deals()})
        returns = np.zeros(rules.num_players)
        actions = state.engine.actions()
        assert len(actions) == len(decisions)
        for (player, legal, obs, _), action in zip(decisions, actions):
            assert env.game.current_player == player
            assert env.game.legal_actions() == legal
            np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], np.float32(obs))
            env.step(action)
            returns += [env.rewards[a] for a in env.possible_agents]
        assert env.game_over and env.game.winners == state.engine.winners
        np.testing.assert_allclose(returns, state.returns())
        assert abs(sum(state.returns())) < 1e-12


def test_state_from_game_rebuilds_an_engine_game():
    rules = RulesConfig(num_players=3, max_pip=6, rounds=3)
    env = raw_env(config=rules)
    heuristic = agents.load("heuristic", rules)
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    spiel_game = game_from_rules(rules)
    for step in range(200):
        if env.game_over:
            break
        seat = env.agent_name_mapping[env.agent_selection]
        if step % 17 == 0:
            state = state_from_game(env.game, spiel_game)
            assert state.current_player() == seat
            assert state.legal_actions() == env.game.legal_actions()
            np.testing.assert_array_equal(state.observation_vector(seat), env.observe(env.agent_selection)["observation"])
        env.step(heuristic.act(env.observe(env.agent_selection), rng))


def test_a_state_from_its_engine_is_the_state_reached_through_the_chance_nodes():
    rules = RulesConfig(num_players=3, max_pip=6, rounds=2)
    game = game_from_rules(rules)
    checked = 0
    for state in _random_playthrough(game, np.random.default_rng(5)):  # every decision, then the end
        direct = ChickenFootState.from_engine(game, state.engine.clone())
        assert direct.is_terminal() == state.is_terminal() and direct.deals() == state.deals()
        assert direct.current_player() == state.current_player()
        assert direct.legal_actions() == state.legal_actions()
        for seat in range(3):
            assert direct.information_state_string(seat) == state.information_state_string(seat)
            np.testing.assert_array_equal(direct.information_state_tensor(seat), state.information_state_tensor(seat))
        checked += 1
    assert checked > 40 and state.is_terminal()
    assert ChickenFootState.from_engine(game, state.engine.clone()).returns() == state.returns()
    with pytest.raises(ValueError, match="rules"):
        ChickenFootState.from_engine(game_from_rules(RulesConfig(num_players=2, max_pip=6)), state.engine)


def test_resampler_keeps_the_information_state_and_redraws_the_hidden_tiles():
    rules = RulesConfig(num_players=3, max_pip=6, rounds=2)
    game = game_from_rules(rules)
    rng = np.random.default_rng(3)
    checked = changed = 0
    for state in _random_playthrough(game, np.random.default_rng(7)):
        if state.is_terminal() or rng.random() > 0.3:
            continue
        player = state.current_player()
        world = resampler(state, player, rng)
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.legal_actions() == state.legal_actions()
        np.testing.assert_array_equal(world.observation_vector(player), state.observation_vector(player))
        others = [q for q in range(3) if q != player]
        changed += any(world.engine.hand(q) != state.engine.hand(q) for q in others)
        checked += 1
    assert checked >= 10 and changed >= checked // 2


def test_openspiel_ismcts_plays_whole_games_with_the_resampler():
    """OpenSpiel's ISMCTSBot asserts that every resampled root has the root's information state."""
    from open_spiel.python.algorithms.ismcts import ISMCTSBot
    from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

    rules = RulesConfig(num_players=2, max_pip=6, rounds=1)
    game = game_from_rules(rules)
    rng = np.random.default_rng(0)
    bot = ISMCTSBot(game, RandomRolloutEvaluator(1, np.random.RandomState(0)), 1.0, 25,
                    random_state=np.random.RandomState(1))
    bot.set_resampler(lambda state, player: resampler(state, player, rng))
    env = raw_env(config=rules)
    seats = [BotAgent(bot, rules, lambda: env.game, name="ismcts"), agents.load("heuristic", rules)]
    for k in range(3):
        finished = play_game(env, seats[k % 2:] + seats[:k % 2], None, np.random.default_rng(k), seed=k)
        assert finished.is_over


def test_evaluate_bots_seats_a_project_agent_against_an_openspiel_bot():
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    game = pyspiel.load_game(GAME_NAME, {"players": 2, "max_pip": 6, "rounds": 2})
    for seed in range(3):
        bots = [AgentBot("heuristic", game, seed=seed), pyspiel.make_uniform_random_bot(1, seed)]
        returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(seed))
        assert sorted(returns) in ([-0.5, 0.5], [0.0, 0.0])


def test_information_state_tensor_and_string_tell_the_same_states_apart():
    game = pyspiel.load_game(GAME_NAME, {"players": 3, "max_pip": 6, "rounds": 2})
    by_string: dict[tuple, bytes] = {}  # per seat (the string names the seat, the tensor is the seat's)
    by_tensor: dict[tuple, str] = {}
    rng = np.random.default_rng(11)
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            for p in range(3):
                text = state.information_state_string(p)
                tensor = np.asarray(state.information_state_tensor(p), np.float32).tobytes()
                assert by_string.setdefault((p, text), tensor) == tensor
                assert by_tensor.setdefault((p, tensor), text) == text
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
    assert len(by_string) > 300
    assert len(game.new_initial_state().information_state_tensor(0)) == game.information_state_tensor_size()
