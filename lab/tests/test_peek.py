import numpy as np
import pytest

from agents.search.worlds import deal_hidden, new_scratch, read_observation
from cf_env import ConfigError, RulesConfig
from cf_env.observation import ObservationEncoder
from cf_env.vector import copy_game, make_consts, new_state
from lab import oracle_regret, peek


def _worlds(position, config, shown, count=40):
    encoder = ObservationEncoder(config)
    state = new_state(make_consts(config), 1)
    obs = np.asarray(position["observation"], np.float32)
    world = read_observation(obs, np.asarray(position["action_mask"]), encoder, state, "constraints")
    world = peek.shown_world(world, position["hands"], shown)
    scratch = new_scratch(config.num_players, config.num_tiles, encoder.size, config.max_pip + 1)
    scratch.rs[0] = np.uint64(7)
    work = new_state(make_consts(config), 1)
    hands = []
    for _ in range(count):
        copy_game(state, 0, work, 0)
        deal_hidden(work, 0, world, scratch)
        hands.append(work.hand[0] > 0)
    return world, np.array(hands)


def test_shown_opponents_get_their_true_hands_and_the_others_never_hold_them():
    config = RulesConfig(rounds=1)
    position = oracle_regret.collect_positions(config, "heuristic", "heuristic", games=1, seed=3)[0]
    true = position["hands"] != 0
    _, none = _worlds(position, config, 0)
    _, one = _worlds(position, config, 1)
    _, every = _worlds(position, config, 3)
    assert not (none[:, 1] == true[0]).all()  # unshown, the left opponent's hand varies
    assert (one[:, 1] == true[0]).all()  # shown, it is its own hand in every world
    assert not (one[:, 2:] & true[0]).any()  # and no other opponent holds any of it
    assert not (one[:, 2] == true[1]).all()  # the next opponent is still sampled
    assert (every[:, 1:] == true).all()  # every hand shown: the oracle's worlds
    with pytest.raises(ConfigError, match="shown"):
        _worlds(position, config, 4)


def test_the_command_plays_every_shown_count_and_resumes_from_its_file(tmp_path, capsys):
    save = tmp_path / "peek.jsonl"
    argv = ["search:ms=0:sims=4:infer=constraints", "--shown", "0", "3", "--rounds", "1", "--deal-sets", "2",
            "--seed", "5", "--save", str(save)]
    report = peek.main(argv)
    lines = save.read_text().splitlines()
    assert len(lines) == 4 and report["deal_sets"] == 2 and report["games"] == 8
    assert set(report["shown"]) == {"0", "3"} and "minus_first" in report["shown"]["3"]
    for entry in report["shown"].values():
        assert 0 <= entry["win_rate"] <= 100 and entry["ms_per_choice"] > 0
    assert peek.main(argv) == report  # resumed: nothing left to play, the same figures
    assert len(save.read_text().splitlines()) == 4
    with pytest.raises(ConfigError, match="search agent"):
        peek.main(["heuristic", "--shown", "1", "--rounds", "1", "--deal-sets", "2"])
    with pytest.raises(ConfigError, match="--shown"):
        peek.main(["search:ms=0:sims=4", "--shown", "4"])
