"""Scripted deals and moves, one or more tests per rule of docs/RULES.md (named after its id)."""

from __future__ import annotations

import numpy as np
import pytest

from cf_env import Game
from cf_env.engine import EventKind, GameOverError, IllegalActionError, Role, RoundEnd, RulesConfig, Tile, winners_of
from tests.scripted import acts, deal, legal_strings, random_playout


def small(**kw) -> RulesConfig:
    base = {"max_pip": 4, "num_players": 2, "hand_size": 5, "rounds": 1, "center_arms": 2}
    base.update(kw)
    return RulesConfig(**base)


# ---------------------------------------------------------------- R1, R4, R5: set, deal, rounds

@pytest.mark.parametrize("max_pip, tiles", [(1, 3), (3, 10), (9, 55), (12, 91), (15, 136), (18, 190)])
def test_R1_set_sizes(max_pip, tiles):
    hand = 1
    game = Game(RulesConfig(max_pip=max_pip, num_players=2, hand_size=hand, center_arms=1), seed=0)
    assert game.config.num_tiles == tiles
    on_table = len(game.layout())
    in_hands = sum(game.hand_sizes)
    assert on_table + in_hands + game.boneyard_size == tiles


def test_R4_deal_hand_sizes_and_hidden_boneyard():
    game = Game(RulesConfig(num_players=4, hand_size=7), seed=3)
    events = game.events()
    search = [e for e in events if e.kind == EventKind.SEARCH_DRAW]
    sizes = [7] * 4
    for e in search:
        sizes[e.player] += 1
    start = next(e for e in events if e.kind == EventKind.START)
    sizes[start.player] -= 1
    assert game.hand_sizes == sizes
    assert game.boneyard_size == 55 - 28 - len(search)
    # another player's draws are hidden in its public view
    for e in game.events(observer=(start.player + 1) % 4):
        if e.kind == EventKind.SEARCH_DRAW and e.player != (start.player + 1) % 4:
            assert e.tile is None


def test_R5_round_schedule_starts_from_the_top_double():
    config = RulesConfig(max_pip=6, num_players=3, hand_size=5)
    game = Game(config, seed=11)
    random_playout(game, np.random.default_rng(0))
    starts = [e.tile for e in game.events() if e.kind == EventKind.START]
    assert starts == [Tile(v, v) for v in range(6, -1, -1)]
    assert len(game.round_scores) == 7 == config.rounds


def test_R5_fewer_rounds_take_the_top_doubles():
    game = Game(RulesConfig(max_pip=9, rounds=2), seed=1)
    random_playout(game, np.random.default_rng(1))
    starts = [e.tile for e in game.events() if e.kind == EventKind.START]
    assert starts == [Tile(9, 9), Tile(8, 8)]


# ---------------------------------------------------------------- R6, R7: starting double

def test_R6_holder_places_starting_double_and_R7_next_player_moves_first():
    config = small()
    game = Game(config, deals=[deal(config, [["0-1", "1-1", "0-2", "1-2", "2-2"],
                                             ["4-4", "0-4", "1-4", "0-0", "2-3"]])])
    layout = game.layout()
    assert layout[0].role == Role.CENTER and (layout[0].match, layout[0].expose) == (4, 4)
    assert layout[0].player == 1
    assert game.current_player == 0
    assert game.hand_sizes == [5, 4]
    assert not [e for e in game.events() if e.kind == EventKind.SEARCH_DRAW]


def test_R6_search_draws_from_dealers_left_and_drawn_tiles_stay():
    config = RulesConfig(max_pip=3, num_players=2, hand_size=2, rounds=2, center_arms=1)
    round0 = deal(config, [["0-0", "0-1"], ["1-1", "1-2"]], top=["0-2", "2-2", "3-3"])
    round1 = deal(config, [["0-0", "0-1"], ["1-1", "3-3"]], top=["1-3", "2-2"])
    game = Game(config, deals=[round0, round1])
    search = [(e.player, str(e.tile)) for e in game.events() if e.kind == EventKind.SEARCH_DRAW]
    # round 0: dealer is player 0, so player 1 draws first
    assert search == [(1, "0-2"), (0, "2-2"), (1, "3-3")]
    assert game.layout()[0].player == 1
    assert game.current_player == 0
    assert game.hand_sizes == [3, 3]
    assert Tile(0, 2) in game.hand(1) and Tile(2, 2) in game.hand(0)
    random_playout(game, np.random.default_rng(0))
    # round 1: dealer is player 1, so player 0 draws first and finds the 2-2 second
    r1 = [(e.player, str(e.tile)) for e in game.events() if e.kind == EventKind.SEARCH_DRAW and e.round == 1]
    assert r1 == [(0, "1-3"), (1, "2-2")]


def test_R6_one_tile_hand_goes_out_by_placing_the_double():
    config = RulesConfig(max_pip=2, num_players=2, hand_size=1, rounds=1, center_arms=2)
    game = Game(config, deals=[deal(config, [["2-2"], ["0-1"]])])
    assert game.is_over
    assert game.round_scores == [[0, 1]]
    assert game.round_end_reasons == [(RoundEnd.DOMINO, 0)]
    assert game.winners == [0]


# ---------------------------------------------------------------- R8-R10: matching, arms, feet

def _foot_game() -> Game:
    config = small()
    return Game(config, deals=[deal(config, [["4-4", "0-4", "1-2", "0-2", "1-3"],
                                             ["1-4", "1-1", "0-1", "3-3", "2-3"]])])


def test_R9_every_play_goes_on_an_empty_centre_arm_first():
    game = _foot_game()
    assert game.pending.role == Role.ARM and game.pending.value == 4 and game.pending.count == 2
    assert legal_strings(game) == {"4>1"}
    acts(game, "4>1")
    # the 1 end is open, but a centre arm is still empty
    assert legal_strings(game) == {"4>0"}
    acts(game, "4>0")
    assert game.pending is None
    assert legal_strings(game) == {"1>1", "1>0", "0>1"}


def test_R10_double_forces_three_toes_then_toe_ends_open():
    game = _foot_game()
    acts(game, "4>1", "4>0", "1>1")
    assert game.pending.role == Role.TOE and game.pending.value == 1 and game.pending.count == 3
    assert legal_strings(game) == {"1>2", "1>3"}  # the open 0 end is closed until the toes are down
    acts(game, "1>2")
    assert legal_strings(game) == {"1>0"}  # the 2 end just made is not playable either
    acts(game, "1>0")
    assert legal_strings(game) == {"1>3"}
    acts(game, "1>3")
    assert game.pending is None
    assert game.open_ends == [2, 0, 1, 1, 0]
    assert legal_strings(game) == {"3>3", "2>3", "3>2"}  # toe ends (2 and 3) are now open
    acts(game, "3>3")
    roles = [(p.role, p.parent, p.arm) for p in game.layout()]
    assert roles == [
        (Role.CENTER, -1, -1), (Role.ARM, 0, 0), (Role.ARM, 0, 1), (Role.DOUBLE, 1, 0),
        (Role.TOE, 3, 0), (Role.TOE, 3, 0), (Role.TOE, 3, 0), (Role.DOUBLE, 6, 0),
    ]


@pytest.mark.parametrize("arms", [3, 6])
def test_R9_center_arms_variants(arms):
    config = RulesConfig(center_arms=arms)
    for seed in range(5):
        game = Game(config, seed=seed)
        rng = np.random.default_rng(seed)
        while game.pending is not None and game.pending.role == Role.ARM and not game.is_over:
            for a in game.legal_actions():
                if a < 100:
                    assert a // 10 == game.starting_double
            random_playout_one(game, rng)
        arm_tiles = [p for p in game.layout() if p.role == Role.ARM]
        if game.rounds_finished == 0:
            assert len(arm_tiles) == arms
            assert sorted(p.arm for p in arm_tiles) == list(range(arms))


def random_playout_one(game: Game, rng: np.random.Generator) -> None:
    legal = game.legal_actions()
    game.apply(legal[int(rng.integers(len(legal)))])


# ---------------------------------------------------------------- R11-R13: must play, draw, pass

def _draw_game(top, **kw) -> Game:
    config = RulesConfig(max_pip=3, num_players=2, hand_size=2, rounds=1, center_arms=1, **kw)
    return Game(config, deals=[deal(config, [["3-3", "0-3"], ["1-1", "1-2"]], top=top)])


def test_R11_must_play_draw_and_pass_are_illegal_while_a_play_exists():
    game = _foot_game()
    assert legal_strings(game) == {"4>1"} and game.boneyard_size > 0
    before = (game.current_player, game.hand_sizes, game.boneyard_size, game.legal_actions())
    for move in ("draw", "pass"):
        with pytest.raises(IllegalActionError, match="not legal"):
            acts(game, move)
    assert (game.current_player, game.hand_sizes, game.boneyard_size, game.legal_actions()) == before


def test_R12_no_play_means_draw_then_play_the_drawn_tile():
    game = _draw_game(["2-3"])
    assert game.current_player == 1 and legal_strings(game) == {"draw"}
    acts(game, "draw")
    assert game.current_player == 1
    assert game.drawn_tile == Tile(2, 3)
    assert legal_strings(game) == {"3>2", "pass"}
    acts(game, "3>2")
    assert game.current_player == 0 and game.drawn_tile is None
    assert game.unmatched(1) == 1 << 3


def test_R12_drawn_playable_tile_may_be_kept():
    game = _draw_game(["2-3"])
    acts(game, "draw", "pass")
    assert game.current_player == 0
    assert Tile(2, 3) in game.hand(1)
    assert legal_strings(game) == {"3>0"}


def test_R12_unplayable_draw_ends_the_turn():
    game = _draw_game(["0-0", "2-3"])
    acts(game, "draw")
    assert game.current_player == 0
    assert game.hand_sizes == [1, 3]
    assert legal_strings(game) == {"3>0"}


def test_R12_until_playable_keeps_drawing():
    game = _draw_game(["0-0", "0-1", "2-3"], draw_rule="until_playable")
    acts(game, "draw")
    assert game.current_player == 1 and legal_strings(game) == {"draw"}
    acts(game, "draw")
    assert game.current_player == 1 and legal_strings(game) == {"draw"}
    acts(game, "draw")
    assert legal_strings(game) == {"3>2", "pass"}
    assert game.hand_sizes == [1, 5]


def test_R12_until_playable_stops_when_the_boneyard_is_empty():
    config = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=1,
                         draw_rule="until_playable")
    game = Game(config, deals=[deal(config, [["2-2", "1-2"], ["0-0", "1-1"]], top=["0-1", "0-2"])])
    acts(game, "draw")  # 0-1: no 2 on it
    assert game.current_player == 1 and legal_strings(game) == {"draw"}
    acts(game, "draw")  # 0-2 plays
    assert legal_strings(game) == {"2>0", "pass"}


def test_R13_pass_with_empty_boneyard_and_R14_domino_and_R15_double_blank():
    config = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=1)
    game = Game(config, deals=[deal(config, [["2-2", "1-2"], ["0-0", "0-1"]], top=["0-2", "1-1"])])
    acts(game, "draw", "2>0")
    assert legal_strings(game) == {"draw"}
    acts(game, "draw")  # 1-1 does not match the 0 end: the turn ends
    assert game.boneyard_size == 0 and game.current_player == 1
    acts(game, "0>1", "1>1")
    assert game.pending.role == Role.TOE
    assert legal_strings(game) == {"pass"}  # player 0 can still play, so this is no block
    acts(game, "pass")
    assert game.unmatched(1) == 1 << 1
    acts(game, "1>2")
    assert game.is_over
    assert game.round_end_reasons == [(RoundEnd.DOMINO, 0)]
    assert game.round_scores == [[0, 50]]  # R15: the 0-0 scores 50
    assert game.winners == [0]


def test_R14_blocked_layout_ends_the_round_at_once():
    config = RulesConfig(max_pip=3, num_players=2, hand_size=3, rounds=1, center_arms=1)
    game = Game(config, deals=[deal(config, [["3-3", "0-0", "1-1"], ["2-2", "0-1", "1-2"]],
                                    top=["0-3", "0-2", "1-3", "2-3"])])
    acts(game, "draw", "3>0", "0>0", "0>1", "draw", "0>2", "draw")
    assert not game.is_over and game.current_player == 0
    acts(game, "draw")  # the boneyard is now empty and nobody holds a 0 for the last toe
    assert game.is_over
    assert game.round_end_reasons == [(RoundEnd.BLOCKED, -1)]
    assert game.round_scores == [[7, 11]]
    ends = [e for e in game.events() if e.kind == EventKind.ROUND_END]
    assert len(ends) == 1 and ends[0].detail == RoundEnd.BLOCKED and ends[0].player == -1


@pytest.mark.parametrize("points", [0, 25, 50])
def test_R15_double_blank_points_option(points):
    config = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=1,
                         double_blank_points=points)
    game = Game(config, deals=[deal(config, [["2-2", "1-2"], ["0-0", "0-1"]], top=["0-2", "1-1"])])
    acts(game, "draw", "2>0", "draw", "0>1", "1>1", "pass", "1>2")
    assert game.round_scores == [[0, points]]


# ---------------------------------------------------------------- R16: winners

def test_R16_lowest_total_wins():
    assert winners_of([[3, 9, 5], [4, 0, 0]]) == [2]


def test_R16_tiebreak_most_zero_rounds():
    assert winners_of([[0, 5], [12, 7]]) == [0]


def test_R16_tiebreak_lowest_nonzero_round():
    assert winners_of([[3, 4], [9, 8]]) == [0]


def test_R16_shared_win():
    assert winners_of([[0, 10], [10, 0]]) == [0, 1]
    assert winners_of([[0, 0, 4], [0, 0, 9]]) == [0, 1]


def test_R16_game_winners_use_the_tiebreaks():
    for seed in range(30):
        game = Game(RulesConfig(max_pip=4, num_players=3, hand_size=3), seed=seed)
        random_playout(game, np.random.default_rng(seed))
        assert game.winners == winners_of(game.round_scores)
        assert game.totals == [sum(r[p] for r in game.round_scores) for p in range(3)]


# ---------------------------------------------------------------- errors change nothing

def test_illegal_action_raises_typed_error_and_changes_nothing():
    game = _foot_game()
    record = game.to_record()
    for bad in (-1, 10**6, 0, "4>1", 1.5, None):
        with pytest.raises(IllegalActionError):
            game.apply(bad)
    assert game.to_record() == record
    game.apply(np.int64(21))  # numpy ints are accepted
    assert game.actions() == [21]


def test_game_over_error():
    config = RulesConfig(max_pip=2, num_players=2, hand_size=1, rounds=1, center_arms=2)
    game = Game(config, deals=[deal(config, [["2-2"], ["0-1"]])])
    with pytest.raises(GameOverError):
        game.apply(0)
    assert game.legal_actions() == [] and game.current_player == -1


def test_R17_public_log_hides_whether_a_drawn_tile_was_playable():
    # Player 1 cannot match the 2-2 and draws. In game A the tile (0-2) is playable and kept; in
    # game B it (1-1) is not and the turn ends. At the table both look the same: a draw, then the
    # turn moves on. Only the drawer's own view says which it was.
    config = RulesConfig(max_pip=2, num_players=2, hand_size=2, rounds=1, center_arms=1)
    hands = [["2-2", "1-2"], ["0-0", "0-1"]]
    kept = Game(config, deals=[deal(config, hands, top=["0-2", "1-1"])])
    acts(kept, "draw", "pass")
    unplayable = Game(config, deals=[deal(config, hands, top=["1-1", "0-2"])])
    acts(unplayable, "draw")
    assert kept.current_player == unplayable.current_player == 0

    def public(game: Game) -> list[tuple]:
        return [(e.kind, e.player, e.action, e.tile, e.detail) for e in game.events(observer=0)]

    assert public(kept) == public(unplayable)
    assert [e.kind for e in kept.events(observer=1)][-2:] == [EventKind.DRAW, EventKind.PASS]
    assert kept.events(observer=1)[-1].detail == 1  # the drawer knows it kept a playable tile
    assert kept.events()[-1].kind == EventKind.PASS  # the full log (replays) keeps it too
    assert kept.actions() == unplayable.actions() + [kept.actions()[-1]]
