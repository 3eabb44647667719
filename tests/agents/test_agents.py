"""Agents: baselines stay legal, specs load, checkpoints round-trip and fail clearly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from agents import AgentSpecError, GreedyAgent, HeuristicAgent, RandomAgent, load
from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.torch_policy import ActorCritic, TorchAgent, observation_scale
from cf_env import ObservationEncoder, RulesConfig, raw_env
from tests.agents.checks import Checked
from training.evaluate import play, play_game

CONFIGS = [RulesConfig(), RulesConfig(num_players=2, max_pip=6, rounds=3),
           RulesConfig(num_players=6, max_pip=12, center_arms=6, draw_rule="until_playable", rounds=2),
           RulesConfig(num_players=3, max_pip=3, hand_size=2, center_arms=3)]


@pytest.mark.parametrize("config", CONFIGS)
def test_baselines_only_choose_legal_actions(config):
    env = raw_env(config=config)  # raw_env raises on any illegal action
    rng = np.random.default_rng(0)
    lineups = [[GreedyAgent(config)] * config.num_players, [HeuristicAgent(config)] * config.num_players,
               [HeuristicAgent(config), GreedyAgent(config)] + [RandomAgent(config)] * (config.num_players - 2)]
    for k in range(12):
        seats = [Checked(agent) for agent in lineups[k % 3]]
        game = play_game(env, seats, None, rng, seed=k)
        assert len(game.round_scores) == config.rounds  # every round played out and scored
        assert all(seat.decisions > 0 for seat in seats) or config.hand_size < 3


@pytest.mark.parametrize("config", CONFIGS)
def test_play_on_the_compiled_core_and_play_game_on_the_engine_agree(config):
    env = raw_env(config=config)
    lineup = [HeuristicAgent(config), GreedyAgent(config)] + [RandomAgent(config)] * (config.num_players - 2)
    for k in range(4):
        clocks = np.zeros((2, config.num_players, 4))
        game = play_game(env, lineup, None, np.random.default_rng(k), seed=k, clock=clocks[0])
        played = play(env, lineup, None, np.random.default_rng(k), seed=k, clock=clocks[1])
        assert (played.winners, played.totals) == (game.winners, game.totals)
        assert np.array_equal(clocks[0][:, [1, 3]], clocks[1][:, [1, 3]])  # the same decisions, with a choice or not


def test_greedy_plays_the_heaviest_tile_and_never_keeps():
    config = RulesConfig()
    greedy = GreedyAgent(config)
    mask = np.zeros(102, dtype=np.int8)
    mask[[9 * 10 + 4, 4 * 10 + 9, 1 * 10 + 2, 101]] = 1  # 9>4, 4>9, 1>2, pass
    obs = {"observation": np.zeros(ObservationEncoder(config).size, np.float32), "action_mask": mask}
    assert greedy.act(obs, np.random.default_rng()) in (94, 49)
    mask[:] = 0
    mask[[0, 101]] = 1  # the double blank (worth 50) or keep it
    assert greedy.act(obs, np.random.default_rng()) == 0


def test_heuristic_beats_greedy_in_a_short_match():
    from training.evaluate import evaluate

    config = RulesConfig(rounds=3)
    report = evaluate(["heuristic", "greedy", "greedy", "greedy"], config, deal_sets=30, seed=3, progress=False)
    assert report.results[0].spec == "heuristic"
    assert report.results[0].win_rate > 0.25  # parity is 0.25; measured ~0.39 over 2000 full games


def _reference_heuristic_scores(agent: HeuristicAgent, observation: dict) -> tuple[np.ndarray, np.ndarray]:
    """The heuristic's scoring written in plain numpy (the compiled kernel must agree with it)."""
    legal = np.flatnonzero(observation["action_mask"])
    plays = legal[legal < agent.draw]
    view = agent.encoder.decode(observation["observation"].astype(np.float64))
    hand = view["hand"].astype(bool)
    held = agent.tile_values[hand].sum(axis=0)
    opp_lack, next_lack = view["unmatched"].sum(axis=0), view["unmatched"][0]
    pend_count = int(view["pending_count"][0])
    pend_value = int(np.argmax(view["pending_value"])) if pend_count else -1
    w, out, hand_idx = agent.w, np.empty(len(plays)), np.flatnonzero(hand)
    for i, a in enumerate(plays):
        m, x, tile = agent.match[a], agent.expose[a], agent.action_tile[a]
        rest = held - agent.tile_values[tile]
        score = w["pips"] * agent.cost[a]
        open_after = np.zeros(agent.k, dtype=bool)
        if m == x:
            score += w["double"] + w["toe_follow"] * min(rest[x], 3) + w["opp_blocked"] * opp_lack[x]
            open_after[x] = True
        else:
            score += w["follow"] * min(rest[x], 2) + w["blocked_expose"] * opp_lack[x] + w["next_blocked"] * next_lack[x]
            if pend_count > 1:
                open_after[pend_value] = True
            else:
                after = view["open_ends"].copy()
                after[m] -= pend_count == 0
                after[x] += 1
                open_after = after > 0
        others = hand_idx[hand_idx != tile]
        score += w["mobility"] * float((agent.tile_values[others][:, open_after].sum(axis=1) > 0).sum())
        score -= w["scarcity"] * (rest[m] + rest[x])
        out[i] = score
    return plays, out


@pytest.mark.parametrize("config", CONFIGS[:3])
def test_heuristic_kernel_matches_the_reference_and_batches(config):
    weights = dict(zip(HeuristicAgent.DEFAULT_WEIGHTS, np.random.default_rng(5).uniform(0, 3, 9).tolist()))
    agents_ = [HeuristicAgent(config), HeuristicAgent(config, weights)]
    env, rng = raw_env(config=config), np.random.default_rng(1)
    obs_rows, mask_rows, chosen = [], [], []
    for seed in range(6):
        env.reset(seed=seed)
        while not env.game_over:
            o = env.observe(env.agent_selection)
            for agent in agents_:
                plays, scores = agent.scores(o)
                ref_plays, ref_scores = _reference_heuristic_scores(agent, o)
                assert plays.tolist() == ref_plays.tolist()
                np.testing.assert_allclose(scores, ref_scores, rtol=1e-9)
            obs_rows.append(o["observation"])
            mask_rows.append(o["action_mask"])
            chosen.append(agents_[0].act(o, rng))
            legal = np.flatnonzero(o["action_mask"])  # wander off the heuristic's path now and then
            env.step(chosen[-1] if rng.random() < 0.7 else int(rng.choice(legal)))
    batch = agents_[0].act_batch(np.stack(obs_rows), np.stack(mask_rows), rng)
    assert batch.tolist() == chosen
    with pytest.raises(ValueError, match="all zeros"):
        agents_[0].act_batch(np.stack(obs_rows[:2]), np.zeros((2, config.num_actions), np.int8), rng)


def test_load_specs_and_errors():
    config = RulesConfig(num_players=3)
    assert isinstance(load("random", config), RandomAgent)
    assert isinstance(load("greedy", config), GreedyAgent)
    assert load("heuristic", config).config == config
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        load("minimax", config)
    with pytest.raises(AgentSpecError, match="no shipped checkpoint"):
        load("zoo:nope", config)
    with pytest.raises(ValueError, match="unknown heuristic weights"):
        HeuristicAgent(config, {"speed": 1.0})


def _checkpoint(tmp_path, config: RulesConfig, seed: int = 0):
    torch.manual_seed(seed)
    model = ActorCritic(ObservationEncoder(config).size, config.num_actions, (32, 32), observation_scale(config))
    path = tmp_path / "policy.pt"
    save_checkpoint(path, {"model": model.state_dict(), "model_kwargs": model.kwargs(), "rules": config.to_dict(),
                           "num_actions": config.num_actions, "train_step": 7, "train_config": {}})
    return path, model


def test_checkpoint_save_load_identical_actions(tmp_path):
    config = RulesConfig(num_players=3, max_pip=6, rounds=2)
    path, model = _checkpoint(tmp_path, config)
    original = TorchAgent(model, config, deterministic=False)
    loaded = load(str(path), config)
    loaded.deterministic = False
    assert isinstance(loaded, TorchAgent)
    env = raw_env(config=config)
    a = play_game(env, [original] * 3, None, np.random.default_rng(5), seed=11).to_record()
    b = play_game(env, [loaded] * 3, None, np.random.default_rng(5), seed=11).to_record()
    assert a == b
    data = load_checkpoint(path)
    assert data["train_step"] == 7 and data["rules"] == config.to_dict() and data["package_version"]


def test_corrupt_and_mismatched_checkpoints(tmp_path):
    config = RulesConfig(num_players=3, max_pip=6)
    path, _ = _checkpoint(tmp_path, config)
    with pytest.raises(CheckpointError, match="num_players=3"):
        load(str(path), RulesConfig(num_players=2, max_pip=6))
    broken = tmp_path / "broken.pt"
    broken.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load(str(broken), config)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not a chickenfoot-rl checkpoint"):
        load(str(foreign), config)
    old = tmp_path / "old.pt"
    data = load_checkpoint(path)
    data["observation_version"] = 0
    torch.save(data, old)
    with pytest.raises(CheckpointError, match="observation layout v0"):
        load(str(old), config)
    # other rule options may differ: the network still reads the observation
    assert load(str(path), RulesConfig(num_players=3, max_pip=6, rounds=2, center_arms=3)).config.center_arms == 3


def test_masked_logits_use_the_dtype_minimum():
    config = RulesConfig()
    model = ActorCritic(ObservationEncoder(config).size, config.num_actions, (16,))
    obs = torch.zeros(2, ObservationEncoder(config).size)
    mask = torch.zeros(2, config.num_actions, dtype=torch.bool)
    mask[:, 5] = True
    logits, value = model(obs, mask)
    assert (logits[:, :5] == torch.finfo(logits.dtype).min).all() and value.shape == (2,)
    assert torch.softmax(logits, -1)[:, 5].allclose(torch.ones(2))


def test_zoo_listing():
    shipped = sorted(p.stem for p in agents.ZOO_DIR.glob("*.pt"))
    assert shipped and agents.zoo_names() == shipped
    assert {"strong-2p", "strong-4p"} <= set(agents.zoo_names())
    assert agents.zoo_path("strong-4p") == agents.ZOO_DIR / "strong-4p.pt"
    with pytest.raises(agents.AgentSpecError, match="available: .*strong-4p"):
        agents.zoo_path("nope")


def test_batched_acting_matches_single_acting():
    from agents import act_batch
    from cf_env.vector import VectorGame, random_legal_actions

    config = RulesConfig()
    vg = VectorGame(config, num_games=64, seed=0)
    obs, mask, _ = vg.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, mask, *_ = vg.step(random_legal_actions(mask, rng))
    torch.manual_seed(0)
    model = ActorCritic(obs.shape[1], config.num_actions, (32,), observation_scale(config))
    for agent in (GreedyAgent(config), HeuristicAgent(config), TorchAgent(model, config)):
        batch = act_batch(agent, obs, mask, rng)
        single = [agent.act({"observation": o, "action_mask": m}, rng) for o, m in zip(obs, mask)]
        assert batch.tolist() == single
    rand = act_batch(RandomAgent(config), obs, mask, rng)
    assert all(mask[i, a] for i, a in enumerate(rand))


def test_shipped_checkpoints_load_and_play():
    assert {"strong-4p", "strong-2p"} <= set(agents.zoo_names())
    for name, players in (("strong-4p", 4), ("strong-2p", 2)):
        config = RulesConfig(num_players=players, rounds=1)
        agent = load(f"zoo:{name}", config)
        env = raw_env(config=config)
        network = Checked(agent)
        game = play_game(env, [network] + [GreedyAgent(config)] * (players - 1), None, np.random.default_rng(0), seed=1)
        assert len(game.round_scores) == 1 and network.choices > 0
    # small enough to ship in the wheel and keep in git: under 1 MB each, the 2-player 1024x1024
    # network (float16) 3 MB; every file under the 5 MB a tracked file may take
    sizes = {path.name: path.stat().st_size for path in agents.ZOO_DIR.glob("*.pt")}
    assert sizes and all(size < 5_000_000 for size in sizes.values()), sizes
    assert sum(sizes.values()) < 8_000_000, sizes
    with pytest.raises(CheckpointError, match="num_players=4"):
        load("zoo:strong-4p", RulesConfig(num_players=2))


def test_a_checkpoint_spec_with_a_temperature_samples_its_policy(tmp_path):
    from agents.spec import parse_spec

    assert parse_spec("zoo:strong-2p:temperature=1") == ("checkpoint", "zoo:strong-2p", {"temperature": "1"})
    assert parse_spec("runs/a:b/x.pt:temperature=0.5") == ("checkpoint", "runs/a:b/x.pt", {"temperature": "0.5"})
    assert parse_spec("runs/x.pt") == ("checkpoint", "runs/x.pt", {})
    assert parse_spec("my_bots:Bot:depth=2").kind == "python"
    config = RulesConfig(num_players=2, rounds=1)
    plain, hot = load("zoo:strong-2p", config), load("zoo:strong-2p:temperature=2", config)
    assert plain.deterministic and not hot.deterministic and hot.temperature == 2.0
    assert agents.spec_rules("zoo:strong-2p:temperature=2") == agents.spec_rules("zoo:strong-2p")
    env = raw_env(config=config)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    legal = np.flatnonzero(observation["action_mask"])
    base = plain.probabilities(observation)[legal].astype(np.float64)
    expected = base ** 0.5 / (base ** 0.5).sum()  # softmax(logits / 2) over the legal actions
    assert np.allclose(hot.action_probabilities(observation)[legal], expected, atol=1e-5)
    assert hot.action_probabilities(observation)[legal].max() < plain.action_probabilities(observation).max() == 1
    rng = np.random.default_rng(0)
    picks = {hot.act(observation, rng) for _ in range(200)}
    assert picks <= set(legal.tolist()) and (len(picks) > 1 or len(legal) == 1)
    for bad, words in (("zoo:strong-2p:temp=1", "one parameter, temperature"),
                       ("zoo:strong-2p:temperature=0", "positive number"),
                       ("zoo:strong-2p:temperature=hot", "positive number"),
                       ("zoo:strong-2p:temperature=nan", "positive number")):
        with pytest.raises(AgentSpecError, match=words):
            load(bad, config)


def test_a_named_spec_reads_as_the_search_it_names(tmp_path, monkeypatch):
    import agents.spec
    from agents.search import SearchAgent, parse_search_spec

    monkeypatch.setattr(agents.spec, "ZOO_DIR", tmp_path)
    (tmp_path / "quick.spec").write_text("# a quick search\n\nsearch:ms=0:sims=8:rollout=greedy\n")
    assert agents.spec.named_specs() == ["quick"]
    parsed = agents.parse_spec("zoo:quick")
    assert parsed.kind == "search" and parsed.params == {"ms": "0", "sims": "8", "rollout": "greedy"}
    assert agents.parse_spec("zoo:quick:sims=4:value=win").params == {"ms": "0", "sims": "4", "rollout": "greedy",
                                                                 "value": "win"}  # pairs after the name override
    assert parse_search_spec("zoo:quick", player=True).sims == 8
    agent = load("zoo:quick", RulesConfig(rounds=1))
    assert isinstance(agent, SearchAgent) and agent.name == "zoo:quick" and agent.sims == 8
    assert agents.parse_spec("zoo:strong-4p").kind == "checkpoint"  # not a named spec: a checkpoint's name
    (tmp_path / "broken.spec").write_text("search:ms=0:sims=8\nsearch:ms=0:sims=16\n")
    with pytest.raises(agents.AgentSpecError, match="one search spec line"):
        agents.parse_spec("zoo:broken")
    (tmp_path / "broken.spec").write_text("heuristic\n")
    with pytest.raises(agents.AgentSpecError, match="one search spec line"):
        agents.parse_spec("zoo:broken")


def test_the_shipped_named_specs_are_valid_players():
    from agents.search import parse_search_spec

    names = agents.named_specs()
    assert "search-4p-vs-heuristic" in names
    assert not set(names) & set(agents.zoo_names())  # a name is a checkpoint's or a spec's
    for name in names:
        assert (agents.ZOO_DIR / f"{name}.spec").read_text().startswith("#")  # it says what it is
        settings = parse_search_spec(f"zoo:{name}", player=True)
        rules = agents.spec_rules(settings.rollout) or RulesConfig()
        config = RulesConfig(**{**rules.to_dict(), "rounds": 1})
        agent = load(f"zoo:{name}", config)
        env = raw_env(config=config, history=agent.needs_history)
        searcher = Checked(agent)
        game = play_game(env, [searcher] + [GreedyAgent(config)] * (config.num_players - 1), None,
                         np.random.default_rng(0), seed=2)
        assert len(game.round_scores) == 1 and searcher.choices > 0


def test_compiled_policy_codes_are_the_search_rollout_names():
    from agents.baselines import COMPILED_POLICIES, GreedyAgent, HeuristicAgent, RandomAgent
    from agents.search.spec import ROLLOUTS

    assert ROLLOUTS == COMPILED_POLICIES
    assert [COMPILED_POLICIES[a.kind] for a in (RandomAgent, GreedyAgent, HeuristicAgent)] == list(COMPILED_POLICIES)
