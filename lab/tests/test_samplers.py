"""The lab's world samplers (lab/samplers.py) in the search: the learned belief (its spec, its
file, what it does to the worlds), the oracle, the kept tile; and SPARTA's rule (lab/sparta.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import agents
from agents.baselines import HeuristicAgent, RandomAgent
from agents.search import SearchAgent
from agents.search.spec import SearchSpecError, parse_search_spec
from agents.search.worlds import World, sample_worlds
from cf_env import ChickenFootError, ConfigError, Game, GameEncoder, RulesConfig, action_table, raw_env
from lab.belief_net import BeliefNet, load_belief
from lab.samplers import Oracle
from tests.scripted import random_positions
from training import distill, labels

CONFIG = RulesConfig(rounds=2)
TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)
TEACHER = "search:ms=0:sims=32:race=2"


@pytest.fixture(scope="module")
def belief_file(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("belief") / "belief.pt"
    torch.save(BeliefNet(CONFIG, (8,)).payload(), path)
    return path


BELIEF = "lab.samplers:Belief"


def _belief(sharp: np.ndarray):
    """A sampler that weighs worlds by the fixed log-probabilities ``sharp`` (as Belief does with
    its network's)."""
    def weigh(world: World, _observation: dict) -> World:
        return world._replace(belief=np.ascontiguousarray(sharp, dtype=np.float64))
    return weigh


def test_the_belief_sampler_and_its_file(belief_file):
    """The belief's file is an option of its sampler: a spec without it, or with a file that is
    not there or of other rules, is refused when the agent is made; a search option name that
    is not a search parameter without a sampler is refused when the spec is read."""
    spec = f"search:ms=0:sims=2:infer={BELIEF}:belief={belief_file}"
    assert parse_search_spec(spec).options == (("belief", str(belief_file)),)
    assert parse_search_spec(parse_search_spec(spec).spec) == parse_search_spec(spec)  # the spec round-trips
    with pytest.raises(SearchSpecError, match="unknown search parameter 'belief'"):
        parse_search_spec(f"search:belief={belief_file}")
    with pytest.raises(SearchSpecError, match="Belief.*failed"):
        agents.load(f"search:ms=0:sims=2:infer={BELIEF}", CONFIG)
    with pytest.raises(ConfigError, match="no belief network at"):
        agents.load(f"search:ms=0:sims=2:infer={BELIEF}:belief=missing.pt", CONFIG)
    with pytest.raises(ConfigError, match="was trained for"):
        load_belief(belief_file, RulesConfig(num_players=3))
    agent = agents.load(spec, CONFIG)
    assert not agent.needs_history and not agent.needs_hands and agent.reads == "constraints"
    assert agents.load(spec + ":policy=True", CONFIG).needs_history


def test_the_belief_reads_the_observation_as_the_sampler_wants_it(belief_file):
    net = load_belief(belief_file, CONFIG)
    env = raw_env(config=CONFIG)
    env.reset(seed=0)
    rows = net.seat_rows(env.observe(env.agent_selection)["observation"])
    n, t = CONFIG.num_players, CONFIG.num_tiles
    assert rows.shape == (n + 1, t) and rows.dtype == np.float64
    assert not rows[0].any()
    np.testing.assert_allclose(np.exp(rows[1:]).sum(0), 1.0, rtol=1e-5)  # each tile lies somewhere
    assert np.exp(rows[n]).max() > 0  # the boneyard holds tiles at the start
    closed = 0
    for _ in range(120):  # the numpy forward pass is the network's
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
        if env.game_over:
            break
        obs = env.observe(env.agent_selection)["observation"]
        with torch.no_grad():
            direct = net(torch.as_tensor(obs)[None])[0].numpy().T
        rows, shut = net.seat_rows(obs)[1:], direct < -1e8  # an empty hand or boneyard holds nothing
        np.testing.assert_allclose(rows[~shut], direct[~shut], rtol=1e-4, atol=1e-4)
        assert (rows[shut] < -1e8).all()
        closed += shut.any()
    assert closed  # the empty boneyard was met


def test_a_sharper_belief_deals_worlds_nearer_the_truth():
    """With a belief that favours each tile's true location, the resampled worlds hold more of the
    opponents' true tiles than the constraint sampler's, and keep every hand size."""
    encoder = GameEncoder(CONFIG)
    n = CONFIG.num_players
    heuristic = HeuristicAgent(CONFIG)
    share = {"constraints": [], "belief": []}
    for seed in range(4):
        game, rng = Game(CONFIG, seed=seed), np.random.default_rng(seed)
        for _ in range(12):
            game.apply(heuristic.act({"observation": encoder.encode(game, game.current_player),
                                      "action_mask": encoder.mask(game.legal_bits)}, rng))
        seat = game.current_player
        observation = {"observation": encoder.encode(game, seat), "action_mask": encoder.mask(game.legal_bits)}
        truth = np.full((n + 1, CONFIG.num_tiles), np.log(0.1))
        for i in range(1, n):
            truth[i, [t.index for t in game.hand((seat + i) % n)]] = 0.0
        truth[n, game.boneyard_tiles()] = 0.0
        for mode in share:
            worlds = sample_worlds(observation, 16, np.random.default_rng(seed), encoder, proposals=16,
                                   sampler=_belief(truth) if mode == "belief" else None)
            for i in range(1, n):
                assert (worlds.hands[:, i].sum(1) == game.hand_sizes[(seat + i) % n]).all()
            share[mode].append(np.mean([worlds.hands[:, i][:, truth[i] == 0].sum() / worlds.hands[:, i].sum()
                                        for i in range(1, n)]))
    assert np.mean(share["belief"]) > np.mean(share["constraints"]) + 0.1, share


@pytest.mark.parametrize("policy", [False, True])
def test_a_search_with_a_belief_plays_whole_games(belief_file, policy):
    agent = agents.load(f"search:ms=0:sims=4:infer={BELIEF}:belief={belief_file}:policy={policy}", CONFIG)
    assert agent.needs_history == policy
    env = raw_env(config=CONFIG, history=agent.needs_history)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agent.act(obs, rng)
        assert obs["action_mask"][action]
        env.step(action)
    assert env.game_over


def test_belief_with_the_policy_is_the_product_of_the_belief_and_the_opponent_model():
    """A belief read with ``infer=policy`` weighs each candidate world by the belief and by the
    opponents' plays: with a belief that says nothing (all tiles equally likely everywhere) it deals
    ``policy``'s worlds, and with no opponent play to explain it deals the belief's alone, from
    the same generator."""
    encoder = GameEncoder(CONFIG)
    n, t = CONFIG.num_players, CONFIG.num_tiles
    heuristic = HeuristicAgent(CONFIG)
    env = raw_env(config=CONFIG, history=True)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    first = env.observe(env.agent_selection)  # nobody has played: nothing for the opponent model
    for _ in range(14):
        env.step(heuristic.act(env.observe(env.agent_selection), rng))
    later = env.observe(env.agent_selection)
    assert later["history"].size
    sharp = np.random.default_rng(0).normal(0.0, 2.0, (n + 1, t))
    sharp[0] = 0.0

    def deal(observation, mode, belief):
        return sample_worlds(observation, 24, np.random.default_rng(7), encoder,
                             infer="constraints" if mode == "belief" else "policy", proposals=8,
                             sampler=_belief(belief) if mode != "policy" else None)

    flat = deal(later, "both", np.zeros((n + 1, t)))
    policy = deal(later, "policy", None)
    np.testing.assert_array_equal(flat.hands, policy.hands)
    np.testing.assert_array_equal(flat.boneyards, policy.boneyards)
    mixed, belief_only = deal(first, "both", sharp), deal(first, "belief", sharp)
    np.testing.assert_array_equal(mixed.hands, belief_only.hands)
    # and with both at work the worlds differ from either alone
    assert not np.array_equal(deal(later, "both", sharp).hands, policy.hands)
    assert not np.array_equal(deal(later, "both", sharp).hands, deal(later, "belief", sharp).hands)


def test_a_belief_network_runs_no_code(tmp_path):
    """The belief's loader reads weights only: a file whose pickle would create a file is refused,
    directly and named in a spec, before anything in it runs; a real one loads."""
    class Touch:
        def __init__(self, path):
            self.path = str(path)

        def __reduce__(self):
            return (open, (self.path, "w"))

    net = BeliefNet(CONFIG, (8,))
    good = tmp_path / "belief.pt"
    torch.save(net.payload(epoch=1), good)
    assert all(torch.equal(a, b) for a, b in zip(load_belief(good, CONFIG).state_dict().values(),
                                                  net.state_dict().values()))
    marker, crafted = tmp_path / "ran", tmp_path / "crafted.pt"
    torch.save({**net.payload(), "trap": Touch(marker)}, crafted)
    with pytest.raises(ChickenFootError, match="only ever loaded without running code"):
        load_belief(crafted, CONFIG)
    with pytest.raises(ChickenFootError):
        agents.load(f"search:infer={BELIEF}:belief={crafted}:ms=0:sims=2", CONFIG)
    assert not marker.exists()


def test_oracle_worlds_deal_the_true_hands_and_only_the_boneyard_varies():
    config = RulesConfig(rounds=2)
    n, t = config.num_players, config.num_tiles
    encoder = GameEncoder(config)
    rng = np.random.default_rng(5)
    game, random_agent, checked = Game(config, seed=5), RandomAgent(config), 0
    while not game.is_over and checked < 40:
        p = game.current_player
        obs, mask = encoder.encode(game, p), encoder.mask(game.legal_bits)
        hidden = game.hidden_tiles(p).reshape(n, t)
        view = {"observation": obs, "action_mask": mask, "hands": hidden[: n - 1]}
        sampled = sample_worlds(view, 4, rng, encoder, sampler=Oracle(config))
        for hands in sampled.hands:
            np.testing.assert_array_equal(hands[1:], hidden[: n - 1] > 0)
        assert all(sorted(b.tolist()) == game.boneyard_tiles() for b in sampled.boneyards)
        if game.boneyard_size > 1:
            assert len({tuple(b) for b in sampled.boneyards}) > 1  # the order is still sampled
        if mask.sum() > 1:
            choice = (obs, mask, hidden)  # a position with a choice, for the agent below
        game.apply(random_agent.act({"observation": obs, "action_mask": mask}, rng))
        checked += 1
    # hands that do not fit the observation, or none, are refused
    with pytest.raises(ConfigError, match="teacher for label collection"):
        sample_worlds({"observation": obs, "action_mask": mask}, 1, rng, encoder, sampler=Oracle(config))
    wrong = hidden[: n - 1].copy()
    wrong[0] = hidden[n - 1]  # the boneyard as the left opponent's hand
    with pytest.raises(ConfigError, match="do not fit the observation"):
        sample_worlds({"observation": obs, "action_mask": mask, "hands": wrong}, 1, rng, encoder,
                      sampler=Oracle(config))
    with pytest.raises(ConfigError, match="flags, got shape"):
        sample_worlds({"observation": obs, "action_mask": mask, "hands": hidden}, 1, rng, encoder,
                      sampler=Oracle(config))
    oracle = agents.load("search:ms=0:sims=4:infer=lab.samplers:Oracle", config)
    assert oracle.needs_hands and not oracle.needs_history
    obs, mask, hidden = choice
    with pytest.raises(ConfigError, match="not a player"):
        oracle.act({"observation": obs, "action_mask": mask}, rng)
    assert oracle.act({"observation": obs, "action_mask": mask, "hands": hidden[: n - 1]}, rng) in np.flatnonzero(mask)
    with pytest.raises(SearchSpecError, match="true hands"):  # refused for a player before any game
        parse_search_spec("search:ms=0:sims=4:infer=lab.samplers:Oracle", player=True)


def test_a_kept_tile_breaks_the_constraints_at_its_chance():
    """With ``keep=1`` an opponent that failed to match a value and drew once since holds one tile
    of it in every world; the constraints alone never deal one."""
    encoder = GameEncoder(CONFIG)
    sl = encoder.slices
    n, k = CONFIG.num_players, CONFIG.max_pip + 1
    found = None
    for seed in range(60):  # a position where an opponent's failure allows one kept tile
        env = raw_env(config=CONFIG)
        env.reset(seed=seed)
        heuristic, rng = HeuristicAgent(CONFIG), np.random.default_rng(seed)
        for _ in range(40):
            if env.game_over:
                break
            obs = env.observe(env.agent_selection)
            o = obs["observation"]
            void = o[sl["void"]].reshape(n - 1, k) > 0
            once = void & (np.rint(o[sl["void_draws"]].reshape(n - 1, k)) == 1)
            if once.any() and obs["action_mask"].sum() > 1:
                found = (obs, np.argwhere(once)[0])
                break
            env.step(heuristic.act(obs, rng))
        if found:
            break
    assert found, "no position with a kept-tile chance"
    observation, (opponent, value) = found
    table = action_table(CONFIG.max_pip)
    lo, hi = np.asarray(table.tile_low), np.asarray(table.tile_high)
    holds = (lo == value) | (hi == value)
    with pytest.raises(ConfigError, match="probability"):
        agents.load("search:ms=0:sims=2:infer=lab.samplers:Kept:keep=2", CONFIG)
    kept = agents.load("search:ms=0:sims=2:infer=lab.samplers:Kept:keep=1", CONFIG)
    for sampler, expect in ((kept.sampler, True), (None, False)):
        worlds = sample_worlds(observation, 20, np.random.default_rng(1), encoder, sampler=sampler)
        assert (worlds.hands[:, opponent + 1][:, holds].sum(1) >= 1).all() == expect


@pytest.mark.parametrize("rollout", ["heuristic", "zoo:strong-4p"])
def test_sparta_keeps_the_blueprints_choice_unless_the_search_beats_it_by_more(rollout):
    """deviate=D (SPARTA): the rollout policy's own choice stands unless the search's best action
    has a mean value more than D above it; a huge D plays the blueprint, D = 0.05 deviates only so."""
    config = RulesConfig()
    blueprint = agents.load(rollout, config)
    encoder = GameEncoder(config)
    deviated = 0
    # made once: each acts once a position, so their seeded generators deal the same worlds throughout
    search = agents.load(f"lab.sparta:Sparta:deviate=0.05:ms=0:sims=6:rollout={rollout}:seed=1", config)
    never = agents.load(f"lab.sparta:Sparta:deviate=1e9:ms=0:sims=6:rollout={rollout}:seed=1", config)
    free = agents.load(f"search:ms=0:sims=6:rollout={rollout}:seed=1", config)
    assert isinstance(search, SearchAgent) and search.choices_overrule_values
    for game, _seat in random_positions(config, seed=5, count=30):
        obs = encoder.observe(game)
        if np.count_nonzero(obs["action_mask"]) < 2:
            continue
        own = blueprint.act(obs, np.random.default_rng(0))
        assert never.act(obs, np.random.default_rng(0)) == own
        chosen, best = search.act(obs, np.random.default_rng(0)), free.act(obs, np.random.default_rng(0))
        scores, actions = search.last_search["scores"], list(search.last_search["actions"])
        gain = scores[actions.index(best)] - scores[actions.index(own)]
        assert chosen == (best if gain > 0.05 else own)
        deviated += chosen != own
    assert deviated  # the search does overrule it where it is sure
    with pytest.raises(SearchSpecError, match="visit counts"):
        agents.load("lab.sparta:Sparta:deviate=0.1:algo=ismcts:ms=0:sims=4", config)
    with pytest.raises(SearchSpecError, match="deviate must be"):
        agents.load("lab.sparta:Sparta:deviate=-1:ms=0:sims=4", config)


def test_soft_targets_of_an_overruling_teacher_are_warned_about(tmp_path):
    """A SPARTA teacher (``lab.sparta:Sparta``) plays its rollout policy's choice unless its search beats it by the
    margin, while its ``q`` are the search's means: reading its labels at a temperature above 0
    warns (those targets are not its choices); at 0, or without targets, nothing is said."""
    settings = labels.collection_settings("heuristic", "lab.sparta:Sparta:deviate=0.5:" + TEACHER[7:], ["random"], TINY,
                                          seed=7,
                                          shard_games=1, slots=1)
    labels.collect_shards(tmp_path / "d", settings, 2, progress=False)
    with pytest.warns(UserWarning, match="Sparta.*temperature 0.02 learn the means"):
        distill.split_labels(tmp_path / "d", holdout=0.5, temperature=0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        distill.split_labels(tmp_path / "d", holdout=0.5, temperature=0.0)
        distill.split_labels(tmp_path / "d", holdout=0.5)
        labels.collect_shards(tmp_path / "p", {**settings, "teacher": TEACHER}, 2, progress=False)
        distill.split_labels(tmp_path / "p", holdout=0.5, temperature=0.02)  # a search: q are what it chose by
