"""Search agents: specs, legality, reproducibility, hidden information, and the worlds they sample."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

import agents
from agents.baselines import HeuristicAgent, RandomAgent
from agents.search import (
    SearchAgent,
    SearchSettings,
    SearchSpecError,
    parse_search_spec,
    read_observation,
    sample_worlds,
)
from agents.search.inference import read_history
from agents.search.spec import TEMPERATURE
from agents.search.values import SIGMA_PER_HAND_PIP, Valuation, round_value, round_values, valuation, win_chance
from cf_env import Game, GameEncoder, RulesConfig, Tile, raw_env
from cf_env.engine.scoring import REWARD_RELATIVE, round_reward, win_share
from cf_env.vector import make_consts, new_state
from tests.agents.checks import Checked
from tests.scripted import random_positions, swap_held_tiles
from training.evaluate import play_game

KEEP = "tests.agents.test_search:Keep"  #: the sampler below, named as a spec names a sampler of one's own


class Keep:
    """A world sampler of one's own (``infer=module:Class``): the constraints, with one kept tile of a
    value an opponent failed to match at chance ``keep`` (the compiled sampler's ``World.keep``)."""

    reads = "constraints"

    def __init__(self, config: RulesConfig, keep: float) -> None:
        self.keep = float(keep)

    def __call__(self, world, observation):
        return world._replace(keep=self.keep)


class Peek(Keep):
    """A sampler that claims to read the opponents' true hands: no player may use it."""

    needs_hands = True


SMALL = [RulesConfig(num_players=2, max_pip=6, rounds=2),
         RulesConfig(num_players=3, max_pip=6, center_arms=3, draw_rule="until_playable", rounds=2),
         RulesConfig(num_players=3, max_pip=3, hand_size=2, center_arms=3),
         RulesConfig(num_players=2, max_pip=3, hand_size=1, center_arms=1)]


def test_spec_parsing_and_errors():
    assert parse_search_spec("search").algo == "pimc"
    p = parse_search_spec("search:algo=ismcts:ms=0:sims=50:rollout=greedy:infer=0:c=1.5:seed=3")
    assert asdict(p) == {"algo": "ismcts", "ms": 0.0, "sims": 50, "rollout": "greedy", "others": "", "value": "points",
                         "infer": "none", "temp": TEMPERATURE, "proposals": 8, "c": 1.5, "tree": "all", "depth": 0,
                         "root": "ucb", "race": 0.0, "tie": 0.01, "seed": 3, "options": ()}
    assert parse_search_spec(p.spec) == p and SearchSettings(ms=0, sims=16).spec == "search:ms=0:sims=16"
    assert SearchAgent(RulesConfig(), SearchSettings(ms=0, sims=4)).sims == 4
    with pytest.raises(SearchSpecError, match="ms must be >= 0"):
        SearchSettings(ms=-1)
    assert parse_search_spec("search").infer == "constraints"
    assert parse_search_spec("search:infer=1").infer == "constraints"  # the earlier grammar still reads
    assert parse_search_spec("search:infer=constraints:temp=2:proposals=16").proposals == 16
    assert parse_search_spec("search:value=win").value == "win"
    for bad, words in [("search:algo=mcts", "algo must be"), ("search:width=3", "unknown search parameter"),
                       ("search:ms=-1", "ms must be"), ("search:ms=0", "give sims"),
                       ("search:keep=0.2", "unknown search parameter 'keep'"),
                       ("search:infer=policy:keep=0.2", "unknown search parameter 'keep'"),
                       ("search:rollout=search", "rollout must be"), ("search:sims=x", "not a valid"),
                       ("search:7", "name=value"), ("search:infer=maybe", "infer must be one of"),
                       ("search:temp=0", "temp must be > 0"), ("search:proposals=0", "proposals must be"),
                       ("search:value=score", "value must be"), ("search:race=-1", "race must be"),
                       ("search:race=2", "race needs sims"), ("search:ms=0:sims=8:race=2:tie=-1", "tie must be"),
                       ("search:algo=ismcts:ms=0:sims=8:race=2", "pimc with a compiled rollout"),
                       ("search:ms=0:sims=8:race=2:rollout=zoo:strong-4p", "pimc with a compiled rollout"),
                       ("search:algo=ismcts:ms=0:sims=8:tree=some", "tree must be one of"),
                       ("search:ms=0:sims=8:tree=own", "algo=pimc has none"),
                       ("search:ms=0:sims=8:depth=2", "algo=pimc has none"),
                       ("search:algo=ismcts:ms=0:sims=8:depth=-1", "depth must be >= 0"),
                       ("search:algo=ismcts:ms=0:sims=8:root=all", "root must be one of"),
                       ("search:ms=0:sims=8:root=every", "algo=pimc has none")]:
        with pytest.raises(SearchSpecError, match=words):
            parse_search_spec(bad)
    with pytest.raises(SearchSpecError):
        agents.load("search:algo=nope")
    # a sampler of one's own: its options are the pairs that are not search parameters
    own = parse_search_spec(f"search:ms=0:sims=4:infer={KEEP}:keep=0.5")
    assert own.infer == KEEP and own.options == (("keep", "0.5"),) and parse_search_spec(own.spec) == own
    agent = agents.load(own.spec, RulesConfig())
    assert isinstance(agent.sampler, Keep) and agent.sampler.keep == 0.5 and agent.reads == "constraints"
    assert not agent.needs_history and not agent.needs_hands
    with pytest.raises(SearchSpecError, match="Keep.*failed"):  # an option it does not take
        agents.load(f"search:ms=0:sims=4:infer={KEEP}:keep=0.5:width=2", RulesConfig())
    with pytest.raises(SearchSpecError, match="not a world sampler"):  # a class that is not one
        agents.load("search:ms=0:sims=4:infer=agents:HeuristicAgent", RulesConfig())
    with pytest.raises(agents.AgentSpecError, match="cannot import"):
        agents.load("search:ms=0:sims=4:infer=no_such_module:Sampler", RulesConfig())
    peek = "search:ms=0:sims=4:infer=tests.agents.test_search:Peek:keep=0"
    assert agents.load(peek, RulesConfig()).needs_hands
    with pytest.raises(SearchSpecError, match="true hands"):  # a player may not read the hands (R17)
        parse_search_spec(peek, player=True)
    assert isinstance(agents.load("search:ms=5"), SearchAgent)
    assert agents.spec_rules("search:ms=5") is None


def test_the_joint_win_chance_shares_the_seats_own_luck():
    """``value=joint``: level seats each win 1/n (the product of pairwise chances says 2**-(n-1));
    the chances of all seats sum to 1; they match a simulation of independent normal futures."""
    pts = np.zeros(4, np.int64)
    for n in (2, 3, 4):
        level = np.zeros(n, np.int64)
        assert win_chance(level, pts, n, 0, 20.0, True) == pytest.approx(1 / n, abs=1e-6)
        assert win_chance(level, pts, n, 0, 20.0, False) == pytest.approx(2.0 ** -(n - 1))
    totals, spread = np.array([0, 10, -5, 30], np.int64), 20.0
    joint = np.array([win_chance(totals, pts, 4, p, spread, True) for p in range(4)])
    assert joint.sum() == pytest.approx(1.0, abs=1e-6)
    futures = np.random.default_rng(0).normal(0.0, spread / np.sqrt(2), (200_000, 4)) + totals
    simulated = np.bincount(futures.argmin(axis=1), minlength=4) / len(futures)
    np.testing.assert_allclose(joint, simulated, atol=0.005)
    assert joint.argmax() == 2 and joint.argmin() == 3  # the lowest total is likeliest to end lowest
    round_pts = np.array([0, 0, 20, 0], np.int64)  # this round's points count like the totals
    assert win_chance(totals, round_pts, 4, 2, spread, True) < joint[2]


@pytest.mark.parametrize("value", ["points", "win", "joint"])
def test_a_seats_round_value_follows_the_valuations_definition(value):
    """PIMC reads the searcher's value alone (``round_value``), ISMCTS every seat's (``round_values``):
    both are the module docstring's definition, written out here from the scoring functions, in the
    middle of a game and in its last round (the win's share, ties shared)."""
    config = RulesConfig()
    state = new_state(make_consts(config), 1)
    pts = np.array([5, 0, 12, 30], np.int64)
    state.round_scores[0, 0] = pts
    unit = config.max_pip * config.hand_size
    sigma = 0.0 if value == "points" else SIGMA_PER_HAND_PIP * unit
    for totals, left in (([40, 33, 20, 0], 4), ([30, 45, 23, 20], 0), ([0, 0, 0, 0], 1)):
        v = Valuation(np.array(totals, np.int64), left, float(unit), sigma, value == "joint")
        after = np.array(totals) + pts
        expected = []
        for p in range(4):
            relative = round_reward(int(pts[p]), int(pts.sum()), 4, REWARD_RELATIVE, float(unit))
            if left == 0:
                lowest = after == after.min()
                expected.append(win_share(bool(lowest[p]), int(lowest.sum())) + 0.05 * relative)
            elif sigma:
                chance = win_chance(np.array(totals, np.int64), pts, 4, p, sigma * np.sqrt(left), value == "joint")
                expected.append(chance + 0.05 * relative)
            else:
                expected.append(relative)
        every = np.zeros(4)
        round_values(state, 0, 4, v, every)
        np.testing.assert_allclose(every, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose([round_value(state, 0, 4, v, p) for p in range(4)], expected, rtol=0, atol=1e-12)
        if left == 0:  # seats 0 and 2 tie on 35 and share the win
            assert min(every[0], every[2]) > 0.4 > max(every[1], every[3])


@pytest.mark.parametrize("config", SMALL)
@pytest.mark.parametrize("spec", ["search:ms=0:sims=4", "search:algo=ismcts:ms=0:sims=30:rollout=greedy",
                                  f"search:ms=0:sims=3:rollout=random:infer={KEEP}:keep=0.5",
                                  "search:ms=0:sims=4:value=joint"])
def test_search_plays_legal_whole_games(config, spec):
    env = raw_env(config=config)  # raw_env raises on any illegal action
    agent = Checked(agents.load(spec, config))
    others = [HeuristicAgent(config), RandomAgent(config)]
    seats = [agent] + [others[i % 2] for i in range(config.num_players - 1)]
    for k in range(2):
        game = play_game(env, seats[k:] + seats[:k], None, np.random.default_rng(k), seed=k)
        assert len(game.round_scores) == config.rounds
    assert agent.searched == agent.choices  # every decision with a choice was searched, no other


def test_a_seed_fixes_the_decisions_without_a_clock():
    config = RulesConfig(num_players=3, max_pip=6, rounds=2)
    env = raw_env(config=config)
    records = []
    for _ in range(2):
        seats = [agents.load("search:algo=ismcts:ms=0:sims=40", config), HeuristicAgent(config),
                 agents.load("search:ms=0:sims=5", config)]
        records.append(play_game(env, seats, None, np.random.default_rng(9), seed=4).to_record())
    assert records[0] == records[1]


def test_the_time_budget_is_kept():
    config = RulesConfig()
    env = raw_env(config=config)
    agent = agents.load("search:ms=15", config)
    heuristic = HeuristicAgent(config)
    env.reset(seed=3)
    spent = []
    rng = np.random.default_rng(0)
    while not env.game_over and len(spent) < 30:
        seat = env.agent_name_mapping[env.agent_selection]
        obs = env.observe(env.agents[seat])
        if seat == 0:
            action = agent.act(obs, rng)
            if agent.last_search["simulations"]:
                spent.append(agent.last_search["seconds"])
        else:
            action = heuristic.act(obs, rng)
        env.step(action)
    assert len(spent) >= 5
    # the clock stops the search: without it (ms ignored, no sims cap) a decision would run 2**30 worlds;
    # the bound is loose enough that a loaded machine cannot break it
    assert max(spent) < 1.0


def test_sims_caps_the_search_under_any_clock():
    config = RulesConfig()
    env = raw_env(config=config)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for spec, sims in (("search:ms=60000:sims=7", 7), ("search:algo=ismcts:ms=60000:sims=25", 25),
                       ("search:ms=0:sims=3", 3)):
        agent = agents.load(spec, config)
        while not env.game_over:
            obs = env.observe(env.agent_selection)
            action = agent.act(obs, rng)
            if obs["action_mask"].sum() > 1:
                break
            env.step(action)
        assert agent.last_search["simulations"] == sims


def _decision_point(config: Game, seed: int):
    """A heuristic game (seed ``seed``) stopped at seat 0's third decision with a choice in round 0."""
    game = Game(config, seed=seed)
    heuristic = HeuristicAgent(config)
    encoder = GameEncoder(config)
    rng = np.random.default_rng(seed)
    choices = 0
    while game.round_index == 0:
        p = game.current_player
        obs = {"observation": encoder.encode(game, p), "action_mask": encoder.mask(game.legal_bits)}
        if p == 0 and len(game.legal_actions()) > 1:
            choices += 1
            if choices == 3:
                return game
        game.apply(heuristic.act(obs, rng))
    return None


def test_hidden_tiles_never_reach_the_decision(tmp_path):
    """Swap tiles between two opponents' hands (the same game otherwise, replayed from the deal):
    the search seat's observation is the same, so are its decisions for a fixed seed."""
    config = RulesConfig()
    encoder = GameEncoder(config)
    checked = 0
    for seed in range(40):
        game = _decision_point(config, seed)
        if game is None:
            continue
        hands = game.to_record()["deals"][0]["hands"]
        held1 = [t for t in hands[1] if Tile.of(*t) in game.hand(1)]
        held2 = [t for t in hands[2] if Tile.of(*t) in game.hand(2)]
        for a in held1:
            for b in held2:
                swapped = swap_held_tiles(game, a, b)
                if swapped is None:  # an opponent's move is no longer legal with the other tile: try another pair
                    continue
                assert swapped.hand(1) != game.hand(1) and swapped.hand(2) != game.hand(2)
                views = [encoder.observe(g, history=True) for g in (game, swapped)]
                np.testing.assert_array_equal(views[0]["observation"], views[1]["observation"])
                np.testing.assert_array_equal(views[0]["history"], views[1]["history"])
                assert read_history(views[0]["history"], encoder).seat.size  # policy inference has plays to weigh
                for spec in ("search:ms=0:sims=30", "search:algo=ismcts:ms=0:sims=200",
                             "search:ms=0:sims=30:infer=policy", "search:algo=ismcts:ms=0:sims=200:infer=policy",
                             f"search:ms=0:sims=30:infer={KEEP}:keep=0.5"):
                    picks = [agents.load(spec, config).act(v, np.random.default_rng(1)) for v in views]
                    assert picks[0] == picks[1]
                checked += 1
                break
            else:
                continue
            break
        if checked >= 3:
            break
    assert checked >= 3


def test_an_opponent_holds_at_most_one_tile_of_a_value_it_failed_to_match():
    """The inference's premise, on the engine: after a failure to match, a hand holds at most the
    one tile drawn right after it (kept, R12); players that never keep hold none."""
    for agent_cls, most, config in [(RandomAgent, 1, RulesConfig(rounds=3)), (HeuristicAgent, 0, RulesConfig(rounds=3)),
                                    (RandomAgent, 1, RulesConfig(num_players=3, max_pip=6, draw_rule="until_playable"))]:
        seen_one = 0
        encoder = GameEncoder(config)
        player = agent_cls(config)
        for seed in range(30):
            game = Game(config, seed=seed)
            rng = np.random.default_rng(seed)
            while not game.is_over:
                for p in range(config.num_players):
                    if p == game.current_player and game.drawn_tile is not None:
                        continue  # it has the drawn tile in hand and decides now; nobody else searches now
                    bits = game.unmatched(p)
                    held = [t for t in game.hand(p) if (bits >> t.low) & 1 or (bits >> t.high) & 1]
                    assert len(held) <= most, (seed, p, held)
                    seen_one += len(held) == 1
                q = game.current_player
                game.apply(player.act({"observation": encoder.encode(game, q),
                                       "action_mask": encoder.mask(game.legal_bits)}, rng))
        if most:
            assert seen_one > 0  # the kept tile is real: the inference must allow it


@pytest.mark.parametrize("keep", [0.0, 1.0])
def test_sampled_worlds_are_consistent_with_the_observation(keep):
    config = RulesConfig(rounds=3)
    n, t = config.num_players, config.num_tiles
    encoder = GameEncoder(config)
    random_agent = RandomAgent(config)
    worlds = violations = 0
    for seed in range(6):
        game = Game(config, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            p = game.current_player
            obs = encoder.encode(game, p)
            mask = encoder.mask(game.legal_bits)
            assert valuation(obs, encoder, "points").totals.tolist() == game.totals[p:] + game.totals[:p]
            sampled = sample_worlds({"observation": obs, "action_mask": mask}, 3, rng, encoder,
                                    sampler=Keep(config, keep) if keep else None)
            forbid = sampled.world.forbid
            bone_n = sampled.world.bone_n
            assert sampled.boneyards.shape == (3, bone_n)
            for hands, bone in zip(sampled.hands, sampled.boneyards):
                for i in range(n):
                    assert hands[i].sum() == game.hand_sizes[(p + i) % n]
                owned = np.concatenate([np.flatnonzero(h) for h in hands] + [bone, np.flatnonzero(obs[encoder.slices["layout"]])])
                assert sorted(owned.tolist()) == list(range(t))  # every tile exactly once
                np.testing.assert_array_equal(hands[0], obs[encoder.slices["hand"]] > 0)  # the own hand as it is
                violations += sum(int((hands[i] & (forbid[i] > 0)).sum()) > (1 if keep else 0) for i in range(1, n))
                worlds += 1
            game.apply(random_agent.act({"observation": obs, "action_mask": mask}, rng))
    assert worlds > 500
    # a random player keeps playable tiles, so with keep 0 a few constraint sets cannot all hold (more
    # of them since observation v2: every failure with at most its own draw since is a constraint,
    # not only the latest one)
    assert violations <= (0 if keep else 0.04 * worlds)


def test_search_without_inference_ignores_the_failures():
    config = RulesConfig(rounds=3)
    game = Game(config, seed=1)
    encoder = GameEncoder(config)
    rng = np.random.default_rng(0)
    heuristic = HeuristicAgent(config)
    while not any(game.unmatched(p) for p in range(4)):
        q = game.current_player
        game.apply(heuristic.act({"observation": encoder.encode(game, q), "action_mask": encoder.mask(game.legal_bits)}, rng))
    p = game.current_player
    obs, mask = encoder.encode(game, p), encoder.mask(game.legal_bits)
    opponents_failed = any(game.unmatched((p + i) % 4) for i in range(1, 4))
    for infer, forbidden in (("none", False), ("constraints", opponents_failed), (False, False)):
        world = read_observation(obs, mask, encoder, new_state(make_consts(config), 1), infer=infer)
        assert world.forbid.any() == forbidden


def test_a_checkpoint_plays_the_rollouts_in_batches(monkeypatch):
    from agents.torch_policy import TorchAgent

    batches = []
    act_batch = TorchAgent.act_batch

    def recording(self, observations, masks, rng):
        batches.append(len(observations))
        return act_batch(self, observations, masks, rng)

    monkeypatch.setattr(TorchAgent, "act_batch", recording)
    config = RulesConfig(rounds=1)
    agent = Checked(agents.load("search:rollout=zoo:strong-4p:ms=0:sims=2", config))
    env = raw_env(config=config)
    play_game(env, [agent] + [HeuristicAgent(config)] * 3, None, np.random.default_rng(0), seed=2)
    assert agent.searched == agent.choices > 0
    # each step of a chunk is one forward pass over every unfinished (world, action) rollout: at least
    # 2 actions at the first step of every chunk
    assert max(batches) >= 2 and len(batches) < sum(batches)
    with pytest.raises(agents.AgentSpecError):
        agents.load("search:rollout=zoo:nope", config)


def test_parallel_evaluation_gives_the_same_report_and_times_each_agent():
    from training.evaluate import evaluate

    config = RulesConfig(rounds=2)
    lineup = ["search:ms=0:sims=2", "heuristic", "greedy", "greedy"]
    one = evaluate(lineup, config, deal_sets=2, seed=4, progress=False)
    two = evaluate(lineup, config, deal_sets=2, seed=4, progress=False, workers=2)
    assert [(r.spec, r.win_rate, r.mean_points, r.rating) for r in one.results] == \
        [(r.spec, r.win_rate, r.mean_points, r.rating) for r in two.results]
    search = one.results[0]
    assert search.ms_per_choice > search.ms_per_decision > 0  # forced decisions cost no search
    assert "ms/choice" in one.table()


def test_the_command_line_plays_and_evaluates_search():
    from click.testing import CliRunner

    from chickenfoot.cli import main

    result = CliRunner().invoke(main, ["play", "--opponents", "search:ms=2,heuristic,zoo:strong-4p", "--rounds", "1",
                                       "--seed", "0"], input="0\n" * 400)
    assert result.exit_code == 0, result.output
    assert "(search:ms=2)" in result.output and "Game over" in result.output
    result = CliRunner().invoke(main, ["eval", "search:ms=0:sims=2", "greedy", "--players", "2", "--max-pip", "6",
                                       "--rounds", "2", "--deal-sets", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "search:ms=0:sims=2" in result.output and "ms/choice" in result.output


def test_others_play_the_opponents_seats_and_the_network_only_the_searchers():
    """``others=heuristic`` beside a checkpoint rollout: the compiled heuristic plays the opponents'
    seats, the network (here the heuristic agent, row by row) only the searcher's. With the same
    worlds, the values are the all-compiled heuristic search's, and the network is asked for the
    searcher's decisions only (far fewer rows than the rollouts' decisions)."""
    config = RulesConfig(rounds=1)
    encoder = GameEncoder(config)
    rows = []

    class Recorded(HeuristicAgent):
        def act_batch(self, observations, masks, rng):
            rows.append(len(observations))
            return np.array([self.act({"observation": o, "action_mask": m}, rng)
                             for o, m in zip(observations, masks)], dtype=np.int64)

    mixed = SearchAgent(config, parse_search_spec("search:ms=0:sims=6:rollout=zoo:strong-4p:others=heuristic"))
    mixed._network = Recorded(config)
    compiled = SearchAgent(config, parse_search_spec("search:ms=0:sims=6"))
    searched = 0
    for game, seat in random_positions(config, seed=4, count=30):
        observation = {"observation": encoder.encode(game, seat), "action_mask": encoder.mask(game.legal_bits)}
        if len(game.legal_actions()) < 2:
            continue
        rows.clear()
        assert mixed.act(observation, np.random.default_rng(1)) == compiled.act(observation, np.random.default_rng(1))
        np.testing.assert_allclose(mixed.last_search["scores"], compiled.last_search["scores"])
        assert mixed.last_search["rollout_decisions"] == compiled.last_search["rollout_decisions"]
        assert sum(rows) < mixed.last_search["rollout_decisions"] / 2
        searched += 1
    assert searched >= 5
    with pytest.raises(SearchSpecError, match="others must be one of"):
        parse_search_spec("search:ms=0:sims=6:rollout=zoo:strong-4p:others=nobody")
    with pytest.raises(SearchSpecError, match="already plays every seat"):
        parse_search_spec("search:ms=0:sims=6:others=heuristic")


def test_ismcts_compiles_a_checkpoints_policy_into_its_rollouts(tmp_path):
    """The compiled network (agents.search.network) chooses what the checkpoint agent chooses on
    the env's observations; ISMCTS with it plays whole games; a network it cannot compile (an
    action head) is refused with the way out."""
    from agents.checkpoint import model_payload, save_checkpoint
    from agents.search.network import compile_network, net_choice
    from agents.torch_policy import ActorCritic

    config = RulesConfig(rounds=1)
    network = agents.load("zoo:strong-4p", config)
    env = raw_env(config=config)
    net = compile_network(network, env.observation_space(env.possible_agents[0])["observation"].shape[0])
    rng = np.random.default_rng(0)
    compared = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            mine = None  # a finished seat's step
            if not (term or trunc):
                net.obs[0] = obs["observation"]
                mine = net_choice(net, obs["action_mask"])
                assert mine == network.act(obs, rng)
                compared += int(obs["action_mask"].sum() > 1)
            env.step(mine)
    assert compared > 40
    search = agents.load("search:algo=ismcts:rollout=zoo:strong-4p:others=heuristic:ms=0:sims=16:seed=3", config)
    game = play_game(env, [search] + [HeuristicAgent(config)] * 3, None, np.random.default_rng(0), seed=2)
    assert game.is_over and search.last_search["simulations"] == 16
    assert agents.load("search:algo=ismcts:rollout=zoo:strong-4p:ms=0:sims=4", config)._net.every_seat
    headed = ActorCritic.for_rules(config, hidden=(16, 16), action_head=4)
    save_checkpoint(tmp_path / "headed.pt", model_payload(headed, config, 0, {}))
    with pytest.raises(SearchSpecError, match="algo=pimc"):
        agents.load(f"search:algo=ismcts:rollout={tmp_path / 'headed.pt'}:ms=0:sims=4", config)


def _tree_nodes(spec: str) -> tuple[set[int], int]:
    """The seats of every node the ISMCTS ``spec`` grew over one 1-round game against three
    heuristic players, and the deepest node's depth below the root."""
    config = RulesConfig(rounds=1)
    search = agents.load(spec, config)
    players: set[int] = set()
    deepest = [0]
    original = search._search_ismcts

    def spy(*args):
        out = original(*args)
        tree, used = search._tree, int(search._tree.meta[0])
        players.update(tree.player[1:used].tolist())
        for node in range(1, used):
            depth, up = 0, node
            while up > 0:
                up, depth = int(tree.parent[up]), depth + 1
            deepest[0] = max(deepest[0], depth)
        return out

    search._search_ismcts = spy
    game = play_game(raw_env(config=config), [search] + [HeuristicAgent(config)] * 3, None, np.random.default_rng(0),
                     seed=4)
    assert game.is_over
    return players, deepest[0]


@pytest.mark.parametrize("rollout", ["heuristic", "zoo:strong-4p:others=heuristic", "zoo:strong-4p"])
def test_ismcts_with_tree_own_keeps_nodes_for_the_searchers_moves_alone(rollout):
    """``tree=own``: every node of the tree is a move of the searcher's seat (the opponents' moves
    between are the rollout's model of them), where ``tree=all`` has nodes of the other seats; both
    play whole games. ``depth`` caps the nodes on a path."""
    own, own_depth = _tree_nodes(f"search:algo=ismcts:tree=own:rollout={rollout}:ms=0:sims=64:seed=3")
    every, _ = _tree_nodes(f"search:algo=ismcts:tree=all:rollout={rollout}:ms=0:sims=64:seed=3")
    assert own == {0} and len(every) > 1, (own, every)
    assert own_depth > 1
    assert _tree_nodes(f"search:algo=ismcts:tree=own:depth=1:rollout={rollout}:ms=0:sims=64:seed=3") == ({0}, 1)
    assert _tree_nodes(f"search:algo=ismcts:depth=2:rollout={rollout}:ms=0:sims=64:seed=3")[1] == 2


def test_ismcts_playing_every_root_move_in_each_world_to_depth_one_is_pimc():
    """``root=every:depth=1``: each world plays every legal root move and rolls it out, which is
    PIMC: on the same seed the two give every action the same mean value at each decision."""
    config = RulesConfig(rounds=1)
    env = raw_env(config=config)
    pimc = agents.load("search:ms=0:sims=24:seed=5", config)
    tree = agents.load("search:algo=ismcts:root=every:depth=1:ms=0:sims=24:seed=5", config)
    deeper = agents.load("search:algo=ismcts:root=every:tree=own:ms=0:sims=24:seed=5", config)
    heuristic, rng = HeuristicAgent(config), np.random.default_rng(0)
    compared = 0
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
            elif agent == env.possible_agents[0] and obs["action_mask"].sum() > 1:
                action = pimc.act(obs, np.random.default_rng(1))
                assert tree.act(obs, np.random.default_rng(1)) == action
                np.testing.assert_allclose(tree.last_search["scores"], pimc.last_search["scores"])
                deeper.act(obs, np.random.default_rng(1))
                assert deeper.last_search["simulations"] == 24
                compared += 1
                env.step(action)
            else:
                env.step(heuristic.act(obs, rng))
    assert compared >= 5
