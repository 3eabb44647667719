"""RulesConfig validation, the action-id contract, tiles, moves and scripted-deal validation."""

from __future__ import annotations

import pytest

from cf_env import Game
from cf_env.engine import (
    ActionParseError,
    ConfigError,
    DealError,
    Move,
    RulesConfig,
    Tile,
    action_table,
    action_to_string,
    string_to_action,
)
from tests.scripted import deal


def test_defaults_are_the_standard_game():
    c = RulesConfig()
    assert (c.max_pip, c.num_players, c.hand_size, c.rounds, c.center_arms, c.draw_rule,
            c.double_blank_points) == (9, 4, 7, 10, 4, "one", 50)
    assert c.num_tiles == 55 and c.num_actions == 102
    assert RulesConfig.from_dict(c.to_dict()) == c


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_pip": 0}, "max_pip"),
        ({"max_pip": 19}, "max_pip"),
        ({"max_pip": 9.0}, "must be an int"),
        ({"num_players": 1}, "num_players"),
        ({"hand_size": 0}, "hand_size"),
        ({"num_players": 8, "hand_size": 7}, "does not fit"),
        ({"rounds": 0}, "rounds"),
        ({"rounds": 11}, "rounds"),
        ({"center_arms": 0}, "center_arms"),
        ({"center_arms": 9}, "center_arms"),
        ({"draw_rule": "all"}, "draw_rule"),
        ({"double_blank_points": -1}, "double_blank_points"),
        ({"num_players": True}, "must be an int"),
    ],
)
def test_config_errors_say_what_to_change(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        RulesConfig(**kwargs)


def test_config_from_dict_rejects_unknown_keys():
    with pytest.raises(ConfigError, match="unknown rules config keys"):
        RulesConfig.from_dict({"max_pips": 9})


def test_deal_must_fit_R2():
    RulesConfig(max_pip=12, num_players=8, hand_size=11)  # 88 < 91
    with pytest.raises(ConfigError):
        RulesConfig(max_pip=12, num_players=8, hand_size=12)


@pytest.mark.parametrize("max_pip", [1, 3, 9, 18])
def test_action_id_contract(max_pip):
    k = max_pip + 1
    table = action_table(max_pip)
    assert table.num_actions == k * k + 2
    assert table.draw == k * k and table.pass_ == k * k + 1
    for m in range(k):
        for x in range(k):
            a = m * k + x
            assert action_to_string(a, max_pip) == f"{m}>{x}"
            assert string_to_action(f"{m}>{x}", max_pip) == a
            assert Move.from_action(a, max_pip) == Move.play(m, x)
            assert table.action_tile[a] == Tile.of(m, x).index
    assert action_to_string(k * k, max_pip) == "draw"
    assert action_to_string(k * k + 1, max_pip) == "pass"
    assert string_to_action(" PASS ", max_pip) == k * k + 1
    assert action_table(max_pip) is table  # built once


def test_tile_indices_cover_each_set_exactly():
    for n in (1, 9, 18):
        k = (n + 1) * (n + 2) // 2
        tiles = {Tile.from_index(i) for i in range(k)}
        assert len(tiles) == k and max(t.high for t in tiles) == n
        assert all(Tile.from_index(t.index) == t for t in tiles)


@pytest.mark.parametrize("text", ["", "3", "3>", "a>b", "3-5", "draws", "3>5>1"])
def test_move_parse_errors(text):
    with pytest.raises(ActionParseError, match="cannot parse"):
        Move.parse(text)


def test_tile_value_type():
    t = Tile.parse("[5|3]")
    assert t == Tile(3, 5) and str(t) == "3-5" and t.pips == 8 and not t.is_double
    assert hash(t) == hash(Tile.of(5, 3))
    with pytest.raises(AttributeError):
        t.low = 1  # frozen
    with pytest.raises(ActionParseError):
        Tile(5, 3)
    with pytest.raises(ActionParseError):
        Tile.parse("x-y")


def test_action_out_of_range_for_set():
    with pytest.raises(ActionParseError):
        action_to_string(102, 9)
    with pytest.raises(ActionParseError, match="above max_pip"):
        string_to_action("9>3", 3)


def test_scripted_deal_validation():
    config = RulesConfig(max_pip=3, num_players=2, hand_size=2, rounds=1, center_arms=1)
    good = deal(config, [["0-0", "0-1"], ["1-1", "3-3"]])
    Game(config, deals=[good])
    bad_dup = {"hands": good["hands"], "boneyard": good["boneyard"][:-1] + [[0, 0]]}
    with pytest.raises(DealError, match="exactly once"):
        Game(config, deals=[bad_dup])
    with pytest.raises(DealError, match="hand_size"):
        Game(config, deals=[{"hands": [[[0, 0]], [[1, 1], [3, 3]]], "boneyard": good["boneyard"]}])
    with pytest.raises(DealError, match="2 hands"):
        Game(config, deals=[{"hands": good["hands"][:1], "boneyard": good["boneyard"]}])
    with pytest.raises(DealError, match="pips outside"):
        Game(config, deals=[{"hands": [[[0, 0], [0, 9]], [[1, 1], [3, 3]]], "boneyard": good["boneyard"]}])
    with pytest.raises(DealError, match="keys"):
        Game(config, deals=[{"hands": good["hands"]}])
    with pytest.raises(DealError, match="2 deals"):
        Game(config, deals=[good, good])
    with pytest.raises(DealError, match="pair of ints"):
        Game(config, deals=[{"hands": [[[0, 0], "0-1"], [[1, 1], [3, 3]]], "boneyard": good["boneyard"]}])


def test_R9_more_center_arms_than_max_pip_is_refused():
    # only max_pip tiles besides the starting double carry its value: 4 arms of a double-3 never fill
    with pytest.raises(ConfigError, match=r"center_arms=4 exceeds max_pip=3 \(R9\).*center_arms <= 3"):
        RulesConfig(max_pip=3, num_players=2, hand_size=2)
    assert RulesConfig(max_pip=3, num_players=2, hand_size=2, center_arms=3).center_arms == 3
