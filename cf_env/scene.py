"""Where every tile of a round's layout lies on the table: the geometry shared by the
``rgb_array`` picture (:func:`cf_env.render.render_rgb`) and the HTML replay viewer
(:mod:`cf_env.replay`), plus the rest of what a picture of the position shows.

Units are tile halves: a tile is 2 x 1. The centre double sits at the origin, standing upright.
Its arms leave it in ``center_arms`` directions spread evenly, the first to the right, going
clockwise (``y`` grows downwards, as on a screen). An ordinary tile continues its line straight
on, its ``match`` half towards the tile it touches. A double is laid crosswise, and its three toes
leave it as a foot: the first straight on, the second and third angled 45 degrees to either side.
A toe line can grow its own foot in the same way. The slots a tile may still take are *ghosts*:
an empty centre arm, a double's empty toe; a ghost is *forced* while R9/R10 make it the only place
to play.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from cf_env.engine import Role
from cf_env.game import Game

__all__ = ["VIEW_STEP", "Ghost", "Scene", "TilePose", "arm_label_points", "layout_poses", "play_pose", "scene_of",
           "seen_bounds", "stepped_view"]

_GAP = 0.12  # between touching tiles
_TOE_ANGLES = (0.0, -60.0, 60.0)  # first, second, third toe, relative to the double's line
_TOE_SIDE = 0.8  #: how far from the double's line the side toes leave: their outlines clear the middle toe's


@dataclass(frozen=True, slots=True)
class TilePose:
    """A tile on the table: ``match``/``expose`` pips, centre ``(x, y)``, ``angle`` in degrees
    (the tile's long side points along it, ``match`` half first), the seat that played it and its
    layout index."""

    node: int
    match: int
    expose: int
    x: float
    y: float
    angle: float
    double: bool
    player: int
    role: int


@dataclass(frozen=True, slots=True)
class Ghost:
    """An empty slot: where a tile would lie (pose as :class:`TilePose`), the value it must
    match, the parent node, and whether it is forced now."""

    x: float
    y: float
    angle: float
    value: int
    parent: int
    forced: bool


@dataclass(slots=True)
class Scene:
    """Everything a picture of the position needs, in plain values."""

    tiles: list[TilePose]
    ghosts: list[Ghost]
    open_nodes: list[int]  #: layout indices with a free end
    hands: list[list[tuple[int, int]]]
    hand_sizes: list[int]
    boneyard: int
    current: int  #: seat to move, -1 once the game is over
    round_index: int
    rounds: int
    totals: list[int]
    round_scores: list[list[int]]
    winners: list[int]
    over: bool
    pending: str  #: "" or e.g. "2 toes on 5 must be filled first"
    drawn: tuple[int, int] | None
    bounds: tuple[float, float, float, float] = field(default=(0.0, 0.0, 0.0, 0.0))  #: min x, min y, max x, max y


def _direction(angle: float) -> tuple[float, float]:
    rad = math.radians(angle)
    return math.cos(rad), math.sin(rad)


def _place(start: tuple[float, float], angle: float, double: bool) -> tuple[float, float, float, float]:
    """Centre and tip (the free end's edge) of a tile laid from ``start`` along ``angle``."""
    dx, dy = _direction(angle)
    depth = 1.0 if double else 2.0
    cx, cy = start[0] + dx * (_GAP + depth / 2), start[1] + dy * (_GAP + depth / 2)
    return cx, cy, start[0] + dx * (_GAP + depth), start[1] + dy * (_GAP + depth)


def _toe_start(tip: tuple[float, float], angle: float, k: int) -> tuple[float, tuple[float, float]]:
    """A double's ``k``-th toe: its angle and where it starts (the side toes leave from the
    double's outer corners so they clear it)."""
    toe_angle = angle + _TOE_ANGLES[k]
    if k == 0:
        return toe_angle, tip
    px, py = _direction(angle + (90.0 if _TOE_ANGLES[k] > 0 else -90.0))
    return toe_angle, (tip[0] + _TOE_SIDE * px, tip[1] + _TOE_SIDE * py)


def _arm_start(k: int, arms: int) -> tuple[float, tuple[float, float]]:
    angle = 360.0 * k / arms
    dx, dy = _direction(angle)
    # the upright centre double is 1 wide and 2 high: leave it from its edge in that direction
    reach = min(0.5 / abs(dx) if abs(dx) > 1e-9 else math.inf, 1.0 / abs(dy) if abs(dy) > 1e-9 else math.inf)
    return angle, (dx * reach, dy * reach)


@dataclass(frozen=True, slots=True)
class _Node:
    x: float
    y: float
    angle: float  # drawn
    line: float  # the direction its line grows in
    tip: tuple[float, float]
    double: bool


_CANDIDATE_TURNS = (0.0, -30.0, 30.0, -60.0, 60.0, -90.0, 90.0, -120.0, 120.0)


def _rect(x: float, y: float, angle: float) -> tuple[float, float, float, float, float, float]:
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return x, y, c, s, 0.98, 0.48  # slightly shrunk: touching tiles do not collide


def _overlap(a: tuple, b: tuple) -> bool:
    """Separating-axis test of two rotated rectangles (centre, axis, half extents)."""
    ax, ay, ac, as_, aw, ah = a
    bx, by, bc, bs, bw, bh = b
    dx, dy = bx - ax, by - ay
    if dx * dx + dy * dy > 5.0:  # farther than both half-diagonals together
        return False
    for ux, uy in ((ac, as_), (-as_, ac), (bc, bs), (-bs, bc)):
        ra = aw * abs(ac * ux + as_ * uy) + ah * abs(-as_ * ux + ac * uy)
        rb = bw * abs(bc * ux + bs * uy) + bh * abs(-bs * ux + bc * uy)
        if abs(dx * ux + dy * uy) > ra + rb:
            return False
    return True


def _pose(start: tuple[float, float], line: float, double: bool, clear_of: _Node | None = None) -> _Node:
    """The tile laid from ``start`` along ``line``; with ``clear_of`` (the double it leaves), moved
    out along its line until it no longer covers that double (a toe or an arm may touch its
    double, never lie on it)."""
    if clear_of is not None:
        parent = _rect(clear_of.x, clear_of.y, clear_of.angle)
        dx, dy = _direction(line)
        for _ in range(40):  # 0.05 a step: at most two half-tiles out
            cx, cy, _, _ = _place(start, line, double)
            if not _overlap(_rect(cx, cy, line + (90.0 if double else 0.0)), parent):
                break
            start = (start[0] + 0.05 * dx, start[1] + 0.05 * dy)
    cx, cy, tx, ty = _place(start, line, double)
    return _Node(cx, cy, line + (90.0 if double else 0.0), line, (tx, ty), double)


def _grow(layout: list, arms: int, nodes: list[_Node]) -> list[_Node]:
    """Extend ``nodes`` (the poses of the first ``len(nodes)`` tiles, in the order played) to the
    whole layout. Each tile goes where its line leads, turning (by 30, 60, ... degrees) only when
    that spot is taken: earlier tiles never move, so a replay's frames are stable."""
    nodes = list(nodes)
    rects = [_rect(n.x, n.y, n.angle) for n in nodes]
    toes_seen: dict[int, int] = {}
    for i in range(1, len(nodes)):
        toes_seen[layout[i].parent] = toes_seen.get(layout[i].parent, 0) + 1
    for i in range(len(nodes), len(layout)):
        p = layout[i]
        double = p.match == p.expose
        if i == 0:
            node = _Node(0.0, 0.0, 90.0, 90.0, (0.0, 0.0), True)
        else:
            parent = nodes[p.parent]
            k = toes_seen.get(p.parent, 0)
            toes_seen[p.parent] = k + 1
            if p.parent == 0:
                line, start = _arm_start(p.arm, arms)
            elif parent.double:
                line, start = _toe_start(parent.tip, parent.line, min(k, 2))
            else:
                line, start = parent.line, parent.tip
            best = -1
            below = parent if parent.double else None
            for turn in _CANDIDATE_TURNS:  # the first free spot, else the least crowded one
                candidate = _pose(start, line + turn, double, below)
                rect = _rect(candidate.x, candidate.y, candidate.angle)
                clashes = sum(_overlap(rect, other) for j, other in enumerate(rects) if j != p.parent)
                if best < 0 or clashes < best:
                    node, best = candidate, clashes
                if not clashes:
                    break
        nodes.append(node)
        rects.append(_rect(node.x, node.y, node.angle))
    return nodes


def layout_poses(game: Game, cache: list | None = None) -> tuple[list[TilePose], list[Ghost]]:
    """The pose of every tile on the current round's layout and every empty slot (ghost).
    ``cache``: a list kept between calls on the same round (its poses are reused and extended;
    pass a new one for each round)."""
    layout = game.layout()
    if not layout:
        return [], []
    cfg = game.config
    nodes = _grow(layout, cfg.center_arms, cache if cache is not None and len(cache) <= len(layout) else [])
    if cache is not None:
        cache[:] = nodes
    kids = [0] * len(layout)
    arms_taken = set()
    for p in layout[1:]:
        kids[p.parent] += 1
        if p.parent == 0:
            arms_taken.add(p.arm)
    pending = game.pending
    poses = [TilePose(i, p.match, p.expose, n.x, n.y, n.angle, n.double, p.player, int(p.role))
             for i, (p, n) in enumerate(zip(layout, nodes))]
    ghosts: list[Ghost] = []
    forced_arms = pending is not None and pending.role == Role.ARM
    for k in range(cfg.center_arms):
        if k not in arms_taken:
            line, start = _arm_start(k, cfg.center_arms)
            g = _pose(start, line, False, nodes[0])
            ghosts.append(Ghost(g.x, g.y, g.angle, layout[0].expose, 0, forced_arms))
    toe_value = pending.value if pending is not None and pending.role == Role.TOE else -1
    newest = max((i for i in range(1, len(layout)) if nodes[i].double and kids[i] < 3
                  and layout[i].expose == toe_value), default=-1)  # R10: the newest incomplete foot
    for i in range(1, len(layout)):
        if nodes[i].double:
            for k in range(kids[i], 3):
                line, start = _toe_start(nodes[i].tip, nodes[i].line, k)
                g = _pose(start, line, False, nodes[i])
                ghosts.append(Ghost(g.x, g.y, g.angle, layout[i].expose, i, i == newest))
    return poses, ghosts


def play_pose(game: Game, action: int, cache: list | None = None) -> TilePose:
    """Where the legal play ``action`` would lie on the table, before it is made (the engine's
    :meth:`~cf_env.Game.placement_of`, in this module's geometry): what a move button
    points at. ``cache`` as in :func:`layout_poses`; it is not extended by the hypothetical tile."""
    layout = game.layout()
    place = game.placement_of(action)
    start = cache if cache is not None and len(cache) <= len(layout) else []
    node = _grow([*layout, place], game.config.center_arms, start)[-1]
    return TilePose(len(layout), place.match, place.expose, node.x, node.y, node.angle, node.double, place.player,
                    int(place.role))


def arm_label_points(arms: int) -> list[tuple[float, float]]:
    """Where the picture writes each centre arm's number (1 ... ``arms``): beside the arm's first
    tile, on its clockwise side."""
    points = []
    for k in range(arms):
        line, (sx, sy) = _arm_start(k, arms)
        dx, dy = _direction(line)
        points.append((sx + 1.1 * dx - 0.95 * dy, sy + 1.1 * dy + 0.95 * dx))
    return points


def _bounds(tiles: list[TilePose], ghosts: list[Ghost]) -> tuple[float, float, float, float]:
    xs: list[float] = []
    ys: list[float] = []
    poses: list[TilePose | Ghost] = [*tiles, *ghosts]
    for t in poses:
        dx, dy = _direction(t.angle)
        for sx, sy in ((1, 0.5), (1, -0.5), (-1, 0.5), (-1, -0.5)):
            xs.append(t.x + sx * dx - sy * dy)
            ys.append(t.y + sx * dy + sy * dx)
    if not xs:
        return (-1.0, -1.0, 1.0, 1.0)
    return min(xs), min(ys), max(xs), max(ys)


VIEW_STEP = 4.0  #: the table's view grows in steps of this many half-tiles
_VIEW_BASE = (-VIEW_STEP, -VIEW_STEP, VIEW_STEP, VIEW_STEP)  # the smallest view: the centre and its first tiles


Bounds = tuple[float, float, float, float]


def seen_bounds(bounds: Bounds, seen: Bounds | None) -> Bounds:
    """``bounds`` joined with ``seen``, what earlier positions of the round covered (``None`` at
    a round's start): the view of a round never shrinks."""
    if seen is None:
        return bounds
    return min(bounds[0], seen[0]), min(bounds[1], seen[1]), max(bounds[2], seen[2]), max(bounds[3], seen[3])


def stepped_view(bounds: Bounds) -> Bounds:
    """The part of the table a picture shows for ``bounds`` (what the round has covered so far,
    :func:`seen_bounds`) and the centre's neighbourhood, widened to whole :data:`VIEW_STEP` steps.
    The view fits the tiles on the table from the first move on and changes only when
    they outgrow it (stepwise, never shrinking within a round), so tiles stay put between the
    steps of the zoom."""
    x0, y0, x1, y1 = seen_bounds(bounds, _VIEW_BASE)
    return (math.floor(x0 / VIEW_STEP) * VIEW_STEP, math.floor(y0 / VIEW_STEP) * VIEW_STEP,
            math.ceil(x1 / VIEW_STEP) * VIEW_STEP, math.ceil(y1 / VIEW_STEP) * VIEW_STEP)


def pending_text(game: Game) -> str:
    """``"2 toes on 5 must be filled first"``, ``"1 centre arm on 9 ..."`` or ``""``."""
    pend = game.pending
    if pend is None:
        return ""
    what = ("centre arm" if pend.role == Role.ARM else "toe") + ("" if pend.count == 1 else "s")
    return f"{pend.count} {what} on {pend.value} must be filled first"


def scene_of(game: Game, cache: list | None = None) -> Scene:
    """The whole position as plain values (every hand included: a replay may show them);
    ``cache`` as in :func:`layout_poses`."""
    tiles, ghosts = layout_poses(game, cache)
    drawn = game.drawn_tile
    return Scene(
        tiles=tiles, ghosts=ghosts,
        open_nodes=sorted({node for nodes in game.open_end_nodes() for node in nodes}),
        hands=[[(t.low, t.high) for t in game.hand(p)] for p in range(game.num_players)],
        hand_sizes=list(game.hand_sizes), boneyard=game.boneyard_size,
        current=-1 if game.is_over else game.current_player, round_index=game.round_index,
        rounds=game.config.rounds, totals=list(game.totals), round_scores=[list(r) for r in game.round_scores],
        winners=list(game.winners) if game.is_over else [], over=game.is_over, pending=pending_text(game),
        drawn=None if drawn is None else (drawn.low, drawn.high), bounds=_bounds(tiles, ghosts),
    )
