"""Game records and replays: save a game with its lineup, step through it, describe each move,
and turn it into a self-contained HTML page or a GIF.

A *game record* is the engine's :meth:`Game.to_record` (rules, deals, actions: enough to replay
the game exactly) with the lineup and the result around it::

    {"format": "chickenfoot-game", "version": 1,
     "game": {"version": 1, "config": {...}, "deals": [...], "actions": [...]},
     "players": ["heuristic", "search", ...],          # the agent spec (or "you") of each seat
     "result": {"totals": [...], "winners": [...], "round_scores": [[...], ...]},
     "meta": {...}}                                      # where it came from: command, seed, ...

``chickenfoot play --save`` and ``chickenfoot eval --save-games`` write them;
``chickenfoot replay RECORD.json`` reads them (``--html``, ``--gif``).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cf_env.engine import EventKind, RecordError, Role, RoundEnd, RulesConfig, Tile, action_table
from cf_env.game import Game

__all__ = ["RECORD_FORMAT", "FrameBuilder", "describe_action", "describe_step", "frames", "game_record", "landing",
           "load_record", "make_record", "opening_text", "replay_steps", "round_summary", "save_record", "write_gif",
           "write_html"]

RECORD_FORMAT = "chickenfoot-game"
RECORD_FORMAT_VERSION = 1


# ------------------------------------------------------------------------------ records

def make_record(game: dict[str, Any], players: Sequence[str], result: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """A record around an engine record ``game`` (:meth:`Game.to_record`), e.g. one that came back
    from another process; :func:`game_record` makes one from a live :class:`Game`."""
    return {"format": RECORD_FORMAT, "version": RECORD_FORMAT_VERSION, "game": game,
            "players": [str(p) for p in players], "result": dict(result), "meta": dict(meta)}


def game_record(game: Game, players: Sequence[str], **meta: Any) -> dict[str, Any]:
    """The record of ``game`` (finished or not) played by ``players`` (one label per seat)."""
    if len(players) != game.num_players:
        raise RecordError(f"{len(players)} player labels for {game.num_players} seats")
    result = {"totals": list(game.totals), "round_scores": [list(r) for r in game.round_scores],
              "winners": list(game.winners) if game.is_over else []}
    return make_record(game.to_record(), players, result, **meta)


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write ``record`` as JSON, atomically: a complete file or the earlier one, never half of
    it (a game saved while its player quits must survive the quitting)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def load_record(path: str | Path) -> dict[str, Any]:
    """Read and check a game record; a bare :meth:`Game.to_record` dict is accepted too (its
    players are then ``player_0`` ...). Raises :class:`RecordError` saying what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"no game record at {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path} is not a JSON game record: {exc}") from None
    if isinstance(data, dict) and "format" not in data and {"config", "deals", "actions"} <= set(data):
        game = Game.from_record(data)
        data = game_record(game, [f"player_{p}" for p in range(game.num_players)])
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path} is not a game record (no \"format\": \"{RECORD_FORMAT}\"); write one with "
                          f"chickenfoot play --save or chickenfoot eval --save-games")
    if data.get("version") != RECORD_FORMAT_VERSION:
        raise RecordError(f"{path}: record version {data.get('version')!r}, this library reads {RECORD_FORMAT_VERSION}")
    try:
        game = Game.from_record(data["game"])
    except (KeyError, TypeError) as exc:
        raise RecordError(f"{path}: the game part is malformed ({exc})") from None
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None
    players = data.get("players")
    if not isinstance(players, list) or len(players) != game.num_players:
        raise RecordError(f"{path}: \"players\" must list one label per seat ({game.num_players})")
    return data


def _new_game(record: dict[str, Any]) -> Game:
    game = record["game"]
    return Game(RulesConfig.from_dict(game["config"]), deals=game["deals"])


# ------------------------------------------------------------------------------ describing moves

def landing(game: Game, action: int) -> str:
    """Where a play would go, said before it is made: ``"on arm 3"``, ``"on the centre 9-9 (arm
    2)"``, ``"as toe 2 of the 5-5 (arm 1)"`` (the engine's rule: a forced slot first, else the
    open end of that value that has been open longest)."""
    place = game.placement_of(action)  # the engine's rule
    layout = game.layout()
    if place.role == Role.ARM:
        return f"on the centre {layout[0].match}-{layout[0].expose} (arm {place.arm + 1})"
    if place.role == Role.TOE:  # R10: the toes of the newest double still short of three
        d = layout[place.parent]
        toe = 1 + sum(1 for p in layout[1:] if p.parent == place.parent)
        return f"as toe {toe} of the {d.match}-{d.expose} (arm {place.arm + 1})"
    text = f"on arm {place.arm + 1}"
    return text + " (a double: three toes to fill)" if place.role == Role.DOUBLE else text


def _last_drawn(game: Game, seat: int) -> Tile | None:
    for event in reversed(game.events()):
        if event.player == seat and event.kind == EventKind.DRAW:
            return event.tile
    return None


def describe_action(game: Game, action: int, names: Sequence[str], viewer: int | None = None) -> str:
    """Apply ``action`` to ``game`` and say what happened: ``"player_2 plays 9-4 on arm 3"``,
    ``"you drew 5-1"``, ``"player_1 draws"`` (a tile drawn by a seat other than ``viewer`` stays
    hidden; ``viewer=None`` shows every tile), ``"player_3 keeps the drawn tile"`` / ``"passes"``,
    and, when the move ended the round, who went out and the round's points."""
    table = action_table(game.config.max_pip)
    seat = game.current_player
    who = names[seat]
    s = "" if who == "you" else "s"  # "you play", "player_1 plays"
    rounds_before = game.rounds_finished
    if action == table.draw:
        game.apply(action)
        tile = _last_drawn(game, seat)
        text = f"{who} drew {tile.low}-{tile.high}" if viewer in (None, seat) and tile is not None else f"{who} draws"
    elif action == table.pass_:
        kept = game.drawn_tile is not None
        game.apply(action)
        if kept and viewer in (None, seat):
            text = f"{who} keep{s} the drawn tile and pass{'es' if s else ''}"
        else:
            text = f"{who} pass{'es' if s else ''}"
    else:
        where = landing(game, action)
        game.apply(action)
        text = f"{who} play{s} {table.match[action]}-{table.expose[action]} {where}"
    if game.rounds_finished != rounds_before:
        text += "; " + round_summary(game, names)
    return text


def round_summary(game: Game, names: Sequence[str]) -> str:
    """``"player_1 went out: round 3 points [...]"`` for the latest finished round."""
    reason, who = game.round_end_reasons[-1]
    k = game.rounds_finished
    head = f"{names[who]} went out" if reason == RoundEnd.DOMINO else "the layout is blocked"
    points = ", ".join(f"{names[p]} {v}" for p, v in enumerate(game.round_scores[-1]))
    return f"{head}; round {k} points: {points}"


# ------------------------------------------------------------------------------ stepping through

def round_opening(game: Game, names: Sequence[str], viewer: int | None = None) -> str:
    """How the current round began: ``"round 2/10: player_1 (greedy) places the 8-8"``, with the
    R6 draws when nobody was dealt the starting double (``"; first player_2 drew 2 tiles and you
    drew 1 looking for it"``; the tiles drawn stay hidden from other seats than ``viewer``)."""
    r = game.round_index
    start = game.starting_double
    drawn: dict[int, int] = {}
    placed_by = -1
    for e in game.events(viewer):
        if e.round != r:
            continue
        if e.kind == EventKind.SEARCH_DRAW:
            drawn[e.player] = drawn.get(e.player, 0) + 1
        elif e.kind == EventKind.START:
            placed_by = e.player
    text = f"round {r + 1}/{game.config.rounds}: {names[placed_by]} place{'' if names[placed_by] == 'you' else 's'} " \
           f"the {start}-{start}"
    if drawn:
        parts = [f"{names[p]} drew {k} tile{'s' if k > 1 else ''}" for p, k in drawn.items()]
        text += f" (nobody was dealt it: {', '.join(parts)} looking for it, R6)"
    return text


def opening_text(game: Game) -> str:
    """What a replay says before the first move."""
    return f"round 1: starting double {game.starting_double}-{game.starting_double}"


def describe_step(game: Game, action: int, labels: Sequence[str], viewer: int | None = None) -> str:
    """:func:`describe_action`, plus the next round's starting double or the game's winners when
    the move brought them (what a replay or the live page shows for a step)."""
    round_before = game.round_index
    text = describe_action(game, action, labels, viewer)
    if not game.is_over and game.round_index != round_before:
        text += f"; round {game.round_index + 1} starts with {game.starting_double}-{game.starting_double}"
    if game.is_over:
        text += "; game over, winner" + ("s" if len(game.winners) > 1 else "") + ": " + ", ".join(
            labels[p] for p in game.winners)
    return text


def replay_steps(record: dict[str, Any]) -> Iterator[tuple[int, str, Game]]:
    """``(step, text, game)`` for step 0 (the deal) to ``len(actions)``: the game as it is after
    the record's first ``step`` actions and what the latest one did. The same :class:`Game`
    object is advanced in place: copy (``game.clone()``) what must outlive the next step."""
    game = _new_game(record)
    labels = [f"player_{p} ({name})" if name != f"player_{p}" else name for p, name in enumerate(record["players"])]
    yield 0, opening_text(game), game
    for step, action in enumerate(record["game"]["actions"], start=1):
        yield step, describe_step(game, int(action), labels), game


def _r(v: float) -> float:
    return round(v, 2)


class FrameBuilder:
    """Builds the viewer's JSON one position at a time (:func:`frames` for a record, the live page
    of ``chickenfoot play --web`` for a game in progress): ``rounds`` (per round, every tile's pose
    in the order played, and the table's bounds) and ``frames`` (per position: the round, how many
    of its tiles lie on the table, free ends, empty and forced slots, hands, whose turn, the move,
    scores, and the part of the table to show, :func:`cf_env.scene.stepped_view`). With ``viewer``
    set, the other seats' hands are sent as blanks (``[-1, -1]``)."""

    def __init__(self, viewer: int | None = None) -> None:
        self.viewer = viewer
        self.rounds: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self._cache: list = []
        self._cache_round = -1
        self._seen: tuple[float, float, float, float] | None = None  # what the round has covered so far

    def add(self, game: Game, text: str) -> dict[str, Any]:
        from cf_env.scene import arm_label_points, scene_of, seen_bounds, stepped_view

        r = game.round_index
        if r != self._cache_round:
            self._cache, self._cache_round, self._seen = [], r, None
        scene = scene_of(game, self._cache)
        self._seen = seen_bounds(scene.bounds, self._seen)
        while len(self.rounds) <= r:
            arms = [[_r(x), _r(y)] for x, y in arm_label_points(game.config.center_arms)]
            self.rounds.append({"tiles": [], "bounds": [0, 0, 0, 0], "arms": arms})
        known = self.rounds[r]["tiles"]
        for t in scene.tiles[len(known):]:
            known.append([t.match, t.expose, _r(t.x), _r(t.y), _r(t.angle), t.player])
        b = self.rounds[r]["bounds"]
        self.rounds[r]["bounds"] = [_r(min(b[0], scene.bounds[0])), _r(min(b[1], scene.bounds[1])),
                                    _r(max(b[2], scene.bounds[2])), _r(max(b[3], scene.bounds[3]))]
        hands = [[list(t) for t in hand] if self.viewer in (None, p) or scene.over else [[-1, -1]] * len(hand)
                 for p, hand in enumerate(scene.hands)]
        drawn = list(scene.drawn) if scene.drawn and self.viewer in (None, scene.current) else None
        frame = {
            "r": r, "n": len(scene.tiles), "open": scene.open_nodes,
            "ghosts": [[_r(g.x), _r(g.y), _r(g.angle), int(g.forced)] for g in scene.ghosts],
            "hands": hands, "bone": scene.boneyard, "cur": scene.current, "text": text, "pend": scene.pending,
            "scores": scene.round_scores, "totals": scene.totals, "win": scene.winners, "over": scene.over,
            "drawn": drawn, "view": [_r(v) for v in stepped_view(self._seen)],
        }
        self.frames.append(frame)
        return frame


def frames(record: dict[str, Any]) -> dict[str, Any]:
    """The replay as plain JSON for the HTML viewer (:class:`FrameBuilder`), one frame per step."""
    builder = FrameBuilder()
    for _, text, game in replay_steps(record):
        builder.add(game, text)
    return {"players": record["players"], "config": record["game"]["config"], "rounds": builder.rounds,
            "frames": builder.frames, "result": record.get("result", {})}


def write_html(record: dict[str, Any], path: str | Path, title: str | None = None) -> Path:
    """One self-contained page (inline CSS, JS and SVG; nothing fetched) that replays the record:
    see :data:`cf_env.replay_page.PAGE` for what it shows and its keys."""
    from cf_env.replay_page import PAGE

    data = json.dumps(frames(record), separators=(",", ":")).replace("</", "<\\/")
    title = title or "Chicken Foot replay: " + " vs ".join(dict.fromkeys(record["players"]))
    page = PAGE.replace("__TITLE__", html.escape(title)).replace("__DATA__", data)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def write_gif(record: dict[str, Any], path: str | Path, ms_per_step: int = 600, unit: int = 18,
              every: int = 1) -> Path:
    """An animated GIF of the replay (Pillow), one frame per ``every`` steps (and the last), in
    the ``rgb_array`` picture's geometry with the move written under the header. Every frame has
    one size (the largest table of the game at ``unit`` pixels per half-tile); the table fills it,
    zooming stepwise as the layout grows (:func:`cf_env.scene.stepped_view`), so early steps are
    not lost in an empty board and tiles stay put between the zoom's steps."""
    from PIL import Image

    from cf_env.render import render_rgb
    from cf_env.scene import scene_of, seen_bounds, stepped_view

    last = len(record["game"]["actions"])
    keep = set(range(0, last + 1, max(1, every))) | {last}
    shots: list[tuple[Game, str, tuple[float, float, float, float]]] = []
    cache: list = []
    cache_round, seen = -1, None
    for step, text, game in replay_steps(record):
        if game.round_index != cache_round:
            cache, cache_round, seen = [], game.round_index, None
        seen = seen_bounds(scene_of(game, cache).bounds, seen)
        if step in keep:
            shots.append((game.clone(), text, stepped_view(seen)))
    largest = max(max(v[2] - v[0], v[3] - v[1]) for _, _, v in shots) + 2.0
    width = max(int(largest * unit), 16 * unit + 200)
    probe = render_rgb(shots[0][0], unit=unit, names=record["players"], caption=shots[0][1], view=shots[0][2])
    header = probe.shape[0] - int((shots[0][2][3] - shots[0][2][1] + 2.0) * unit)
    height = header + 2 * unit + int(largest * unit)  # room for the closing banner too
    framed = [Image.fromarray(render_rgb(game, unit=unit, names=record["players"], caption=text, view=view,
                                         size=(width, height))).quantize(colors=64)
              for game, text, view in shots]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    framed[0].save(path, save_all=True, append_images=framed[1:], duration=ms_per_step, loop=0, optimize=True)
    return path
