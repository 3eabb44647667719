"""The arena: duplicate deal sets, seat rotations, per-game seeding, the play loop and its rows.

Every comparison of agents in the package plays the same way, here. Deal set ``d`` of a seed is a
whole game's deals, the ``d``-th drawn from ``default_rng(seed)`` (:func:`iter_deal_sets`). It is
played once per seat rotation ``rot``: seat ``s`` holds ``lineup[(s - rot) % n]``, so every
agent holds every seat's cards, and the agents act with ``default_rng([seed, d, rot])``
(:func:`rotation_rng`). :func:`play_rotations` plays one deal set so and returns one
:class:`GameRow` per rotation; :func:`training.evaluate.evaluate`, :func:`training.compare.compare`
(and so the ladder) and the lab's studies aggregate those rows (:func:`spec_means`,
:func:`spec_clock`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from agents import Agent
from cf_env import ConfigError, Game, IllegalActionError, RulesConfig, raw_env
from cf_env.engine.records import deal_to_json
from cf_env.engine.scoring import win_share

__all__ = ["GameRow", "Played", "fill_lineup", "generate_deals", "iter_deal_sets", "play", "play_game", "play_rotations",
           "rotation", "rotation_rng", "spec_clock", "spec_means", "warm_up"]


def generate_deals(config: RulesConfig, rng: np.random.Generator) -> list[dict]:
    """Every round's deal of one game, in the engine's scripted-deal format (its one JSON codec,
    :func:`cf_env.engine.records.deal_to_json`)."""
    n, h = config.num_players, config.hand_size
    deals = []
    for _ in range(config.rounds):  # one shuffle a round in round order, as CoreGame.reset deals
        order = rng.permutation(config.num_tiles).tolist()
        deals.append(deal_to_json([order[i * h:(i + 1) * h] for i in range(n)], order[n * h:]))
    return deals


def iter_deal_sets(config: RulesConfig, seed: int) -> Iterator[list[dict]]:
    """Deal set 0, 1, 2, ... of ``seed``: each a whole game's deals (:func:`generate_deals`), drawn
    in order from ``default_rng(seed)``; the same seed gives every caller the same deal sets."""
    rng = np.random.default_rng(seed)
    while True:
        yield generate_deals(config, rng)


class Played(NamedTuple):
    """What :func:`play` reports of a finished game."""

    winners: list[int]  #: seats that share the win (R16)
    totals: list[int]  #: each seat's points


def play(env: raw_env, seats: Sequence[Agent], deals: Sequence[Any] | None, rng: np.random.Generator,
         seed: int | None = None, clock: np.ndarray | None = None) -> Played:
    """Play one whole game with ``seats[i]`` at seat ``i`` in ``env``'s compiled core (no
    :class:`Game` is built; :func:`play_game` when you want one); returns its winners and totals.
    ``clock``, an ``(n, 4)`` float array, gets per seat: seconds in ``act``, decisions, and the
    same two over decisions with more than one legal action."""
    env.reset(seed=seed, options={"deals": deals} if deals is not None else None)
    _play_out(env, seats, rng, clock)
    return Played(env.winners, env.totals)


def play_game(env: raw_env, seats: Sequence[Agent], deals: Sequence[Any] | None, rng: np.random.Generator,
              seed: int | None = None, clock: np.ndarray | None = None) -> Game:
    """:func:`play`, and the finished game as a :class:`Game` (every hand and the whole event log in
    view: replayed once from the compiled core's deals and actions)."""
    env.reset(seed=seed, options={"deals": deals} if deals is not None else None)
    _play_out(env, seats, rng, clock)
    game = env.game
    assert game is not None  # reset above
    return game


def _play_out(env: raw_env, seats: Sequence[Agent], rng: np.random.Generator, clock: np.ndarray | None) -> None:
    """The game in ``env`` played to its end by ``seats`` (see :func:`play`). An illegal action is an
    :class:`IllegalActionError` that names the agent that chose it, not only its seat."""
    try:
        _play_turns(env, seats, rng, clock)
    except IllegalActionError as exc:  # the raw env changed nothing: agent_selection is the one that chose
        seat = env.agent_name_mapping[env.agent_selection]
        who = getattr(seats[seat], "name", type(seats[seat]).__name__)
        raise IllegalActionError(f"agent {who!r} (seat {seat}, {env.agent_selection}) chose an illegal action: "
                                 f"{exc}") from None


def _play_turns(env: raw_env, seats: Sequence[Agent], rng: np.random.Generator, clock: np.ndarray | None) -> None:
    seat_of = env.agent_name_mapping
    while not env.game_over:
        agent = env.agent_selection
        seat = seat_of[agent]
        obs = env.observe(agent)
        if clock is None:
            env.step(seats[seat].act(obs, rng))
            continue
        start = time.perf_counter()
        action = seats[seat].act(obs, rng)
        spent = time.perf_counter() - start
        clock[seat, 0] += spent
        clock[seat, 1] += 1
        bits = env.legal_bits
        if bits & (bits - 1):  # more than one legal action
            clock[seat, 2] += spent
            clock[seat, 3] += 1
        env.step(action)


class GameRow(NamedTuple):
    """One game of a deal set: who sat where, the winners (R16), each seat's points, each seat's
    clock (:func:`play`'s ``clock``: seconds in ``act``, decisions, and the same two over
    decisions with more than one legal action) and the game's seconds."""

    seats: list[str]
    winners: list[int]
    totals: list[int]
    clock: np.ndarray
    seconds: float  #: the game's wall time


def rotation(lineup: Sequence[str], rot: int) -> list[str]:
    """The seats of rotation ``rot``: seat ``s`` holds ``lineup[(s - rot) % n]``."""
    n = len(lineup)
    return [lineup[(s - rot) % n] for s in range(n)]


def rotation_rng(seed: int, deal_set: int, rot: int) -> np.random.Generator:
    """The generator the agents of one game act with: ``default_rng([seed, deal_set, rot])``."""
    return np.random.default_rng([seed, deal_set, rot])


def play_rotations(env: raw_env, agents: Mapping[str, Agent], lineup: Sequence[str], deals: Sequence[Any],
                   seed: int, deal_set: int, engine_games: list[Game] | None = None) -> list[GameRow]:
    """Deal set ``deal_set`` (its ``deals``) played once per rotation of ``lineup`` (names of
    ``agents``), in ``env``; one row per rotation. With ``engine_games`` (a list), each game is
    stepped in the engine's :class:`Game` (every hand and the event log in view afterwards),
    which is appended there finished."""
    n = len(lineup)
    rows = []
    for rot in range(n):
        seats = rotation(lineup, rot)
        clock = np.zeros((n, 4))
        start = time.perf_counter()
        seated, rng = [agents[s] for s in seats], rotation_rng(seed, deal_set, rot)
        if engine_games is not None:
            game = play_game(env, seated, deals, rng, clock=clock)
            engine_games.append(game)
            winners, totals = game.winners, game.totals
        else:
            winners, totals = play(env, seated, deals, rng, clock=clock)
        rows.append(GameRow(seats, list(winners), list(totals), clock, time.perf_counter() - start))
    return rows


def spec_means(rows: Sequence[GameRow], spec: str) -> list[float]:
    """``spec``'s mean win share and points over its seats in one deal set's games."""
    wins, points = [], []
    for row in rows:
        for seat, s in enumerate(row.seats):
            if s == spec:
                wins.append(win_share(seat in row.winners, len(row.winners)))
                points.append(row.totals[seat])
    return [float(np.mean(wins)), float(np.mean(points))]


def spec_clock(rows: Sequence[GameRow], spec: str) -> np.ndarray:
    """``spec``'s clock summed over its seats in one deal set's games (seconds and decisions, all
    and with a choice)."""
    return sum((row.clock[seat] for row in rows for seat, s in enumerate(row.seats) if s == spec), np.zeros(4))


def warm_up(built: dict[str, Agent], config: RulesConfig) -> None:
    """One untimed decision per agent, so that compiling (numba) or loading is not counted in the
    time per decision."""
    env = raw_env(config=config, history=True)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    while observation["action_mask"].sum() < 2 and not env.game_over:
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        observation = env.observe(env.agent_selection)
    if env.game_over:
        return
    for agent in built.values():
        agent.act(observation, np.random.default_rng(0))


def fill_lineup(lineup: Sequence[str | Agent], num_players: int) -> list[str | Agent]:
    """``lineup`` with its last agent repeated into the seats it leaves empty (``["net.pt",
    "greedy"]`` at four seats is the network against three greedy players), as ``chickenfoot
    eval`` fills them.

    Raises:
        ConfigError: the lineup is empty or names more agents than the game has seats.
    """
    lineup = list(lineup)
    if not lineup:
        raise ConfigError("the lineup names no agent")
    if len(lineup) > num_players:
        raise ConfigError(f"the lineup names {len(lineup)} agents but the game has {num_players} seats")
    return lineup + [lineup[-1]] * (num_players - len(lineup))
