"""Text and picture renderings of a game's layout (used by the env's ``render()``)."""

from __future__ import annotations

import numpy as np

from cf_env.engine import Role
from cf_env.game import Game

__all__ = ["render_ansi", "render_rgb"]


def _children(game: Game) -> list[list[int]]:
    layout = game.layout()
    kids: list[list[int]] = [[] for _ in layout]
    for i, p in enumerate(layout):
        if p.parent >= 0:
            kids[p.parent].append(i)
    return kids


def render_ansi(game: Game, viewer: int | None = None) -> str:
    """The layout as a tree (centre, arms, feet and toes), open ends, pending slots, hand sizes,
    boneyard, scores and ``viewer``'s hand (default: the player to move)."""
    cfg = game.config
    layout = game.layout()
    kids = _children(game)
    open_nodes = {node for nodes in game.open_end_nodes() for node in nodes}
    lines = [
        f"Round {game.round_index + 1}/{cfg.rounds}  starting double {game.starting_double}-{game.starting_double}"
        f"  dealer player_{game.dealer}" + ("  (game over)" if game.is_over else "")
    ]

    def chain(i: int, indent: str, last: bool, label: str) -> None:
        # follow single children inline; a double's toes (and other branches) go on new lines
        text = ""
        node = i
        while True:
            p = layout[node]
            text += f"[{p.match}|{p.expose}]" + ("*" if node in open_nodes else "")
            if p.role == Role.DOUBLE:
                text += "<"
            elif len(kids[node]) == 1:
                node = kids[node][0]
                continue
            break
        lines.append(indent + ("└─" if last else "├─") + label + text)
        below = kids[node]
        for j, child in enumerate(below):
            kind = "toe " if layout[child].role == Role.TOE else ""
            chain(child, indent + ("   " if last else "│  "), j == len(below) - 1, kind)

    if layout:
        c = layout[0]
        lines.append(f"centre [{c.match}|{c.expose}] placed by player_{c.player}")
        arms = kids[0]
        for j, child in enumerate(arms):
            chain(child, "", j == cfg.center_arms - 1, f"arm {layout[child].arm + 1}: ")  # counted from 1
        for a in range(len(arms), cfg.center_arms):
            lines.append(("└─" if a == cfg.center_arms - 1 else "├─") + f"arm {a + 1}: (empty)")
    ends = ", ".join(f"{v}x{c}" if c > 1 else f"{v}" for v, c in enumerate(game.open_ends) if c)
    if ends or game.pending is None:  # beside a forced slot, "none" says nothing
        lines.append(f"open ends: {ends or 'none'}   (* marks a free end, < a double)")
    if game.pending is not None:
        from cf_env.scene import pending_text

        lines.append("forced: " + pending_text(game))
    sizes = game.hand_sizes
    totals = game.totals
    lines.append(
        "hands: " + ", ".join(f"player_{p} {sizes[p]}" for p in range(game.num_players))
        + f"   boneyard: {game.boneyard_size}"
    )
    lines.append("scores: " + ", ".join(f"player_{p} {totals[p]}" for p in range(game.num_players)))
    if game.round_scores:
        lines.append(f"rounds so far: {game.round_scores}")
    if game.is_over:
        lines.append("winner(s): " + ", ".join(f"player_{p}" for p in game.winners))
    else:
        who = game.current_player if viewer is None else viewer
        hand = " ".join(f"[{t.low}|{t.high}]" for t in game.hand(who))
        lines.append(f"player_{who} to move" if who == game.current_player else f"player_{who}")
        lines.append(f"hand of player_{who}: {hand}")
        if game.drawn_tile is not None and who == game.current_player:
            lines.append(f"just drew [{game.drawn_tile.low}|{game.drawn_tile.high}]: play it or pass")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- pictures

# Pip positions on a half's 3x3 grid (row, col), as on real dominoes; higher values are written.
PIP_GRID = {
    0: [], 1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)], 5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
    7: [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 2)],
    8: [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)],
    9: [(r, c) for r in range(3) for c in range(3)],
}
SEAT_COLOURS = [(214, 69, 65), (52, 120, 198), (230, 160, 30), (140, 80, 180), (40, 160, 150), (200, 90, 150),
                (120, 120, 120), (90, 150, 60)]
_FELT, _IVORY, _OPEN, _INK = (34, 110, 60), (250, 248, 240), (255, 226, 120), (25, 25, 25)


def _wrap(draw, text: str, font, width: float, lines: int) -> list[str]:
    """``text`` in at most ``lines`` lines no wider than ``width`` pixels (the last one cut with an
    ellipsis when the text is longer)."""
    out: list[str] = []
    words = text.split(" ")
    current = ""
    for word in words:
        trial = f"{current} {word}".strip()
        if draw.textlength(trial, font=font) <= width or not current:
            current = trial
        else:
            out.append(current)
            current = word
    out.append(current)
    if len(out) > lines:
        out = out[:lines]
        while out[-1] and draw.textlength(out[-1] + " …", font=font) > width:
            out[-1] = out[-1][:-1]
        out[-1] += " …"
    return out


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # scalable with FreeType (Pillow >= 10.1)
    except TypeError:  # pragma: no cover - older Pillow
        return ImageFont.load_default()


CAPTION_LINES = 3  #: lines a picture keeps for its caption (longer ones end in an ellipsis)


def seat_labels(names: list[str] | None, n: int) -> list[str]:
    """``player_2 (heuristic)`` for each seat (``player_2`` when the name says no more), so that
    two seats of one agent are told apart by more than their colour."""
    names = names or [f"player_{p}" for p in range(n)]
    return [name if name == f"player_{p}" else f"player_{p} ({name})" for p, name in enumerate(names)]


def render_rgb(game: Game, unit: int = 26, names: list[str] | None = None, caption: str = "",
               cache: list | None = None, view: tuple[float, float, float, float] | None = None,
               size: tuple[int, int] | None = None) -> np.ndarray:
    """The position as a picture, in the replay viewer's geometry (:mod:`cf_env.scene`): the
    centre double with its arms (numbered from 1), every double's three toes splayed as a foot,
    empty slots as outlines (red while forced), free ends highlighted; above it whose turn it is,
    each seat's label (``player_1 (greedy)``), hand size and score, and a legend; a banner with the
    winning seats once the game is over. ``caption`` is written under the header, wrapped to the
    picture's width (the replay GIF puts the move there); ``cache`` as in
    :func:`cf_env.scene.layout_poses`.

    By default the picture is as large as the table at ``unit`` pixels per half-tile. ``view``
    (table coordinates: min x, min y, max x, max y) chooses the part of the table to show and
    ``size`` the picture's ``(width, height)``: the view is then scaled to fill the space under
    the header (the replay GIF keeps one size and zooms stepwise). Returns an ``H x W x 3`` uint8
    array."""
    from PIL import Image, ImageDraw

    from cf_env.scene import arm_label_points, scene_of

    scene = scene_of(game, cache)
    n = game.num_players
    labels = seat_labels(names, n)
    u = unit
    font, small, big = _font(max(12, u * 3 // 5)), _font(max(10, u // 2)), _font(max(16, u))
    line_h = max(14, u * 3 // 4)
    header = line_h * (n + 2 + (CAPTION_LINES if caption else 0)) + 6
    banner = 2 * u if scene.over else 0
    x0, y0, x1, y1 = view or scene.bounds
    margin = 1.0
    if size is None:
        width = max(int((x1 - x0 + 2 * margin) * u), 16 * u + 200)
        height = header + banner + int((y1 - y0 + 2 * margin) * u)
        scale = float(u)
    else:
        width, height = size
        area_w, area_h = width, height - header - banner
        scale = min(area_w / (x1 - x0 + 2 * margin), area_h / (y1 - y0 + 2 * margin))
    image = Image.new("RGB", (width, height), _FELT)
    draw = ImageDraw.Draw(image)
    ox = width / 2 - (x0 + x1) / 2 * scale
    oy = header + banner + (height - header - banner) / 2 - (y0 + y1) / 2 * scale

    def to_px(x: float, y: float) -> tuple[float, float]:
        return ox + x * scale, oy + y * scale

    # --- the header: round, whose turn, per-player lines, the legend
    status = f"Round {scene.round_index + 1}/{scene.rounds}   boneyard {scene.boneyard}"
    if scene.pending:
        status += f"   forced: {scene.pending}"
    draw.text((8, 4), status, fill=(255, 255, 255), font=font)
    for p in range(n):
        mark = "> " if p == scene.current else "  "
        text = f"{mark}{labels[p]}: {scene.hand_sizes[p]} tiles, {scene.totals[p]} points"
        if p == scene.current:
            text += "   (to move)"
        if p in scene.winners:
            text += "   WINNER"
        y = 4 + line_h * (p + 1)
        draw.rectangle([8, y + 3, 8 + line_h - 6, y + line_h - 3], fill=SEAT_COLOURS[p % len(SEAT_COLOURS)])
        draw.text((8 + line_h, y), text, fill=(255, 255, 255), font=font)
    legend_y = 4 + line_h * (n + 1)
    draw.rectangle([8, legend_y + 3, 8 + line_h - 6, legend_y + line_h - 3], fill=_OPEN)
    draw.text((8 + line_h, legend_y), "free end", fill=(255, 255, 255), font=small)
    lx = 8 + line_h + 80
    draw.rectangle([lx, legend_y + 3, lx + line_h - 6, legend_y + line_h - 3], outline=(235, 60, 50), width=2)
    draw.text((lx + line_h, legend_y), "forced slot", fill=(255, 255, 255), font=small)
    lx += line_h + 100
    draw.rectangle([lx, legend_y + 3, lx + line_h - 6, legend_y + line_h - 3], outline=(200, 225, 200), width=1)
    draw.text((lx + line_h, legend_y), "empty slot", fill=(255, 255, 255), font=small)

    if caption:
        for k, line in enumerate(_wrap(draw, caption, font, width - 16, CAPTION_LINES)):
            draw.text((8, legend_y + line_h * (k + 1)), line, fill=(255, 240, 200), font=font)

    # --- the table
    def corners(x: float, y: float, angle: float, half_w: float = 1.0, half_h: float = 0.5) -> list[tuple[float, float]]:
        c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
        return [to_px(x + dx * c - dy * s, y + dx * s + dy * c)
                for dx, dy in ((-half_w, -half_h), (half_w, -half_h), (half_w, half_h), (-half_w, half_h))]

    for g in scene.ghosts:
        colour = (235, 60, 50) if g.forced else (200, 225, 200)
        draw.polygon(corners(g.x, g.y, g.angle, 0.96, 0.46), outline=colour, width=3 if g.forced else 1)
    open_nodes = set(scene.open_nodes)
    for t in scene.tiles:
        c, s = np.cos(np.radians(t.angle)), np.sin(np.radians(t.angle))
        draw.polygon(corners(t.x, t.y, t.angle), fill=_IVORY, outline=(60, 60, 60), width=2)
        if t.node in open_nodes:  # the free (expose) half; a double is free on both halves
            if t.double:
                draw.polygon(corners(t.x, t.y, t.angle, 0.97, 0.47), fill=_OPEN)
            else:
                draw.polygon(corners(t.x + 0.5 * c, t.y + 0.5 * s, t.angle, 0.47, 0.47), fill=_OPEN)
        a, b = to_px(t.x - 0.42 * s, t.y + 0.42 * c), to_px(t.x + 0.42 * s, t.y - 0.42 * c)
        draw.line([a, b], fill=(60, 60, 60), width=2)
        seat = SEAT_COLOURS[t.player % len(SEAT_COLOURS)]
        dot = to_px(t.x, t.y)
        draw.ellipse([dot[0] - 3, dot[1] - 3, dot[0] + 3, dot[1] + 3], fill=seat)
        for half, value in ((-0.5, t.match), (0.5, t.expose)):
            hx, hy = t.x + half * c, t.y + half * s
            if value in PIP_GRID:
                r = 0.085 * scale
                for row, col in PIP_GRID[value]:
                    px, py = (col - 1) * 0.27, (row - 1) * 0.27
                    cx, cy = to_px(hx + px * c - py * s, hy + px * s + py * c)
                    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=_INK)
            else:
                cx, cy = to_px(hx, hy)
                draw.text((cx, cy), str(value), fill=_INK, font=_font(max(8, int(scale * 0.55))), anchor="mm")
    if scene.tiles:  # the centre arms' numbers, as the moves count them
        arm_font = _font(max(9, int(scale * 0.5)))
        for k, (ax, ay) in enumerate(arm_label_points(game.config.center_arms)):
            draw.text(to_px(ax, ay), str(k + 1), fill=(216, 236, 216), font=arm_font, anchor="mm")
    if scene.over:
        winners = ", ".join(labels[p] for p in scene.winners)
        text = f"Game over - winner{'s' if len(scene.winners) > 1 else ''}: {winners}"
        where = (width / 2, header + u)  # in its own band above the table
        box = draw.textbbox(where, text, font=big, anchor="mm")
        draw.rectangle([box[0] - 12, box[1] - 8, box[2] + 12, box[3] + 8], fill=(20, 20, 20))
        draw.text(where, text, fill=(255, 220, 90), font=big, anchor="mm")
    return np.asarray(image, dtype=np.uint8).copy()
