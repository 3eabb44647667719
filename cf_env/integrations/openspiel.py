"""Chicken Foot as an OpenSpiel game: ``python_chicken_foot`` (extra ``openspiel``).

``import cf_env.integrations.openspiel`` registers the game; then::

    import pyspiel
    game = pyspiel.load_game("python_chicken_foot", {"players": 4, "max_pip": 9})

Parameters: every :class:`cf_env.RulesConfig` field under its own name, except ``num_players``,
which is OpenSpiel's ``players``; the same defaults (``rounds`` 0 means the full game,
``max_pip + 1`` rounds, as ``RulesConfig(rounds=None)``).

The game is built on the project's engine (:class:`cf_env.Game`), not a second
implementation of the rules:

* **Chance.** Each round starts with chance nodes that deal the hands one tile at a time (seat 0's
  ``hand_size`` tiles, then seat 1's, ...), each outcome a tile index, uniform over the tiles not yet
  dealt; then, if nobody holds the round's starting double, one chance node per R6 search draw
  (uniform over the boneyard). Every DRAW decision is followed by a chance node choosing the tile
  drawn, uniform over the boneyard. These are the true probabilities of a shuffled set.
* **Actions** are the project's action ids (``K * K + 2`` with ``K = max_pip + 1``), named by
  :func:`cf_env.action_to_string`; chance outcomes are tile indices (``max_chance_outcomes`` = tiles).
* **Returns** are the env's ``reward="win"`` returns, paid at the end: a winner's share of the win
  minus ``1 / n`` (R16; zero-sum). Utility bounds: ``[-1/n, 1 - 1/n]``.
* **Maximum game length** (chance and decisions): per round every tile is dealt or drawn at most once
  (``T`` chance nodes), played at most once (``T``), each draw is a decision that may be followed by
  a keeping pass (``2 B``, ``B = T - n * hand_size``), and with an empty boneyard at most ``n - 1``
  passes come between two plays (``(n - 1)(T + 1)``): ``rounds * (2T + 2B + (n - 1)(T + 1))``.
* **Observation tensor** = the project's observation vector (:class:`cf_env.ObservationEncoder`, the
  same layout); at the chance nodes that deal a round only the tiles dealt so far, the hand sizes, the
  round and the scores are set. The observation string spells the same information out.
* **Information state** (perfect recall): the seat's own dealt hand each round and every event it
  saw (docs/RULES.md R17: its own draws with their tiles, the others' without, and no trace of
  another seat keeping a drawn tile). The string lists them; the tensor is the observation vector,
  the dealt hand of every round so far, and one row per event seen (kind, relative seat, action,
  tile or -1; ``-1`` padding): see ``_Observer``.

:func:`agents.spiel.resampler` draws a state consistent with one seat's information state, for
OpenSpiel's Python ``ISMCTSBot.set_resampler`` (a Python game cannot provide the C++
``ResampleFromInfostate``); it builds its worlds with :meth:`ChickenFootState.from_engine`.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from cf_env.engine import RulesConfig, Tile, action_table, action_to_string
from cf_env.engine.scoring import win_reward, win_share
from cf_env.engine.state import EventKind
from cf_env.game import Game, GameEncoder
from cf_env.observation import SCORE_FACTOR

__all__ = ["GAME_NAME", "ChickenFootGame", "ChickenFootState", "game_from_rules", "max_game_length", "rules_from_params",
           "state_from_game"]

GAME_NAME = "python_chicken_foot"
_RULE_DEFAULTS = RulesConfig()
_PARAMS = {
    "players": _RULE_DEFAULTS.num_players,
    "max_pip": _RULE_DEFAULTS.max_pip,
    "hand_size": _RULE_DEFAULTS.hand_size,
    "rounds": 0,  # 0: the full game (RulesConfig(rounds=None))
    "center_arms": _RULE_DEFAULTS.center_arms,
    "draw_rule": _RULE_DEFAULTS.draw_rule,
    "double_blank_points": _RULE_DEFAULTS.double_blank_points,
}
_MAX_PLAYERS = 18  # a double-18 set deals one tile to each of up to 189 players; OpenSpiel needs a bound


def rules_from_params(params: dict) -> RulesConfig:
    """The :class:`RulesConfig` of OpenSpiel game parameters (see the module docstring)."""
    p = {**_PARAMS, **dict(params or {})}
    rounds = int(p["rounds"])  # 0: the full game
    return RulesConfig(max_pip=int(p["max_pip"]), num_players=int(p["players"]), hand_size=int(p["hand_size"]),
                       center_arms=int(p["center_arms"]), draw_rule=str(p["draw_rule"]),
                       double_blank_points=int(p["double_blank_points"]), **({"rounds": rounds} if rounds else {}))


def max_game_length(rules: RulesConfig) -> int:
    """An upper bound on a game's chance nodes plus decisions (module docstring)."""
    t, n = rules.num_tiles, rules.num_players
    bone = t - n * rules.hand_size
    return rules.rounds * (2 * t + 2 * bone + (n - 1) * (t + 1))


_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Chicken Foot dominoes",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=_MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_PARAMS,
)


class ChickenFootGame(pyspiel.Game):
    """The OpenSpiel game; ``pyspiel.load_game(GAME_NAME, params)`` builds it."""

    def __init__(self, params: dict | None = None) -> None:
        rules = rules_from_params(params or {})
        n = rules.num_players
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_actions,
            max_chance_outcomes=rules.num_tiles,
            num_players=n,
            min_utility=-1.0 / n,
            max_utility=1.0 - 1.0 / n,
            utility_sum=0.0,
            max_game_length=max_game_length(rules),
        )
        super().__init__(_GAME_TYPE, info, params or {})
        self.rules = rules
        self.encoder = GameEncoder(rules)
        self.table = action_table(rules.max_pip)
        # event rows of the information state tensor: every chance node and decision of the game can
        # add at most one event a seat sees, and each round adds its START and ROUND_END
        self.max_events = max_game_length(rules) + 2 * rules.rounds

    def new_initial_state(self) -> ChickenFootState:
        return ChickenFootState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> _Observer:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return _Observer(self, perfect_recall)


class ChickenFootState(pyspiel.State):
    """One game in progress: the rounds dealt so far, and the engine game that plays them."""

    def __init__(self, game: ChickenFootGame) -> None:
        super().__init__(game)
        self._rules = game.rules
        self._table = game.table
        self._deals: list[dict] = []  # the deal of every round started (engine format)
        self._dealt: list[int] = []  # this round's chance outcomes so far: hands, then R6 search draws
        self._engine: Game | None = None
        self._pending_draw = False  # the current player chose DRAW; a chance node picks the tile
        self._terminal = False

    @classmethod
    def from_engine(cls, game: ChickenFootGame, engine: Game) -> ChickenFootState:
        """The state of ``engine`` (an engine game of ``game``'s rules at a decision or at its
        end; the state holds it, not a copy): its rounds' deals as they stand, no chance node
        pending. :func:`state_from_game` reaches the same state through the chance nodes."""
        if engine.config != game.rules:
            raise ValueError(f"the engine game's rules {engine.config} are not the game's {game.rules}")
        state = cls(game)
        state._deals = engine.to_record()["deals"][:engine.rounds_finished + (0 if engine.is_over else 1)]
        state._engine = engine
        state._terminal = engine.is_over
        return state

    # -- phases --------------------------------------------------------------------------------

    @property
    def engine(self) -> Game | None:
        """The engine game (``None`` until round 0 is dealt). In a dealing phase it sits at a
        placeholder deal of the next round: read it only through this state."""
        return self._engine

    @property
    def _live(self) -> Game:
        """The engine game, where round 0 has been dealt (every caller runs after it)."""
        assert self._engine is not None, "round 0 is not dealt yet"
        return self._engine

    def deals(self) -> list[dict]:
        """The deal of every round started so far (engine format), each boneyard in the order its
        tiles were drawn so far (the chance outcomes), the rest as dealt."""
        if self._engine is None:
            return list(self._deals)
        return self._engine.to_record()["deals"][: len(self._deals)]

    def _dealing(self) -> bool:
        return not self._terminal and len(self._deals) == self._round_count()

    def _round_count(self) -> int:
        """Rounds the engine has finished (the round being dealt has this index)."""
        return 0 if self._engine is None else self._engine.rounds_finished

    def _hands_dealt(self) -> bool:
        r = self._rules
        return len(self._dealt) >= r.num_players * r.hand_size

    def _search_done(self) -> bool:
        """R6: the round's starting double has been dealt or drawn."""
        start = Tile(self._start_value(), self._start_value()).index
        return start in self._dealt

    def _start_value(self) -> int:
        return self._rules.max_pip - len(self._deals)

    # -- OpenSpiel API -------------------------------------------------------------------------

    def current_player(self) -> int:
        if self._terminal:
            return pyspiel.PlayerId.TERMINAL
        if self._dealing() or self._pending_draw:
            return pyspiel.PlayerId.CHANCE
        return self._live.current_player

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():
            return []
        return self._live.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        tiles = self._chance_tiles()
        p = 1.0 / len(tiles)
        return [(t, p) for t in tiles]

    def _chance_tiles(self) -> list[int]:
        if self._pending_draw:
            return self._live.boneyard_tiles()
        dealt = set(self._dealt)
        return [t for t in range(self._rules.num_tiles) if t not in dealt]

    def _apply_action(self, action: int) -> None:
        if self._dealing():
            self._deal_one(int(action))
        elif self._pending_draw:
            self._pending_draw = False
            self._live.set_next_draw(int(action))
            self._live.apply(self._table.draw)
            self._after_engine_step()
        elif action == self._table.draw:
            self._pending_draw = True  # the tile is the next chance outcome
        else:
            self._live.apply(int(action))
            self._after_engine_step()

    def _deal_one(self, tile: int) -> None:
        self._dealt.append(tile)
        if not self._hands_dealt() or not self._search_done():
            return
        rules, n, h = self._rules, self._rules.num_players, self._rules.hand_size
        hands = [self._dealt[i * h:(i + 1) * h] for i in range(n)]
        drawn = self._dealt[n * h:]  # R6 search draws, top of the boneyard first
        rest = sorted(set(range(rules.num_tiles)) - set(self._dealt))  # their order is drawn at each DRAW
        pair = self._table
        deal = {"hands": [[[pair.tile_low[t], pair.tile_high[t]] for t in hand] for hand in hands],
                "boneyard": [[pair.tile_low[t], pair.tile_high[t]] for t in drawn + rest]}
        self._deals = self.deals() + [deal]
        self._dealt = []
        actions = self._engine.actions() if self._engine is not None else []
        engine = Game(rules, deals=self._deals, seed=0)  # seed: the placeholder deals of rounds not dealt yet
        engine.apply_all(actions)
        self._engine = engine
        self._after_engine_step()

    def _after_engine_step(self) -> None:
        if self._live.is_over:
            self._terminal = True

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"tile {Tile.from_index(action)}"
        return action_to_string(action, self._rules.max_pip)

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> list[float]:
        n = self._rules.num_players
        if not self._terminal:
            return [0.0] * n
        winners = self._live.winners
        return [win_reward(win_share(p in winners, len(winners)), n) for p in range(n)]

    def __str__(self) -> str:
        if self._engine is None:
            return f"dealing round 0: {len(self._dealt)} tiles dealt"
        phase = "dealing" if self._dealing() else ("drawing" if self._pending_draw else "playing")
        return f"{phase}; {self._engine!r}; hands {[str(self._engine.hand(p)) for p in range(self._rules.num_players)]}"

    # -- what a seat sees ----------------------------------------------------------------------

    def observation_vector(self, player: int) -> np.ndarray:
        """The project's observation of ``player`` (float32, the encoder's layout)."""
        game: ChickenFootGame = self.get_game()
        if not self._dealing() and self._engine is not None:
            return game.encoder.encode(self._engine, player)
        rules, enc = self._rules, game.encoder
        vec = np.zeros(enc.size, np.float32)
        view = enc.decode(vec)
        h, n = rules.hand_size, rules.num_players
        hands = [self._dealt[i * h:(i + 1) * h] for i in range(n)]
        view["hand"][hands[player]] = 1.0
        view["hand_sizes"][:] = [len(hands[(player + i) % n]) for i in range(n)]
        view["boneyard"][0] = rules.num_tiles - sum(len(x) for x in hands)
        r = len(self._deals)
        view["round"][:] = [r, rules.rounds - r - 1]
        totals = [0] * n if self._engine is None else self._engine.totals
        view["scores"][:] = [totals[(player + i) % n] * SCORE_FACTOR for i in range(n)]
        return vec

    def info_events(self, player: int) -> list[str]:
        """What ``player`` has seen, in order (the information state string's items)."""
        rules, n, h = self._rules, self._rules.num_players, self._rules.hand_size
        out: list[str] = []
        real_rounds = len(self._deals)
        events = self._engine.events(player) if self._engine is not None else []
        by_round: dict[int, list] = {}
        for e in events:
            if e.round < real_rounds and not (self._dealing() and e.round == real_rounds):
                by_round.setdefault(e.round, []).append(e)
        for r, deal in enumerate(self._deals):
            hand = sorted(Tile.of(*t) for t in deal["hands"][player])
            out.append(f"r{r} hand {' '.join(map(str, hand))}")
            for e in by_round.get(r, []):
                out.append(_event_string(e, rules.max_pip))
        if self._dealing():
            r = len(self._deals)
            mine = sorted(Tile.from_index(t) for t in self._dealt[player * h:(player + 1) * h])
            out.append(f"r{r} dealing, {min(len(self._dealt), n * h)} dealt; mine: {' '.join(map(str, mine))}")
            for i, t in enumerate(self._dealt[n * h:]):
                seat = (r % n + 1 + i) % n
                out.append(f"p{seat} search {Tile.from_index(t) if seat == player else '?'}")
        elif self._pending_draw:
            out.append(f"p{self._live.current_player} draw")
        return out

    def information_state_string(self, player: int | None = None) -> str:
        if player is None:
            player = self.current_player()
        return f"p{player} | " + " | ".join(self.info_events(player))

    def observation_string(self, player: int | None = None) -> str:
        if player is None:
            player = self.current_player()
        return _observation_text(self.get_game(), self.observation_vector(player), player)

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        if player is None:
            player = self.current_player()
        observer = self.get_game().make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
        observer.set_from(self, player)
        return observer.tensor.tolist()

    def observation_tensor(self, player: int | None = None) -> list[float]:
        if player is None:
            player = self.current_player()
        return self.observation_vector(player).tolist()


def _event_string(e, max_pip: int) -> str:
    if e.kind == EventKind.PLAY:
        return f"p{e.player} {action_to_string(e.action, max_pip)}"
    if e.kind == EventKind.DRAW:
        return f"p{e.player} draw {e.tile if e.tile is not None else '?'}"
    if e.kind == EventKind.SEARCH_DRAW:
        return f"p{e.player} search {e.tile if e.tile is not None else '?'}"
    if e.kind == EventKind.PASS:
        return f"p{e.player} {'keep' if e.detail else 'pass'}"
    if e.kind == EventKind.START:
        return f"p{e.player} start {e.tile}"
    return f"end {e.player}"


def _observation_text(game: ChickenFootGame, vec: np.ndarray, player: int) -> str:
    view = game.encoder.decode(vec)
    tiles = lambda bits: " ".join(str(Tile.from_index(int(t))) for t in np.flatnonzero(bits))  # noqa: E731
    ends = {v: int(c) for v, c in enumerate(view["open_ends"]) if c}
    pend = int(view["pending_count"][0])
    pending = (f"{pend} {'arms' if view['pending_kind'][0] else 'toes'} of {int(np.argmax(view['pending_value']))}"
               if pend else "none")
    unmatched = [[int(v) for v in np.flatnonzero(row)] for row in view["unmatched"]]
    return (f"p{player} hand: {tiles(view['hand'])} | drawn: {tiles(view['drawn']) or '-'} | layout: "
            f"{tiles(view['layout'])} | open ends: {ends} | forced: {pending} | unmatched: {unmatched} | hand sizes: "
            f"{view['hand_sizes'].astype(int).tolist()} | boneyard: {int(view['boneyard'][0])} | round: "
            f"{int(view['round'][0])} | scores: {np.rint(view['scores'] / SCORE_FACTOR).astype(int).tolist()}")


class _Observer:
    """OpenSpiel's PyObserver. Without perfect recall: the observation vector. With it (the
    information state tensor), also ``dealt`` (rounds, T): the seat's dealt hand of every round
    so far, and ``events`` (rows, 4): every event the seat saw, in order, as ``[kind (EventKind),
    player relative to the seat, action id or -1, tile index or -1 (hidden)]``, ``-1`` padding."""

    def __init__(self, game: ChickenFootGame, perfect_recall: bool) -> None:
        self._game = game
        self._recall = perfect_recall
        rules = game.rules
        size = game.encoder.size
        pieces: list[tuple[str, int, tuple[int, ...]]] = [("observation", size, (size,))]
        if perfect_recall:
            pieces.append(("dealt", rules.rounds * rules.num_tiles, (rules.rounds, rules.num_tiles)))
            pieces.append(("events", 4 * game.max_events, (game.max_events, 4)))
        self.tensor = np.zeros(sum(p[1] for p in pieces), np.float32)
        self.dict = {}
        start = 0
        for name, length, shape in pieces:
            self.dict[name] = self.tensor[start:start + length].reshape(shape)
            start += length

    def set_from(self, state: ChickenFootState, player: int) -> None:
        self.tensor.fill(0)
        self.dict["observation"][:] = state.observation_vector(player)
        if not self._recall:
            return
        rules = self._game.rules
        n, h = rules.num_players, rules.hand_size
        dealt = self.dict["dealt"]
        for r, deal in enumerate(state._deals):
            dealt[r, [Tile.of(*t).index for t in deal["hands"][player]]] = 1.0
        rows = self.dict["events"]
        rows.fill(-1)
        i = 0

        def add(kind: int, who: int, action, tile) -> None:
            nonlocal i
            rows[i] = [kind, (who - player) % n if who >= 0 else -1, -1 if action is None else action,
                       -1 if tile is None else tile]
            i += 1

        engine = state.engine
        for e in engine.events(player) if engine is not None else []:
            if e.round < len(state._deals) and not (state._dealing() and e.round == len(state._deals)):
                add(int(e.kind), e.player, e.action, None if e.tile is None else e.tile.index)
        if state._dealing():
            r = len(state._deals)
            dealt[r, state._dealt[player * h:(player + 1) * h]] = 1.0
            for j, t in enumerate(state._dealt[n * h:]):
                seat = (r % n + 1 + j) % n
                add(int(EventKind.SEARCH_DRAW), seat, None, t if seat == player else None)
        elif state._pending_draw:
            add(int(EventKind.DRAW), state._live.current_player, rules.num_actions - 2, None)

    def string_from(self, state: ChickenFootState, player: int) -> str:
        if self._recall:
            return state.information_state_string(player)
        return state.observation_string(player)


def game_from_rules(rules: RulesConfig) -> ChickenFootGame:
    """``pyspiel.load_game`` for a :class:`RulesConfig`."""
    return pyspiel.load_game(GAME_NAME, {
        "players": rules.num_players, "max_pip": rules.max_pip, "hand_size": rules.hand_size, "rounds": rules.rounds,
        "center_arms": rules.center_arms, "draw_rule": rules.draw_rule, "double_blank_points": rules.double_blank_points})


def state_from_game(game: Game, spiel_game: ChickenFootGame | None = None) -> ChickenFootState:
    """The OpenSpiel state of an engine game in progress: its deals as chance outcomes, its
    decisions, and each drawn tile as the chance outcome after a DRAW."""
    spiel_game = spiel_game or game_from_rules(game.config)
    state = spiel_game.new_initial_state()
    record = game.to_record()
    events = game.events()
    deal_round = -1
    for e in events:
        if e.round > deal_round:  # a round's first event: its deal, with the R6 search draws
            deal_round = e.round
            deal = record["deals"][e.round]
            for hand in deal["hands"]:
                for tile in hand:
                    state.apply_action(Tile.of(*tile).index)
            searched = [x for x in events if x.round == e.round and x.kind == EventKind.SEARCH_DRAW]
            for x in searched:
                assert x.tile is not None  # the whole record: every tile is known
                state.apply_action(x.tile.index)
        if e.kind == EventKind.PLAY or e.kind == EventKind.PASS:
            state.apply_action(e.action)
        elif e.kind == EventKind.DRAW:
            assert e.tile is not None  # the whole record: every tile is known
            state.apply_action(e.action)
            state.apply_action(e.tile.index)
    return state


pyspiel.register_game(_GAME_TYPE, ChickenFootGame)
