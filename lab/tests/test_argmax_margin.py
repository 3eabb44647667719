"""The argmax margin (lab/argmax_margin.py): top-two logit gaps and the argmax changes noise makes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.torch_policy import ActorCritic
from cf_env import RulesConfig
from lab.argmax_margin import argmax_margin
from lab.oracle_regret import collect_positions

TINY = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=2)


def test_gaps_are_read_in_both_units_and_more_noise_changes_more_choices():
    torch.manual_seed(0)
    model = ActorCritic.for_rules(TINY, (16, 16)).eval()
    found = collect_positions(TINY, "heuristic", "random", 4, seed=3)
    obs = np.stack([p["observation"] for p in found]).astype(np.float32)
    mask = np.stack([p["action_mask"] for p in found]).astype(bool)
    report = argmax_margin(model, obs, mask, temperature=4.0, noise=[0.0, 0.001, 100.0], draws=3, seed=0)
    assert report["positions"] == len(found) > 5
    gaps = list(report["gap_quantiles"].values())
    assert gaps == sorted(gaps) and gaps[0] >= 0
    assert report["gap_quantiles_divided"]["0.5"] == pytest.approx(report["gap_quantiles"]["0.5"] / 4, abs=1e-4)
    changed = report["argmax_changed_by_noise"]
    assert changed["0.0"] == 0.0 and changed["0.001"] <= changed["100.0"]
    assert changed["100.0"] > 0.3  # noise far above every gap: the argmax is nearly a uniform draw
    single = mask.copy()
    single[0] = False
    single[0, np.flatnonzero(mask[0])[0]] = True
    with pytest.raises(ValueError, match="two legal actions"):
        argmax_margin(model, obs, single, 1.0, [0.1], 1, 0)


def test_a_noiseless_noisy_network_plays_the_networks_argmax_and_noise_changes_some_choices():
    import agents
    from cf_env import raw_env
    from lab.argmax_margin import NoisyNetwork

    config = RulesConfig()
    plain, noisy = agents.load("zoo:strong-4p", config), NoisyNetwork(config, sigma=0.0)
    loud = agents.load("lab.argmax_margin:NoisyNetwork:sigma=30.0", config)
    env = raw_env(config=config)
    env.reset(seed=5)
    rng, changed = np.random.default_rng(0), 0
    for _ in range(60):
        observation = env.observe(env.agent_selection)
        assert noisy.act(observation, rng) == plain.act(observation, rng)
        action = loud.act(observation, rng)
        assert observation["action_mask"][action]
        changed += action != plain.act(observation, rng)
        env.step(plain.act(observation, rng))
    assert changed > 0
    with pytest.raises(ValueError, match="sigma"):
        NoisyNetwork(config, sigma=-1.0)


def test_moved_counts_the_changed_choices_by_kind_and_weight():
    from lab.argmax_margin import moved

    torch.manual_seed(0)
    first, second = ActorCritic.for_rules(TINY, (16, 16)).eval(), ActorCritic.for_rules(TINY, (16, 16)).eval()
    found = collect_positions(TINY, "heuristic", "random", 4, seed=3)
    obs = np.stack([p["observation"] for p in found]).astype(np.float32)
    mask = np.stack([p["action_mask"] for p in found]).astype(bool)
    same = moved(first, first, obs, mask, TINY)
    assert same["changed"] == 0.0 and same["kinds"] == {} and same["play_to_play"]["count"] == 0
    other = moved(first, second, obs, mask, TINY)
    assert other["changed"] > 0 and sum(other["kinds"].values()) == round(other["changed"] * len(found))
    assert other["play_to_play"]["count"] == other["kinds"].get("play->play", 0)
