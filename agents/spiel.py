"""Bridges between the project's agents and OpenSpiel bots (extra ``openspiel``).

* :class:`AgentBot`: any project agent (or spec: ``"heuristic"``, ``"search"``, ``"zoo:strong-4p"``)
  as a ``pyspiel.Bot`` on the ``python_chicken_foot`` game: it acts on the state's observation
  tensor and legal actions, so OpenSpiel's ``evaluate_bots`` can seat it.
* :class:`BotAgent`: any ``pyspiel.Bot`` where the project takes an agent (``training.evaluate``,
  the env loops). A bot reads an OpenSpiel state, which holds more than one observation (ISMCTS,
  for one, reads the information state), so the agent is given where the engine game lives
  (``game_source``, e.g. ``lambda: env.game``) and hands the bot that game's OpenSpiel state.
* :func:`resampler`: a state with one seat's information state and its hidden tiles drawn anew,
  for OpenSpiel's Python ``ISMCTSBot.set_resampler`` (a Python game cannot provide the C++
  ``ResampleFromInfostate``). It deals the hidden tiles with the search's dealing
  (:func:`agents.search.worlds.deal_pool`).

Example: OpenSpiel's ISMCTS against the project's heuristic (docs/frameworks.md shows the whole script)::

    bot = ISMCTSBot(game, RandomRolloutEvaluator(1, np.random.RandomState(0)), 1.0, 200)
    bot.set_resampler(lambda state, player: resampler(state, player, rng))
    returns = evaluate_bots(game.new_initial_state(), [bot, AgentBot("heuristic", game)], rng)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from agents.base import Agent
from agents.search.worlds import deal_pool
from cf_env import Game, RulesConfig, Tile
from cf_env.engine.state import EventKind
from cf_env.integrations.openspiel import ChickenFootGame, ChickenFootState, game_from_rules, state_from_game

__all__ = ["AgentBot", "BotAgent", "resampler"]


class AgentBot(pyspiel.Bot):
    """A project agent playing ``python_chicken_foot`` as a ``pyspiel.Bot``."""

    def __init__(self, agent: Agent | str, game: ChickenFootGame, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        if isinstance(agent, str):
            import agents

            agent = agents.load(agent, game.rules)
        self.agent = agent
        self.game = game
        self._rng = np.random.default_rng(seed)
        self._mask = np.zeros(game.num_distinct_actions(), np.int8)

    def step(self, state) -> int:
        player = state.current_player()
        self._mask[:] = 0
        self._mask[state.legal_actions()] = 1
        return int(self.agent.act({"observation": state.observation_vector(player), "action_mask": self._mask.copy()},
                                  self._rng))

    def restart_at(self, state) -> None:
        pass

    def inform_action(self, state, player_id, action) -> None:
        pass


class BotAgent:
    """A ``pyspiel.Bot`` as a project agent. ``game_source()`` returns the engine game being
    played (the env's ``env.game``); each decision gives the bot that game's OpenSpiel state."""

    def __init__(self, bot, config: RulesConfig, game_source: Callable[[], Game], name: str = "openspiel-bot") -> None:
        self.bot = bot
        self.config = config
        self.name = name
        self.game_source = game_source
        self._spiel_game = game_from_rules(config)

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        state = state_from_game(self.game_source(), self._spiel_game)
        action = int(self.bot.step(state))
        if not observation["action_mask"][action]:
            raise ValueError(f"the bot chose action {action}, which the observation's mask does not allow: is "
                             f"game_source() the game this observation comes from?")
        return action


def resampler(state: ChickenFootState, player: int, rng: np.random.Generator | None = None,
              tries: int = 200) -> ChickenFootState:
    """A state with ``player``'s information state (the same ``information_state_string``), its
    hidden tiles drawn anew: for ``ISMCTSBot.set_resampler`` (call it at a decision node).

    The current round's hidden part is redrawn: the other seats' dealt tiles, the tiles they drew
    and the boneyard's order. Each tile another seat played goes into its dealt hand or one of its
    draws (the draw just before, when it played right after drawing; the starting double is the
    last R6 search draw when there was a search); each draw and each R13 pass of another seat
    means it held no tile of the open values then (R12), so its tiles in hand then avoid them; the
    unknown tiles are dealt under those constraints by the search's :func:`deal_pool`, most
    constrained first. A seat whose drawn tile turns out playable but was not played kept it: a
    pass its opponents do not see (R17). The world is replayed on the engine and kept when the
    information state matches. Earlier rounds stay as they are: nothing hidden in them changes
    what can happen next (their scores, which do, are public). Raises ``RuntimeError`` after
    ``tries`` worlds that do not fit.
    """
    if state.is_chance_node() or state.is_terminal():
        raise ValueError("resample at a decision node (ISMCTS resamples the state at its own turn)")
    rng = rng if rng is not None else np.random.default_rng()
    target = state.information_state_string(player)
    view = _round_view(state, player)
    rs = np.array([rng.integers(1, 2**63)], np.uint64)  # deal_pool's xorshift state, from rng
    for _ in range(tries):
        world = _sample_round(state, player, view, rng, rs)
        if world is not None and world.information_state_string(player) == target:
            return world
    raise RuntimeError(f"no world fits player {player}'s information state in {tries} tries")


def _round_view(state: ChickenFootState, player: int) -> list[tuple]:
    """The current round's events as ``player`` sees them, each with the open values just before
    it (the values a draw or pass could not match), from a replay of the game."""
    engine = state.engine
    assert engine is not None  # a decision node: round 0 is dealt
    deals = state.deals()
    replay = Game(engine.config, deals=deals, seed=0)
    actions = engine.actions()
    seen = iter(engine.events(player))
    out = []
    i = 0
    for e in engine.events():
        hidden = e.kind == EventKind.PASS and e.detail and e.player != player
        vals = replay.open_values
        if e.kind in (EventKind.PLAY, EventKind.DRAW, EventKind.PASS):
            replay.apply(actions[i])
            i += 1
        if hidden:
            continue
        mine = next(seen)
        if e.round == len(deals) - 1:
            out.append((mine, vals))
    return out


def _sample_round(state: ChickenFootState, player: int, view: list[tuple], rng: np.random.Generator,
                  rs: np.ndarray) -> ChickenFootState | None:
    spiel_game = state.get_game()
    rules, table = spiel_game.rules, spiel_game.table
    n, h = rules.num_players, rules.hand_size
    deals = state.deals()
    own_deal = [Tile.of(*t).index for t in deals[-1]["hands"][player]]
    others = [q for q in range(n) if q != player]
    dealt = {q: [-1] * h for q in others}
    draws: list[list[int]] = []  # [seat, tile or -1] per boneyard tile drawn, top first (R6 search draws first)
    avoid: dict[tuple, int] = {}  # slot -> values its tile may not carry
    # a slot: ("deal", seat, i), the i-th tile dealt to a seat, or ("draw", j), the j-th drawn
    in_hand: dict[int, set[tuple[Any, ...]]] = {q: {("deal", q, i) for i in range(h)} for q in others}
    known = set(own_deal)
    decisions: list[tuple[int, int]] = []  # (action, seat) to replay
    searched = any(e.kind == EventKind.SEARCH_DRAW for e, _ in view)
    last = None

    def free(slot: tuple) -> bool:
        return dealt[slot[1]][slot[2]] < 0 if slot[0] == "deal" else draws[slot[1]][1] < 0

    def fits(slot: tuple, tile: int) -> bool:
        mask = avoid.get(slot, 0)
        return not ((mask >> table.tile_low[tile]) & 1 or (mask >> table.tile_high[tile]) & 1)

    def put(slot: tuple, tile: int) -> None:
        if slot[0] == "deal":
            dealt[slot[1]][slot[2]] = tile
        else:
            draws[slot[1]][1] = tile

    for e, vals in view:
        q = e.player
        if e.kind in (EventKind.SEARCH_DRAW, EventKind.DRAW):
            if q == player:
                draws.append([q, e.tile.index])
                known.add(e.tile.index)
            else:
                if e.kind == EventKind.DRAW:  # it had no play: nothing in its hand carries these values
                    for slot in in_hand[q]:
                        avoid[slot] = avoid.get(slot, 0) | vals
                in_hand[q].add(("draw", len(draws)))
                draws.append([q, -1])
            if e.kind == EventKind.DRAW:
                decisions.append((table.draw, q))
        elif e.kind == EventKind.START:
            tile = e.tile.index
            known.add(tile)
            if q != player:
                if searched:  # the last search draw found it
                    slot = ("draw", len(draws) - 1)
                else:
                    options = [s for s in in_hand[q] if s[0] == "deal" and free(s)]
                    slot = options[rng.integers(len(options))]
                put(slot, tile)
                in_hand[q].discard(slot)
        elif e.kind == EventKind.PLAY:
            tile = table.action_tile[e.action]
            known.add(tile)
            if q != player:
                if last is not None and last.kind == EventKind.DRAW and last.player == q:
                    options = [("draw", len(draws) - 1)]  # right after its draw: the drawn tile
                else:
                    options = [s for s in in_hand[q] if free(s)]
                options = [s for s in options if s in in_hand[q] and free(s) and fits(s, tile)]
                if not options:
                    return None
                slot = options[rng.integers(len(options))]
                put(slot, tile)
                in_hand[q].discard(slot)
            decisions.append((e.action, q))
        elif e.kind == EventKind.PASS:
            if q != player and not e.detail:  # R13: it had no play
                for slot in in_hand[q]:
                    avoid[slot] = avoid.get(slot, 0) | vals
            decisions.append((e.action, q))
        last = e
    # the unknown slots, each a group of one tile for deal_pool, its forbidden tiles from its avoided values
    placed = {t for hand in dealt.values() for t in hand if t >= 0} | {t for _, t in draws if t >= 0}
    pool = np.array([t for t in range(rules.num_tiles) if t not in known and t not in placed], np.int64)
    unknown: list[tuple[Any, ...]] = [("deal", q, i) for q in others for i in range(h) if dealt[q][i] < 0]
    unknown += [("draw", j) for j, (_, t) in enumerate(draws) if t < 0]
    lo, hi = np.asarray(table.tile_low), np.asarray(table.tile_high)
    masks = np.array([avoid.get(slot, 0) for slot in unknown], np.int64)[:, None]
    forbid = (((masks >> lo) | (masks >> hi)) & 1).astype(np.uint8)
    order = np.argsort(-forbid[:, pool].sum(axis=1), kind="stable")
    perm, taken = np.zeros(pool.size, np.int64), np.zeros(pool.size, np.int64)
    if deal_pool(pool, np.ones(len(unknown), np.int64), forbid, order, 0.0, rs, perm, taken):
        return None  # the constraints do not all hold in the deals tried
    for i in np.flatnonzero(taken):
        put(unknown[taken[i] - 1], int(perm[i]))
    hands = [own_deal if q == player else dealt[q] for q in range(n)]
    boneyard = [t for _, t in draws] + [int(t) for t in perm[taken == 0]]
    deal = {"hands": [[[table.tile_low[t], table.tile_high[t]] for t in hand] for hand in hands],
            "boneyard": [[table.tile_low[t], table.tile_high[t]] for t in boneyard]}
    return _replay(state, deal, decisions, player)


def _replay(state: ChickenFootState, deal: dict, decisions: list[tuple[int, int]],
            player: int) -> ChickenFootState | None:
    """``state``'s game with the current round dealt as ``deal``: the earlier rounds' decisions,
    then ``decisions``, with a keeping pass wherever another seat's drawn tile is playable and it
    did not play it (a pass ``player`` does not see)."""
    live = state.engine
    assert live is not None  # a decision node: round 0 is dealt
    spiel_game = state.get_game()
    table = spiel_game.table
    deals = [*state.deals()[:-1], deal]
    engine = Game(spiel_game.rules, deals=deals, seed=0)
    r = len(deals) - 1
    before = sum(1 for e in live.events() if e.round < r and e.kind in (EventKind.PLAY, EventKind.DRAW,
                                                                        EventKind.PASS))
    engine.apply_all(live.actions()[:before])

    def keep_if_hidden(next_seat: int, next_action: int | None) -> None:
        cur = engine.current_player
        if cur != player and engine.drawn_tile is not None and (cur != next_seat or next_action == table.draw):
            engine.apply(table.pass_)

    for action, seat in decisions:
        keep_if_hidden(seat, action)
        if engine.current_player != seat or not engine.is_legal(action):
            return None
        engine.apply(action)
    keep_if_hidden(state.current_player(), None)
    if engine.current_player != live.current_player:
        return None
    return ChickenFootState.from_engine(spiel_game, engine)
