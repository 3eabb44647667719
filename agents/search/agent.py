"""The search agent: reads the observation, spends its budget on PIMC or ISMCTS, plays the best action."""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import act_batch, legal_actions
from agents.baselines import HeuristicAgent
from agents.search.ismcts import ismcts, new_tree, reset_tree, root_visits
from agents.search.network import NO_NET, compile_network
from agents.search.pimc import (
    apply_rows,
    observe_rows,
    pimc,
    pimc_block,
    pimc_race,
    play_others,
    prepare_worlds,
    score_rows,
)
from agents.search.racing import BLOCK
from agents.search.rollout import GREEDY, new_policy
from agents.search.spec import INFER_MODES, ROLLOUTS, SearchSettings, SearchSpecError, parse_search_spec
from agents.search.values import Valuation, valuation
from agents.search.worlds import World, WorldSampler, new_scratch, read_observation
from agents.spec import import_target, literal_value
from cf_env import ObservationEncoder, RulesConfig
from cf_env.vector import State, make_consts, new_state, observation_offsets

__all__ = ["SearchAgent"]

CHUNK_SECONDS = 0.004  # a compiled call's length: the clock is read between calls
BATCH_SLOTS = 1024  # a checkpoint rollout's (world, action) games per chunk


class SearchAgent:
    """PIMC or SO-ISMCTS over worlds sampled from the observation (see :mod:`agents.search`).

    ``act`` reads only the observation dict. After each searched decision, ``last_search`` holds
    ``{"simulations": worlds (pimc) or iterations (ismcts), "rollout_decisions": decisions played in
    the worlds, "seconds": time spent, "actions": the legal action ids, "scores": per action, its mean
    value over the worlds (pimc, and ismcts with root=every) or its root visits (ismcts), "worlds": per
    action, the worlds it was tried in (pimc; fewer than ``simulations`` for actions a racing search
    dropped)}``: the targets of expert iteration (:mod:`training.expert`).
    """

    def __init__(self, config: RulesConfig, settings: SearchSettings | None = None, name: str | None = None) -> None:
        settings = settings if settings is not None else SearchSettings()
        if not isinstance(settings, SearchSettings):
            raise SearchSpecError(f"settings must be a SearchSettings (or a spec string through SearchAgent.from_spec), "
                                  f"got {type(settings).__name__}")
        self.settings = settings
        self.config = config
        self.name = name or "search"
        self.algo, self.ms, self.sims = settings.algo, float(settings.ms), int(settings.sims)
        self.rollout, self.value = settings.rollout, settings.value
        self.infer, self.c = settings.infer, float(settings.c)
        self.race, self.tie = float(settings.race), float(settings.tie)
        self.temp, self.proposals = settings.temp, settings.proposals
        seed, rollout, algo = settings.seed, settings.rollout, settings.algo
        #: a plug-in (:class:`~agents.search.worlds.WorldSampler`) that turns each decision's
        #: :class:`World` as read into the one its worlds are dealt from: ``infer=module:Class``, or
        #: set here (the lab's shown-hands study, ``lab/peek.py``); None deals the world as read
        self.sampler: WorldSampler | None = self._make_sampler(settings, config)
        #: the shipped inference each observation is read with: ``infer``, or the sampler's ``reads``
        self.reads = self.infer if self.sampler is None else str(getattr(self.sampler, "reads", "constraints"))
        self._warned = False
        self._seed_rng = np.random.default_rng(seed) if seed is not None else None
        self.encoder = ObservationEncoder(config)
        # a world is round 0 of the longest game of these rules: its round's end starts round 1 (the
        # rollout stops there), and even rounds that end before any decision (1-tile hands) do not
        # reach the game's end, whose reset would clear round 0's scores
        self._consts = make_consts(dataclasses.replace(config, rounds=config.max_pip + 1), "points", 1.0)
        self._offsets = observation_offsets(self.encoder)
        self._network = None
        if rollout in ROLLOUTS:
            kind = ROLLOUTS.index(rollout)
        else:  # a checkpoint: its network plays outside the compiled code
            import agents

            kind = GREEDY  # unused
            self._network = agents.load(rollout, config)
            self._batch: tuple[State, np.ndarray, np.ndarray] | None = None
        k = config.max_pip + 1
        self._tables = HeuristicAgent(config).kernel_tables  # the heuristic rollouts' and the opponent model's
        self._policy = new_policy(kind, k, self._tables)
        #: with ``others``: the compiled policy of the opponents' seats in a checkpoint rollout
        self._others = new_policy(ROLLOUTS.index(settings.others), k, self._tables) if settings.others else None
        #: ismcts's rollouts' network, compiled (NO_NET: compiled baselines only)
        self._net = NO_NET
        if algo == "ismcts" and self._network is not None:
            self._net = compile_network(self._network, self.encoder.size, every_seat=self._others is None)
            if self._others is not None:
                self._policy = self._others
        self._template = self._world_state(1)
        self._work = self._world_state(2)
        self._scratch = new_scratch(config.num_players, config.num_tiles, self.encoder.size, k)
        if algo == "ismcts":
            self._tree = new_tree(config.num_actions)
        self.last_search: dict[str, Any] = {}

    @staticmethod
    def _make_sampler(settings: SearchSettings, config: RulesConfig) -> WorldSampler | None:
        """The world sampler ``infer=module:Class`` names, made with the spec's other pairs."""
        if settings.infer in INFER_MODES:
            return None
        target = import_target(settings.infer)
        options = {key: literal_value(value) for key, value in settings.options}
        try:
            sampler = target(config, **options)  # type: ignore[operator]
        except TypeError as exc:
            raise SearchSpecError(f"{settings.spec!r}: calling {settings.infer}(config, **{options}) failed: {exc}; a "
                                  f"world sampler takes the RulesConfig, then the spec's other pairs as keyword "
                                  f"arguments") from None
        if not callable(sampler) or getattr(sampler, "reads", "constraints") not in INFER_MODES:
            raise SearchSpecError(f"{settings.spec!r}: {settings.infer} made a {type(sampler).__name__}, which is not "
                                  f"a world sampler: one is called as sampler(world, observation) and its 'reads' is "
                                  f"one of {INFER_MODES} (agents.search.WorldSampler)")
        return sampler

    @property
    def needs_history(self) -> bool:
        """True when it reads the observation's ``history`` entry (``raw_env(history=True)``); the
        evaluation, play and training loops give it one then."""
        return self.reads == "policy"

    @property
    def needs_hands(self) -> bool:
        """True when its sampler reads the opponents' true hands (the observation's ``hands``
        entry): a teacher that label collection shows them to, never a player (R17)."""
        return bool(getattr(self.sampler, "needs_hands", False))

    def _world_state(self, games: int) -> State:
        """Kernel state for ``games`` worlds; the later rounds' deals are placeholders (a search
        stops at the end of its round, so they are never played)."""
        state = new_state(self._consts, games)
        state.deals[:] = np.arange(self.config.num_tiles)
        state.next_deals[:] = np.arange(self.config.num_tiles)
        return state

    @classmethod
    def from_spec(cls, spec: str, config: RulesConfig) -> SearchAgent:
        return cls(config, parse_search_spec(spec), name=spec)

    # -- acting --------------------------------------------------------------------------------

    def act(self, observation: dict, rng: np.random.Generator) -> int:
        legal = legal_actions(observation)
        if legal.size == 1:  # forced: no search
            self.last_search = {"simulations": 0, "rollout_decisions": 0, "seconds": 0.0,
                                "actions": legal.astype(np.int64), "scores": np.zeros(legal.size),
                                "worlds": np.zeros(legal.size, np.int64)}
            return int(legal[0])
        start = time.perf_counter()
        obs = np.asarray(observation["observation"], dtype=np.float32)
        history = observation.get("history") if self.needs_history else None
        if self.needs_history and history is None and not self._warned:
            warnings.warn(f"{self.name}: infer={self.infer} reads the observation's 'history' entry, which this one "
                          f"lacks (make the env with history=True); these decisions weigh no plays (as "
                          f"infer=constraints)", stacklevel=2)
            self._warned = True
        world = self._read(obs, observation, history)
        value = valuation(obs, self.encoder, self.value)
        source = self._seed_rng if self._seed_rng is not None else rng
        self._scratch.rs[0] = np.uint64(source.integers(1, 2**63))
        if self._network is not None and self.algo == "pimc":
            action, sims, steps, scores = self._search_pimc_batched(legal, world, value, start)
            tried = np.full(legal.size, sims, np.int64)
        elif self.algo == "pimc" and self.race > 0:
            action, sims, steps, scores, tried = self._search_racing(legal, world, value, start)
        elif self.algo == "pimc":
            action, sims, steps, scores = self._search_pimc(legal, world, value, start)
            tried = np.full(legal.size, sims, np.int64)
        else:
            action, sims, steps, scores = self._search_ismcts(legal, world, value, start)
            tried = np.full(legal.size, sims, np.int64)
        self.last_search = {"simulations": sims, "rollout_decisions": steps, "seconds": time.perf_counter() - start,
                            "actions": legal.astype(np.int64), "scores": scores, "worlds": tried}
        return int(action)

    def world_values(self, observation: dict, rng: np.random.Generator, worlds: int) -> tuple[np.ndarray, np.ndarray]:
        """Every legal action's value in each of ``worlds`` worlds (PIMC with a compiled rollout):
        ``(actions, values)`` with ``values[w, i]`` the value of ``actions[i]`` in world ``w``.
        The worlds are the ones :meth:`act` deals from the same generator state (with a heuristic
        or greedy rollout, which draw no random numbers, the same worlds in the same order), so
        a search's per-action means can be checked world by world."""
        if self._network is not None or self.algo != "pimc":
            raise SearchSpecError(f"{self.name}: world_values is for pimc with a compiled rollout")
        legal = legal_actions(observation).astype(np.int64)
        obs = np.asarray(observation["observation"], dtype=np.float32)
        world = self._read(obs, observation, observation.get("history") if self.needs_history else None)
        source = self._seed_rng if self._seed_rng is not None else rng
        self._scratch.rs[0] = np.uint64(source.integers(1, 2**63))
        values = np.zeros((worlds, legal.size))
        pimc_block(self._template, self._work, self._consts, legal, np.ones(legal.size, np.bool_), 0, worlds, values,
                   world, self._scratch, self._policy, valuation(obs, self.encoder, self.value))
        return legal, values

    def _read(self, obs: np.ndarray, observation: dict, history: np.ndarray | None) -> World:
        """The public state of ``obs`` into the template game, and the sampler's inputs (read with
        :attr:`reads`, the history for ``policy``; then through :attr:`sampler`, if any)."""
        world = read_observation(obs, np.asarray(observation["action_mask"]), self.encoder, self._template,
                                 self.reads, history, self.temp, self.proposals, self._tables)
        return self.sampler(world, observation) if self.sampler is not None else world

    def _budget(self, start: float, done: int, per_unit: float) -> int:
        """How many more worlds/iterations to run in the next compiled call (0: stop). Calls last
        about ``CHUNK_SECONDS``, so the clock is read often enough; a unit that would overrun the
        budget is not started."""
        cap = self.sims - done if self.sims else 1 << 30
        if cap <= 0:
            return 0
        if self.ms <= 0:
            return cap
        left = self.ms / 1000.0 - (time.perf_counter() - start)
        if left <= per_unit:
            return 0
        if per_unit <= 0:
            return 1
        return max(1, min(cap, int(min(left, CHUNK_SECONDS) / per_unit)))

    def _run_chunks(self, start: float, run: Callable[[int], tuple[int, int]],
                    max_chunk: int = 1 << 30) -> tuple[int, int]:
        """Call ``run(chunk) -> (units run, rollout decisions)`` with at most ``max_chunk`` units
        until the budget (time and/or ``sims``) is spent or a call runs fewer units than asked (a
        full tree); the first call runs one unit to time it. Returns the totals."""
        done, per, steps = 0, 0.0, 0
        while True:
            chunk = min(self._budget(start, done, per), max_chunk) if done else 1
            if chunk <= 0:
                break
            t0 = time.perf_counter()
            ran, taken = run(chunk)
            per = (time.perf_counter() - t0) / max(ran, 1)
            done += ran
            steps += taken
            if ran < chunk or (self.sims and done >= self.sims):
                break
        return done, steps

    def _search_pimc(self, legal: np.ndarray, world: World, value: Valuation,
                     start: float) -> tuple[int, int, int, np.ndarray]:
        actions = legal.astype(np.int64)
        sums = np.zeros(actions.size)
        counts = np.zeros(actions.size, np.int64)

        def run(chunk: int) -> tuple[int, int]:
            return chunk, pimc(self._template, self._work, self._consts, actions, chunk, sums, counts,
                               world, self._scratch, self._policy, value)

        done, steps = self._run_chunks(start, run)
        means = sums / np.maximum(counts, 1)
        return int(actions[int(np.argmax(means))]), done, steps, means

    def _search_racing(self, legal: np.ndarray, world: World, value: Valuation,
                       start: float) -> tuple[int, int, int, np.ndarray, np.ndarray]:
        """PIMC that drops settled actions between blocks of worlds (:mod:`agents.search.racing`);
        ``sims`` is the most worlds, the clock (``ms``) is read between compiled calls."""
        per = 0.0
        actions = legal.astype(np.int64)
        values = np.zeros((self.sims, actions.size))
        active = np.ones(actions.size, np.bool_)
        tried = np.zeros(actions.size, np.int64)
        race = np.array([self.race, self.tie])
        done = steps = 0
        while done < self.sims and active.sum() > 1:  # with a clock, chunks of CHUNK_SECONDS' worth of blocks
            limit = self.sims if self.ms <= 0 else min(self.sims, done + max(BLOCK, self._budget(start, done, per)))
            if self.ms > 0 and done and time.perf_counter() - start >= self.ms / 1000.0:
                break
            t0 = time.perf_counter()
            done_now, taken = pimc_race(self._template, self._work, self._consts, actions, done, limit, race,
                                        (values, active, tried), world, self._scratch, self._policy, value)
            per = (time.perf_counter() - t0) / max(done_now - done, 1)
            done, steps = done_now, steps + taken
        means = np.array([values[:tried[i], i].mean() for i in range(actions.size)])  # sims > 0: each tried
        best = int(np.argmax(np.where(active, means, -np.inf)))
        return int(actions[best]), done, steps, means, tried

    def _search_pimc_batched(self, legal: np.ndarray, world: World, value: Valuation,
                             start: float) -> tuple[int, int, int, np.ndarray]:
        """PIMC with a checkpoint's network as the rollout policy: chunks of worlds, each world's
        rollouts (one per action) stepped in lockstep with one forward pass per step (with
        ``others``, per step of the searcher's seat, the opponents' turns played compiled between)."""
        actions = legal.astype(np.int64)
        num = actions.size
        sums = np.zeros(num)
        counts = np.zeros(num, np.int64)
        policy_rng = np.random.default_rng(int(self._scratch.rs[0]))
        network = self._network
        assert network is not None  # only a checkpoint rollout searches this way

        def run(chunk: int) -> tuple[int, int]:
            slots = chunk * num
            if self._batch is None or self._batch[0].hand.shape[0] < slots:
                state = self._world_state(max(slots, 64))
                self._batch = (state, np.zeros((state.hand.shape[0], self.encoder.size), np.float32),
                               np.zeros((state.hand.shape[0], self.config.num_actions), np.int8))
            state, obs, mask = self._batch
            prepare_worlds(self._template, state, self._consts, actions, chunk, world, self._scratch)
            steps = slots
            while True:
                rows = np.flatnonzero(state.round_index[:slots] == 0)
                if self._others is not None:  # the opponents' turns, compiled, up to the searcher's next
                    steps += play_others(state, self._consts, rows, self._others, self._scratch.rs)
                    rows = np.flatnonzero(state.round_index[:slots] == 0)
                if not rows.size:
                    break
                observe_rows(state, self._consts, self._offsets, rows, obs, mask)
                chosen = np.asarray(act_batch(network, obs[rows], mask[rows], policy_rng), dtype=np.int64)
                apply_rows(state, self._consts, rows, chosen)
                steps += rows.size
            score_rows(state, self._consts, slots, num, sums, counts, value)
            return chunk, steps

        done, steps = self._run_chunks(start, run, max_chunk=max(1, BATCH_SLOTS // num))
        means = sums / np.maximum(counts, 1)
        return int(actions[int(np.argmax(means))]), done, steps, means

    def _search_ismcts(self, legal: np.ndarray, world: World, value: Valuation,
                       start: float) -> tuple[int, int, int, np.ndarray]:
        tree = self._tree
        reset_tree(tree)

        def run(chunk: int) -> tuple[int, int]:
            before = int(tree.meta[1])
            ran = ismcts(self._template, self._work, self._consts, self._offsets, chunk, tree, self.c, world,
                         self._scratch, self._policy, value, self._net, self.settings.tree == "own", self.settings.depth,
                         self.settings.root == "every")
            return ran, int(tree.meta[1]) - before

        done, steps = self._run_chunks(start, run)
        action, scores = root_visits(tree, legal, by_value=self.settings.root == "every")
        return action, done, steps, scores
