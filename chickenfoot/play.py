"""Playing against agents in the terminal: who sits where, reading a typed move, the game loop.

:class:`Table` seats a person and agents (the terminal and the web page share it); :func:`parse_choice`
reads a typed move with the engine's own parsers (:meth:`cf_env.Tile.parse`,
:func:`cf_env.string_to_action`) and maps a tile to its action ids through the action table;
:func:`play_terminal` is the game loop of ``chickenfoot play``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from agents.base import needs_history
from cf_env import ActionParseError, ConfigError, Game, GameEncoder, RulesConfig, Tile, action_table

__all__ = ["RULES_SUMMARY", "Table", "menu_text", "parse_choice", "play_terminal"]

RULES_SUMMARY = """Chicken Foot in brief (the full rules: docs/RULES.md, R1-R17)
- Each round starts with a double in the centre (9-9 in round 1, then 8-8, ... down to 0-0).
- Centre arms (R9): the first plays must fill the centre double's 4 arms, each tile matching it.
- Matching (R8): a tile goes against an open end showing one of its values; its other value
  becomes the new open end. Moves are written M>X: play the tile M-X on an open M, exposing X.
- Chicken foot (R10): a double laid on an open end opens three toes; all three must be filled
  (each matching the double) before anyone plays anywhere else.
- Must play (R11): with a legal play you must play. Without one you draw one tile (R12); if it
  fits you may play it at once or keep it (pass). Boneyard empty and no play: pass (R13).
- A round ends when someone plays their last tile, or when nobody can play (R14). Everyone
  scores the pips left in hand; 0-0 counts 50 (R15). After the last round the lowest total wins.
Type a move as a menu number, 3>7 (the 3 end on an open 3), 3-7 or [3|7] (either way round when
only one fits), draw, pass; ? shows this; q quits."""


@dataclass
class Table:
    """Who sits where in a game between a person at ``seat`` and agents: ``specs`` for the other
    seats in seat order (the last one fills the rest), the lineup a record stores (``you`` for
    the person) and the labels moves are told with."""

    config: RulesConfig
    seat: int
    specs: list[str]
    others: list[int] = field(init=False)
    lineup: list[str] = field(init=False)
    labels: list[str] = field(init=False)

    def __post_init__(self) -> None:
        n = self.config.num_players
        if not self.specs:
            raise ConfigError("no agent spec for the other seats; e.g. ['heuristic']")
        if not 0 <= self.seat < n:
            raise ConfigError(f"seat must be in [0, {n}), got {self.seat}")
        if len(self.specs) > n - 1:
            raise ConfigError(f"{len(self.specs)} agent specs ({', '.join(self.specs)}) for the {n - 1} other seat"
                              f"{'s' if n > 2 else ''} of a {n}-player game: drop {len(self.specs) - n + 1} or play "
                              f"with more players (--players)")
        self.specs = (list(self.specs) + [self.specs[-1]] * n)[: n - 1]
        self.others = [p for p in range(n) if p != self.seat]
        self.lineup = ["you" if p == self.seat else self.specs[self.others.index(p)] for p in range(n)]
        self.labels = ["you" if p == self.seat else f"player_{p} ({self.lineup[p]})" for p in range(n)]

    def load_agents(self) -> list:
        """The agents of the other seats, in the order of :attr:`others`."""
        from agents import load

        return [load(spec, self.config) for spec in self.specs]


def menu_text(action: int, max_pip: int) -> str:
    """``"3>7    (tile 3-7 on an open 3)"``, ``"draw"``, ``"pass"``."""
    from cf_env import action_to_string

    text = action_to_string(action, max_pip)
    if ">" in text:
        m, x = text.split(">")
        return f"{text:6s} (tile {m}-{x} on an open {m})"
    return text


def parse_choice(answer: str, legal: list[int], max_pip: int, hand: list[Tile] | None = None) -> int | str:
    """A legal action id from a menu number, ``M>X``, a tile (``3-7``, ``[3|7]``, ``3:7``: either
    orientation, when only one is legal), ``draw`` or ``pass``; else a message saying what is wrong
    (with ``hand``, the player's tiles, a tile they do not hold is said to be so)."""
    from cf_env import action_to_string, string_to_action

    text = answer.strip()
    if text.isdigit():
        k = int(text)
        if 0 <= k < len(legal):
            return legal[k]
        return f"pick a number from 0 to {len(legal) - 1}"
    try:
        tile = Tile.parse(text)
    except ActionParseError:
        tile = None
    if tile is not None:
        if tile.high > max_pip:
            return f"{text}: this set's pips go up to {max_pip}"
        table = action_table(max_pip)
        options = [a for a in legal if a < table.draw and table.action_tile[a] == tile.index]
        if not options and hand is not None and tile not in hand:
            return f"you do not hold {tile}; your tiles: {' '.join(str(t) for t in hand)}"
        if not options:
            return f"the tile {tile} has no legal play now; legal moves are listed above"
        if len(options) > 1:
            return (f"{tile} fits both ways: type {action_to_string(options[0], max_pip)} or "
                    f"{action_to_string(options[1], max_pip)} (the first number is the end that touches)")
        return options[0]
    try:
        action = string_to_action(text, max_pip)
    except ActionParseError as exc:
        return f"{exc}; or type a menu number, a tile like 3-7, or ? for the rules"
    if action not in legal:
        if hand is not None and action < action_table(max_pip).draw:
            tile = Tile.from_index(action_table(max_pip).action_tile[action])
            if tile not in hand:
                return f"you do not hold {tile}; your tiles: {' '.join(str(t) for t in hand)}"
        return f"{text} is not legal now; legal moves are listed above"
    return action


def play_terminal(table: Table, seed: int | None, ask: Callable[[str], str], say: Callable[[str], None],
                  save: Callable[[Game], None]) -> Game:
    """Play one game: the agents move, the person types moves through ``ask`` (a prompt that
    returns the answer); every move is told through ``say``, each round opens with who placed
    its double (and the R6 draws that found it) and closes with every hand as the round ended.
    ``save(game)`` runs on every way out: the game's end, ``q``, and any exception ``ask`` or a
    signal handler raises (Ctrl-C, end of input, SIGTERM): then the exception goes on. Returns
    the game."""
    from cf_env.render import render_ansi
    from cf_env.replay import describe_action, round_opening

    config, seat, labels = table.config, table.seat, table.labels
    max_pip = config.max_pip
    bots = table.load_agents()
    wants_history = needs_history(bots)
    game = Game(config, seed=seed)
    encoder = GameEncoder(config)
    rng = np.random.default_rng(seed)
    say(f"You are player_{seat}. Type ? for the rules, q to quit.")
    opened = -1
    try:
        while not game.is_over:
            if game.round_index != opened:
                say("\n=== " + round_opening(game, labels, viewer=seat))
                opened = game.round_index
            current = game.current_player
            observation = encoder.observe(game, history=wants_history)
            if current != seat:
                action = bots[table.others.index(current)].act(observation, rng)
            else:
                say("\n" + render_ansi(game, viewer=seat))
                legal = np.flatnonzero(observation["action_mask"]).tolist()
                for k, a in enumerate(legal):
                    say(f"  [{k}] {menu_text(a, max_pip)}")
                while True:
                    answer = ask("your move (number, 3>7, 3-7, [3|7], draw, pass; ? rules; q quits)")
                    word = answer.strip().lower()
                    if word in ("q", "quit", "exit"):
                        say("bye")
                        return game
                    if word in ("?", "help", "rules"):
                        say(RULES_SUMMARY)
                        continue
                    choice = parse_choice(answer, legal, max_pip, hand=game.hand(seat))
                    if isinstance(choice, str):
                        say(choice)
                        continue
                    action = choice
                    break
            rounds_before = game.rounds_finished
            say(describe_action(game, action, labels, viewer=seat))
            if game.rounds_finished != rounds_before:
                for p, hand in enumerate(game.round_end_hands[-1]):
                    say(f"    {labels[p]}: {' '.join(f'[{t.low}|{t.high}]' for t in hand) or '(none)'}")
                say(f"--- round {game.rounds_finished} over: points {game.round_scores[-1]}, totals {game.totals}")
        names = ", ".join(labels[p] for p in game.winners)
        say(f"Game over. Totals {game.totals}. Winner(s): {names}")
        return game
    finally:
        save(game)
