"""Bridges between the project's agents and OpenSpiel bots (extra ``openspiel``).

* :class:`AgentBot`: any project agent (or spec: ``"heuristic"``, ``"search"``, ``"zoo:strong-4p"``)
  as a ``pyspiel.Bot`` on the ``python_chicken_foot`` game: it acts on the state's observation
  tensor and legal actions, so OpenSpiel's ``evaluate_bots`` can seat it.
* :class:`BotAgent`: any ``pyspiel.Bot`` where the project takes an agent (``training.evaluate``,
  the env loops). A bot reads an OpenSpiel state, which holds more than one observation (ISMCTS,
  for one, reads the information state), so the agent is given where the engine game lives
  (``game_source``, e.g. ``lambda: env.game``) and hands the bot that game's OpenSpiel state.

Example: OpenSpiel's ISMCTS against the project's heuristic (docs/frameworks.md shows the whole script)::

    bot = ISMCTSBot(game, RandomRolloutEvaluator(1, np.random.RandomState(0)), 1.0, 200)
    bot.set_resampler(lambda state, player: resampler(state, player, rng))
    returns = evaluate_bots(game.new_initial_state(), [bot, AgentBot("heuristic", game)], rng)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel

from agents.base import Agent
from cf_env import Game, RulesConfig
from cf_env.integrations.openspiel import ChickenFootGame, game_from_rules, state_from_game

__all__ = ["AgentBot", "BotAgent"]


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
