"""Game records, move descriptions, the table's geometry, the GIF and the replay/play/eval
commands (the page itself is tested in a browser: test_browser.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from cf_env import Game, RecordError, RulesConfig, env
from cf_env.engine import Role
from cf_env.replay import describe_action, frames, load_record, replay_steps, save_record, write_gif, write_html
from cf_env.scene import _overlap, _rect, layout_poses, scene_of
from chickenfoot.cli import main
from chickenfoot.play import parse_choice
from tests.replay.conftest import play

# ------------------------------------------------------------------------------ records

def test_record_round_trip(short_record, tmp_path):
    path = save_record(short_record, tmp_path / "a" / "game.json")
    loaded = load_record(path)
    assert loaded == json.loads(json.dumps(short_record))
    game = Game.from_record(loaded["game"])
    assert game.is_over and game.totals == loaded["result"]["totals"] and game.winners == loaded["result"]["winners"]
    # a bare engine record is read too
    (tmp_path / "bare.json").write_text(json.dumps(short_record["game"]))
    assert load_record(tmp_path / "bare.json")["players"] == [f"player_{p}" for p in range(4)]


@pytest.mark.parametrize("text, message", [
    ("{", "not a JSON game record"),
    ('{"format": "other"}', "is not a game record"),
    ('[1, 2]', "is not a game record"),
])
def test_bad_records_are_refused(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(RecordError, match=message):
        load_record(path)
    with pytest.raises(RecordError, match="no game record at"):
        load_record(tmp_path / "missing.json")


def test_a_record_that_does_not_replay_names_the_action(short_record, tmp_path):
    bad = json.loads(json.dumps(short_record))
    bad["game"]["actions"][1] = 0  # 0>0: only 9s fit the centre 9-9 then
    save_record(bad, tmp_path / "bad.json")
    with pytest.raises(RecordError, match="action #1 "):
        load_record(tmp_path / "bad.json")
    wrong_players = json.loads(json.dumps(short_record))
    wrong_players["players"] = ["a"]
    save_record(wrong_players, tmp_path / "players.json")
    with pytest.raises(RecordError, match="one label per seat"):
        load_record(tmp_path / "players.json")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "bad.json")])
    assert result.exit_code != 0 and "action #1 " in result.output


# ------------------------------------------------------------------------------ describing moves

def test_descriptions_say_the_tile_and_where_it_went(short_record):
    texts = [text for _, text, _ in replay_steps(short_record)]
    assert len(texts) == len(short_record["game"]["actions"]) + 1
    assert texts[0] == "round 1: starting double 9-9"
    arms = [t for t in texts[1:12] if "on the centre 9-9 (arm" in t]
    assert arms, texts[:12]
    assert any("plays" in t and "on arm" in t for t in texts)
    assert any(" drew " in t for t in texts)  # a replay shows drawn tiles
    assert any("went out" in t or "blocked" in t for t in texts)
    assert "game over, winner" in texts[-1]


def test_toes_and_hidden_draws_in_a_players_view():
    config = RulesConfig(rounds=1)
    game = Game(config, seed=4)
    rng = np.random.default_rng(4)
    names = ["you", "player_1", "player_2", "player_3"]
    seen_toe = seen_hidden = seen_own = False
    while not game.is_over:
        seat = game.current_player
        action = int(rng.choice(game.legal_actions()))
        pending = game.pending
        text = describe_action(game, action, names, viewer=0)
        if pending is not None and pending.role == Role.TOE and "plays" in text + " play ":
            assert "as toe" in text, text
            seen_toe = True
        if action == 100 and seat != 0:
            assert text == f"player_{seat} draws"
            seen_hidden = True
        if action == 100 and seat == 0:
            assert text.startswith("you drew ") and "-" in text
            seen_own = True
        if seat == 0 and action < 100:
            assert text.startswith("you play "), text
    assert seen_toe and seen_hidden and seen_own


# ------------------------------------------------------------------------------ geometry

def test_feet_are_drawn_as_feet_and_tiles_do_not_pile_up():
    config = RulesConfig(rounds=3)
    positions = crowded = 0
    for seed in range(4):
        game = Game(config, seed=seed)
        rng = np.random.default_rng(seed)
        cache: list = []
        round_index, previous = 0, []
        while not game.is_over:
            if game.round_index != round_index:
                round_index, cache, previous = game.round_index, [], []
            poses, ghosts = layout_poses(game, cache)
            layout = game.layout()
            assert [(t.match, t.expose) for t in poses] == [(p.match, p.expose) for p in layout]
            assert poses[: len(previous)] == previous  # tiles never move while the round lasts
            previous = poses
            # every double's toes leave it at three different angles, and empty toes are drawn
            for i, p in enumerate(layout):
                if p.role == Role.DOUBLE:
                    toes = [t for t in poses if layout[t.node].parent == i]
                    assert len({round(t.angle % 360) for t in toes}) == len(toes)
                    assert len(toes) + sum(1 for g in ghosts if g.parent == i) == 3
            assert sum(1 for g in ghosts if g.parent == 0) == config.center_arms - sum(
                1 for p in layout if p.role == Role.ARM)
            pending = game.pending
            assert sum(g.forced for g in ghosts) == (pending.count if pending is not None else 0)
            # tiles do not lie on one another (a tile and the one it touches may meet at a corner)
            rects = [_rect(t.x, t.y, t.angle) for t in poses]
            positions += 1
            crowded += any(_overlap(rects[i], rects[j]) for j in range(len(rects)) for i in range(j)
                           if layout[j].parent != i)
            # a toe or an arm may touch its double, never cover it
            on_double = [j for j in range(1, len(rects)) if poses[layout[j].parent].double
                         and _overlap(rects[layout[j].parent], rects[j])]
            assert not on_double, [(layout[j], layout[layout[j].parent]) for j in on_double]
            game.apply(int(rng.choice(game.legal_actions())))
    assert positions > 500 and crowded <= 0.03 * positions, (crowded, positions)


def test_scene_says_whose_turn_and_the_winners():
    game = play(RulesConfig(rounds=1), ["greedy"] * 4, seed=2)
    scene = scene_of(game)
    assert scene.over and scene.current == -1 and scene.winners == game.winners
    assert math.isfinite(sum(scene.bounds))


# ------------------------------------------------------------------------------ pictures

def test_rgb_array_uses_the_table_geometry_and_says_who_won():
    e = env(render_mode="rgb_array", rounds=1)
    e.reset(seed=3)
    first = e.render()
    assert first.ndim == 3 and first.dtype == np.uint8 and first.shape[2] == 3
    rng = np.random.default_rng(0)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    last = e.game
    picture = e.render()
    assert picture.shape[0] > first.shape[0]  # the table grew, and a banner came
    # the banner's colour (gold on black) appears only once the game is over
    gold = np.all(picture == (255, 220, 90), axis=-1).sum()
    assert gold > 50 and np.all(first == (255, 220, 90), axis=-1).sum() == 0
    assert last.is_over


def test_gif_has_a_frame_per_step(short_record, tmp_path):
    small = json.loads(json.dumps(short_record))
    small["game"]["actions"] = small["game"]["actions"][:30]
    path = write_gif(small, tmp_path / "game.gif", every=2)
    with Image.open(path) as gif:
        assert gif.n_frames == 16  # steps 0, 2, ..., 30
        assert gif.info["duration"] == 600


def test_frames_hold_every_step(short_record):
    data = frames(short_record)
    assert len(data["frames"]) == len(short_record["game"]["actions"]) + 1
    for step, _, game in replay_steps(short_record):
        f = data["frames"][step]
        tiles = data["rounds"][f["r"]]["tiles"][: f["n"]]
        assert [(a, b) for a, b, *_ in tiles] == [(p.match, p.expose) for p in game.layout()]
        assert f["hands"] == [[[t.low, t.high] for t in game.hand(p)] for p in range(4)]


# ------------------------------------------------------------------------------ commands

def test_replay_command_steps_through_and_writes_html_and_gif(short_record, tmp_path):
    path = save_record(short_record, tmp_path / "game.json")
    r0 = next(s for s, _, g in replay_steps(short_record) if g.round_index == 1)
    result = CliRunner().invoke(main, ["replay", str(path)], input="n\n\nN\np\nP\ng 7\nzz\nq\n")
    assert result.exit_code == 0, result.output
    shown = [int(line.split()[2].split("/")[0]) for line in result.output.splitlines() if line.startswith("=== step")]
    assert shown == [0, 1, 2, r0, r0 - 1, 0, 7, 7]
    assert "unknown command 'zz'" in result.output
    assert "player_1 (greedy): [" in result.output
    html, gif = tmp_path / "g.html", tmp_path / "g.gif"
    result = CliRunner().invoke(main, ["replay", str(path), "--html", str(html), "--gif", str(gif), "--gif-every", "50"])
    assert result.exit_code == 0, result.output
    assert html.read_text().count("data-placed") >= 1 and gif.stat().st_size > 1000


def test_parse_choice_reads_tiles_either_way():
    legal = [3 * 10 + 7, 100]  # 3>7 and draw
    assert parse_choice("3-7", legal, 9) == 37
    assert parse_choice("[7|3]", legal, 9) == 37
    assert parse_choice("3>7", legal, 9) == 37
    assert parse_choice("1", legal, 9) == 100
    assert parse_choice("draw", legal, 9) == 100
    assert "not legal" in parse_choice("7>3", legal, 9)
    assert "no legal play" in parse_choice("4-4", legal, 9)
    both = [37, 73]
    assert "fits both ways" in parse_choice("3-7", both, 9)
    assert "pips go up to 9" in parse_choice("3-12", legal, 9)


def test_play_echoes_moves_shows_hands_and_saves(tmp_path):
    path = tmp_path / "mine.json"
    answers = "\n".join(["?", "banana"] + ["0"] * 300) + "\n"
    result = CliRunner().invoke(main, ["play", "--opponents", "greedy", "--players", "2", "--max-pip", "6",
                                       "--hand-size", "5", "--rounds", "2", "--seed", "3", "--save", str(path)],
                                input=answers)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Chicken Foot in brief" in out and "cannot parse 'banana'" in out
    assert "you play " in out and "player_1 (greedy) plays " in out
    assert "went out" in out or "blocked" in out
    assert "--- round 1 over" in out and "    you: " in out
    assert "Game over" in out
    record = load_record(path)
    assert record["players"] == ["you", "greedy"] and record["meta"]["source"] == "chickenfoot play"
    assert Game.from_record(record["game"]).is_over


def test_eval_saves_all_games_or_the_worst(tmp_path):
    args = ["eval", "greedy", "random", "--players", "2", "--max-pip", "4", "--hand-size", "3", "--rounds", "2",
            "--deal-sets", "3", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--save-games", str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "all").glob("game_*.json"))
    assert len(files) == 6
    for f in files:
        record = load_record(f)
        assert sorted(record["players"]) == ["greedy", "random"]
    result = CliRunner().invoke(main, [*args, "--save-games", str(tmp_path / "worst"), "--worst", "2",
                                       "--worst-agent", "random"])
    assert result.exit_code == 0, result.output
    index = json.loads((tmp_path / "worst" / "index.json").read_text())
    assert len(index["games"]) == 2 and index["agent"] == "random"
    everything = [load_record(f) for f in files]
    margins = sorted((np.mean([t for s, t in zip(r["players"], r["result"]["totals"]) if s == "random"])
                      - min(t for s, t in zip(r["players"], r["result"]["totals"]) if s != "random"))
                     for r in everything)
    assert [g["behind_best_other"] for g in index["games"]] == margins[::-1][:2]
    bad = CliRunner().invoke(main, [*args, "--worst", "2"])
    assert bad.exit_code != 0 and "give --save-games" in bad.output
    bad = CliRunner().invoke(main, [*args, "--save-games", str(tmp_path / "x"), "--worst", "1", "--worst-agent", "nobody"])
    assert bad.exit_code != 0 and "not in the lineup" in bad.output


def test_html_escapes_its_data(short_record, tmp_path):
    sneaky = json.loads(json.dumps(short_record))
    sneaky["players"] = ["</script><b>x", "greedy", "heuristic", "random"]
    text = write_html(sneaky, tmp_path / "s.html").read_text()
    assert "</script><b>" not in text


def test_forced_slots_are_counted_in_words():
    from cf_env.scene import pending_text

    game = Game(RulesConfig(rounds=1), seed=0)
    rng = np.random.default_rng(0)
    seen = {}
    while not game.is_over and len(seen) < 4:
        pending = game.pending
        if pending is not None:
            seen[(pending.role, pending.count)] = pending_text(game)
        game.apply(int(rng.choice(game.legal_actions())))
    words = set(seen.values())
    assert any(w.startswith("1 toe on ") for w in words) or any(w.startswith("1 centre arm on ") for w in words)
    assert all(("toes" in w or "arms" in w) == (not w.startswith("1 ")) for w in words)


def test_the_view_fits_the_table_and_grows_in_steps(short_record):
    from cf_env.scene import VIEW_STEP

    data = frames(short_record)
    previous: dict[int, list[float]] = {}
    for step, _, game in replay_steps(short_record):
        f = data["frames"][step]
        view, bounds = f["view"], scene_of(game).bounds
        assert view[0] <= bounds[0] + 0.01 and view[1] <= bounds[1] + 0.01
        assert view[2] >= bounds[2] - 0.01 and view[3] >= bounds[3] - 0.01  # everything on the table is in view
        before = previous.get(f["r"])
        if before is not None:  # within a round it never shrinks, and changes only by whole steps
            assert view[0] <= before[0] and view[1] <= before[1] and view[2] >= before[2] and view[3] >= before[3]
            for a, b in zip(view, before):
                assert a == b or abs(a - b) % VIEW_STEP < 0.01 or abs(a - b) % VIEW_STEP > VIEW_STEP - 0.01
        previous[f["r"]] = view
    first, last_of_round = data["frames"][1]["view"], previous[0]
    area = lambda v: (v[2] - v[0]) * (v[3] - v[1])  # noqa: E731
    assert area(first) * 2 < area(last_of_round)  # the first moves are not lost in the whole round's table


def test_gif_frames_are_filled_and_captions_stay_inside(short_record, tmp_path):
    from cf_env.render import render_rgb, seat_labels

    small = json.loads(json.dumps(short_record))
    small["game"]["actions"] = small["game"]["actions"][:25]
    with Image.open(write_gif(small, tmp_path / "game.gif")) as gif:
        sizes = set()
        for k in (1, 12, 25):
            gif.seek(k)
            picture = np.asarray(gif.convert("RGB"))
            sizes.add(picture.shape)
            table = picture[picture.shape[0] // 4:]  # below the header
            cols = np.flatnonzero((np.abs(table.astype(int) - (34, 110, 60)).sum(-1) > 60).any(axis=0))
            assert cols.size and cols[-1] - cols[0] > 0.4 * picture.shape[1], k  # the table fills the width
        assert len(sizes) == 1
    game = Game(RulesConfig(rounds=1), seed=2)
    caption = "player_2 (heuristic) plays 9-4 on arm 3; " * 8
    picture = render_rgb(game, unit=18, names=["heuristic", "greedy", "heuristic", "random"], caption=caption)
    caption_ink = np.all(picture == (255, 240, 200), axis=-1)
    assert caption_ink.any() and not caption_ink[:, -6:].any()  # wrapped, not cut at the edge
    assert seat_labels(["heuristic", "heuristic"], 2) == ["player_0 (heuristic)", "player_1 (heuristic)"]
    assert seat_labels(None, 2) == ["player_0", "player_1"]


def test_a_doubles_three_toe_slots_do_not_overlap():
    """The outlines of a fresh double's three empty toes (as the page and the picture draw them,
    2.1 x 1.1 with their stroke) leave each other room."""
    import math

    from cf_env import scene

    double = scene._pose((0.0, 0.0), 0.0, True)
    toes = [scene._pose(start, line, False, double)
            for line, start in (scene._toe_start(double.tip, double.line, k) for k in range(3))]

    def outline(node):
        c, s = math.cos(math.radians(node.angle)), math.sin(math.radians(node.angle))
        return node.x, node.y, c, s, 1.07, 0.57

    for i in range(3):
        for j in range(i + 1, 3):
            assert not scene._overlap(outline(toes[i]), outline(toes[j])), (i, j)
