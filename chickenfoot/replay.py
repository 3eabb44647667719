"""``chickenfoot replay`` in the terminal: step through a game record (the records, the HTML page
and the GIF are :mod:`cf_env.replay`'s)."""

from __future__ import annotations

from collections.abc import Callable

from cf_env import Game

__all__ = ["replay_terminal"]


def replay_terminal(record: dict, steps: list[tuple[str, Game]], step: int, ask: Callable[[str], str],
                    say: Callable[[str], None]) -> None:
    """Show ``steps`` (what happened, the game after it) from ``step``: Enter or n next, p
    previous, N/P next/previous round, g K step K, q quit."""
    from cf_env.render import render_ansi

    names = record["players"]
    round_starts: dict[int, int] = {}
    for k, (_, game) in enumerate(steps):
        round_starts.setdefault(game.round_index, k)
    last = len(steps) - 1
    while True:
        text, game = steps[step]
        say(f"\n=== step {step}/{last}: {text}")
        say(render_ansi(game, viewer=None if game.is_over else game.current_player))
        for p in range(game.num_players):
            hand = " ".join(f"[{t.low}|{t.high}]" for t in game.hand(p)) or "(none)"
            say(f"  player_{p} ({names[p]}): {hand}")
        answer = ask("[Enter/n] next  [p] previous  [N/P] next/previous round  [g K] step K  [q] quit").strip()
        r = game.round_index
        if answer in ("q", "quit"):
            return
        if answer in ("n", ""):
            step = min(step + 1, last)
        elif answer == "p":
            step = max(step - 1, 0)
        elif answer == "N":
            step = round_starts.get(r + 1, last)
        elif answer == "P":
            step = round_starts[r] if step > round_starts[r] else round_starts.get(r - 1, 0)
        elif answer.startswith("g") and answer[1:].strip().isdigit():
            step = min(int(answer[1:].strip()), last)
        else:
            say(f"unknown command {answer!r}")
