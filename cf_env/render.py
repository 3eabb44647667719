"""Text and picture renderings of a game's layout (used by the env's ``render()``)."""

from __future__ import annotations

import numpy as np

from cf_env.engine import Game, Role

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
            chain(child, "", j == cfg.center_arms - 1, f"arm {layout[child].arm}: ")
        for a in range(len(arms), cfg.center_arms):
            lines.append(("└─" if a == cfg.center_arms - 1 else "├─") + f"arm {a}: (empty)")
    ends = game.open_ends
    lines.append("open ends: " + (", ".join(f"{v}x{c}" if c > 1 else f"{v}" for v, c in enumerate(ends) if c) or "none")
                 + "   (* marks a free end, < a double)")
    pend = game.pending
    if pend is not None:
        what = "centre arms" if pend.role == Role.ARM else "toes"
        lines.append(f"forced: {pend.count} {what} on {pend.value} must be filled first")
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

_PIPS = {  # positions on a 3x3 grid, (row, col)
    0: [], 1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)], 5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
    7: [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 2)],
    8: [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)],
    9: [(r, c) for r in range(3) for c in range(3)],
}


def _draw_half(draw, x: float, y: float, size: float, value: int, font) -> None:
    if value in _PIPS:
        r = size * 0.09
        for row, col in _PIPS[value]:
            cx = x + size * (0.22 + 0.28 * col)
            cy = y + size * (0.22 + 0.28 * row)
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(20, 20, 20))
    else:
        draw.text((x + size * 0.25, y + size * 0.3), str(value), fill=(20, 20, 20), font=font)


def _draw_tile(draw, x: float, y: float, u: float, a: int, b: int, vertical: bool, font,
               colour=(250, 248, 240)) -> None:
    w, h = (u, 2 * u) if vertical else (2 * u, u)
    draw.rounded_rectangle([x, y, x + w, y + h], radius=u * 0.12, fill=colour, outline=(60, 60, 60), width=2)
    if vertical:
        draw.line([x + 4, y + u, x + w - 4, y + u], fill=(60, 60, 60), width=2)
        _draw_half(draw, x, y, u, a, font)
        _draw_half(draw, x, y + u, u, b, font)
    else:
        draw.line([x + u, y + 4, x + u, y + h - 4], fill=(60, 60, 60), width=2)
        _draw_half(draw, x, y, u, a, font)
        _draw_half(draw, x + u, y, u, b, font)


def render_rgb(game: Game, unit: int = 24) -> np.ndarray:
    """The layout drawn as domino tiles with pips: each arm is a row growing to the right from
    the centre double; a chicken foot's toes start new rows below their double. Returns an
    ``H x W x 3`` uint8 array."""
    from PIL import Image, ImageDraw, ImageFont

    layout = game.layout()
    kids = _children(game)
    u = unit
    gap = u // 3
    positions: dict[int, tuple[int, int]] = {}  # node -> (column, row)
    next_row = [0]

    def place(node: int, col: int, row: int) -> None:
        positions[node] = (col, row)
        for j, child in enumerate(kids[node]):
            if j:  # the first child continues the row; the others (toes, arms) start new rows
                next_row[0] += 1
            place(child, col + 1, row if j == 0 else next_row[0])

    if layout:
        for j, arm in enumerate(kids[0]):
            if j > 0:
                next_row[0] += 1
            place(arm, 1, next_row[0])
        positions[0] = (0, 0)
    cols = max((c for c, _ in positions.values()), default=0) + 1
    rows = max(next_row[0] + 1, 1)
    cell_w, cell_h = 2 * u + gap, 2 * u + gap
    header = u + gap
    width = max(cols * cell_w + gap, 14 * u)
    height = header + rows * cell_h + gap
    image = Image.new("RGB", (width, height), (34, 110, 60))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    title = (f"Round {game.round_index + 1}/{game.config.rounds}  boneyard {game.boneyard_size}  "
             f"hands {game.hand_sizes}  scores {game.totals}")
    draw.text((gap, gap // 2), title, fill=(255, 255, 255), font=font)
    open_nodes = {node for nodes in game.open_end_nodes() for node in nodes}
    for node, (col, row) in positions.items():  # connectors from a tile to branches below it
        parent = layout[node].parent
        if parent >= 0 and positions[parent][1] != row:
            pc, pr = positions[parent]
            x0 = gap + pc * cell_w + (3 * u // 2 if layout[parent].match == layout[parent].expose else 2 * u)
            y0 = header + pr * cell_h + u
            draw.line([x0, y0, x0 + gap // 2, y0, x0 + gap // 2, header + row * cell_h + u,
                       gap + col * cell_w, header + row * cell_h + u], fill=(200, 220, 200), width=2)
    for node, (col, row) in positions.items():
        p = layout[node]
        x = gap + col * cell_w
        y = header + row * cell_h
        vertical = p.match == p.expose  # doubles lie crosswise
        colour = (255, 236, 160) if node in open_nodes else (250, 248, 240)
        if vertical:
            _draw_tile(draw, x + u // 2, y, u, p.match, p.expose, True, font, colour)
        else:
            _draw_tile(draw, x, y + u // 2, u, p.match, p.expose, False, font, colour)
    return np.asarray(image, dtype=np.uint8).copy()
