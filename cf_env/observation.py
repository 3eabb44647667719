"""The observation: one flat float32 vector per seat, with named views.

Seat-relative: every block that lists players starts with the observer and goes clockwise, so
one policy serves every seat. With ``T = num_tiles``, ``K = max_pip + 1`` and ``n`` players
(sizes for 4-player double-nine in brackets; D = 513 in version 2, 229 in version 1):

=================  ===========  =================================================================
block              shape        content
=================  ===========  =================================================================
``hand``           (T,) [55]    1 for each tile in the observer's hand
``layout``         (T,) [55]    1 for each tile on this round's layout (the starting double too)
``drawn``          (T,) [55]    one-hot tile the observer just drew and may play or keep (R12)
``pending_value``  (K,) [10]    one-hot pip value of the forced slots (R9 centre arms, R10 toes)
``pending_kind``   (2,)         one-hot [centre arms, toes]; zeros when nothing is forced
``unmatched``      (n-1, K)     for each opponent (clockwise from the observer's left), 1 for the
                                pip values it could not match at its latest draw or forced pass
                                this round
``played`` v2      (n, T)       for each seat, 1 for each tile it placed this round (the starting
                   [4, 55]      double counts for its holder)
``void`` v2        (n-1, K)     for each opponent, 1 for each pip value it has failed to match at
                                some draw or forced pass this round
``open_ends``      (K,) [10]    number of free open ends showing each pip value
``pending_count``  (1,)         forced slots still empty (0 when play is free)
``hand_sizes``     (n,) [4]     tiles in each hand, observer first, then clockwise
``boneyard``       (1,)         tiles left in the boneyard
``round``          (2,)         [0-based round index, rounds left after this one]
``draws`` v2       (n,) [4]     tiles each seat drew this round (R6 search draws included)
``void_draws`` v2  (n-1, K)     for each opponent and each ``void`` value, the tiles it has drawn
                                since its latest failure facing that value, that failure's own
                                draw included (0 after a forced pass; 0 where ``void`` is 0)
``scores``         (n,) [4]     cumulative points so far / ``SCORE_SCALE`` (100), observer first
=================  ===========  =================================================================

**Why these four blocks are the round's memory (version 2).** What a player at the table can
remember of the round is the order of events: who placed which tile, who drew, who passed, and
what was open each time. For acting, and for guessing the hands, it reduces to this:

* *who played what* (``played``): the tiles a seat placed say what it held and chose; which
  seat placed a tile is what ``layout`` alone loses. Order within the round is left to the
  ``history`` entry (``raw_env(history=True)``), for models that read sequences.
* *what the failures say*: a seat that draws or passes with the values ``S`` open holds no tile
  with a value in ``S`` at that moment; what it holds now with such a value it drew later. So
  for each value ``v`` the whole constraint is "its tiles with ``v`` are among its last ``d``
  draws", with ``d`` the draws since its latest failure facing ``v`` (``void_draws``; ``void``
  tells "never failed on ``v``", no constraint, from ``d = 0``, surely none). An earlier failure
  on ``v`` says less than the latest, so nothing else about failures needs remembering. The
  failure's own draw is counted: it may have matched and been kept (R12); players that never
  keep a playable tile hold no ``v`` while ``d <= 1``.
* *how many tiles came from the boneyard* (``draws``): with ``hand_sizes`` and ``played``, how
  much of a hand is dealt and how much drawn.

``unmatched`` (version 1) stays: it is the latest failure alone, which ``void_draws`` cannot
always tell apart from an earlier one. A version-1 vector is a selection of version 2's elements
(:attr:`ObservationEncoder.index`), so networks trained on version 1 read version 2's vectors.

The 0/1 blocks are flags, the rest are counts. :meth:`ObservationEncoder.bounds` gives each
element's largest possible value (the env's ``observation_space`` is built from it):

=================  =============================================================================
block              upper bound (every block's lower bound is 0)
=================  =============================================================================
flags (8 blocks)   1
``open_ends``      ``max_pip``: an end showing v is the free end of a distinct non-double tile
                   holding v, and the set has ``max_pip`` of those
``pending_count``  ``max(center_arms, 3)`` (R9 arms, R10 toes)
``hand_sizes``     ``T - (n - 1) * hand_size``: a hand plus the whole boneyard
``boneyard``       ``T - n * hand_size``
``round``          ``max(rounds - 1, 1)`` for both entries (1 in a 1-round game, so that low < high)
``draws``          ``T - n * hand_size``: every draw comes from the boneyard
``void_draws``     ``T - n * hand_size``, as ``draws``
``scores``         ``rounds * (pips of the whole set + double_blank_points) / 100``
=================  =============================================================================

The vector holds everything public (docs/RULES.md R17) that decides legality, scoring and what can
still be drawn, plus the observer's own hand; it never shows an opponent's tile or the
boneyard's order. ``OBSERVATION_VERSION`` changes whenever this table does (checkpoints store it;
``ObservationEncoder(config, version=1)`` still reads version 1: :meth:`ObservationEncoder.select`).

This module holds the layout (blocks, bounds, masks, decoding); the compiled engine writes the
vectors (:mod:`cf_env.vector`), for the env and, through :class:`cf_env.game.GameEncoder`, for a
:class:`~cf_env.Game`.
"""

from __future__ import annotations

import numpy as np

from cf_env.engine import ConfigError, EventKind, RulesConfig
from cf_env.engine.table import SCORE_FACTOR, SCORE_SCALE, table_layout

__all__ = ["OBSERVATION_VERSION", "ObservationEncoder", "SCORE_FACTOR", "SCORE_SCALE", "VERSIONS"]

OBSERVATION_VERSION = 2
VERSIONS = (1, 2)  #: the layouts this package encodes (a checkpoint of any of them loads)
_V2_BLOCKS = ("played", "void", "draws", "void_draws")  #: the blocks version 2 added
_MASK_CACHE_SIZE = 1 << 16
#: the per-seat blocks of the state table (:mod:`cf_env.engine.table`) and which rows of each a
#: seat's observation takes: its own ("own"), every seat's from it clockwise ("all") or its
#: opponents' ("others"); the other blocks are the table's as they are
_SEATS = {"hand": "own", "unmatched": "others", "played": "all", "void": "others", "hand_sizes": "all",
          "draws": "all", "void_draws": "others", "scores": "all"}


class ObservationEncoder:
    """The observation's layout for one :class:`RulesConfig`: its blocks and slices, bounds, action
    masks, decoding and older versions' selection (the vectors themselves are the compiled
    engine's: :class:`cf_env.game.GameEncoder` reads a :class:`~cf_env.Game`'s)."""

    def __init__(self, config: RulesConfig, version: int = OBSERVATION_VERSION) -> None:
        if version not in VERSIONS:
            raise ConfigError(f"observation version {version!r} is not one this package encodes: {VERSIONS}")
        self.config = config
        self.version = version
        n = config.num_players
        t = config.num_tiles
        self.num_actions = config.num_actions
        tl = table_layout(config)
        # the observation's blocks are the table's, in its order, seat-relative: a per-seat block
        # keeps the observer's row, every seat's or the opponents' (_SEATS); ``drawn`` reads the
        # table's ``no_drawn`` (zeros) for a seat not to move
        latest: dict[str, tuple[int, ...]] = {}
        for name, shape in tl.shapes.items():
            if name != "no_drawn":
                rows = _SEATS.get(name, "all")
                latest[name] = shape[1:] if rows == "own" else (n - 1, *shape[1:]) if rows == "others" else shape
        self._latest_slices = _slices(latest)
        self.latest_size = self._latest_slices["scores"].stop
        self.blocks = {name: shape for name, shape in latest.items() if name not in _V2_BLOCKS or version >= 2}
        self.slices = _slices(self.blocks)
        self.size = self.slices["scores"].stop
        #: where each element of this version's vector sits in the newest version's vector: a
        #: network trained on an older version reads ``latest[..., index]`` (:meth:`select`)
        self.index = np.concatenate([np.arange(self._latest_slices[name].start, self._latest_slices[name].stop)
                                     for name in self.blocks]).astype(np.intp)
        self._n, self._t = n, t
        self._mask_bytes = (self.num_actions + 7) // 8
        #: :meth:`mask`'s cache, legal-action bits -> read-only mask (read it directly on a hot path)
        self.mask_cache: dict[int, np.ndarray] = {}

    def select(self, latest: np.ndarray) -> np.ndarray:
        """This version's observation (or batch ``(..., D)``) taken from the newest version's; the
        identity (no copy) when this encoder is the newest version."""
        latest = np.asarray(latest)
        if latest.shape[-1] != self.latest_size:
            raise ValueError(f"expected observations of the newest version (size {self.latest_size}), got shape "
                             f"{latest.shape}")
        return latest if self.version == OBSERVATION_VERSION else latest[..., self.index]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float32 vectors: every observation lies within them (see the module
        docstring's table; the env's ``observation_space`` is ``Box(low, high)``)."""
        cfg = self.config
        n, h, t, rounds = cfg.num_players, cfg.hand_size, cfg.num_tiles, cfg.rounds
        set_pips = (cfg.max_pip + 2) * cfg.max_pip * (cfg.max_pip + 1) // 2  # every value on max_pip + 2 tile ends
        high = np.ones(self.size, dtype=np.float32)
        per_block = {
            "open_ends": cfg.max_pip,
            "pending_count": max(cfg.center_arms, 3),
            "hand_sizes": t - (n - 1) * h,
            "boneyard": t - n * h,
            "round": max(rounds - 1, 1),  # 0 in a 1-round game; a bound of 1 keeps low < high (Gymnasium warns on equal ones)
            "scores": np.float32(rounds * (set_pips + cfg.double_blank_points) * SCORE_FACTOR),  # as encode() rounds
            "draws": t - n * h,
            "void_draws": t - n * h,
        }
        for name, value in per_block.items():
            if name in self.slices:
                high[self.slices[name]] = value
        return np.zeros(self.size, dtype=np.float32), high

    # -- bit helpers ---------------------------------------------------------------------------

    def mask(self, bits: int) -> np.ndarray:
        """The int8 action mask of an int of legal-action bits. Masks are cached and shared, so
        they are read-only; copy one before writing to it. (The env on the compiled core reads the
        core's own flags instead.)"""
        mask = self.mask_cache.get(bits)
        if mask is None:
            raw = np.frombuffer(bits.to_bytes(self._mask_bytes, "little"), dtype=np.uint8)
            mask = np.unpackbits(raw, bitorder="little")[: self.num_actions].view(np.int8)
            mask.flags.writeable = False
            if len(self.mask_cache) >= _MASK_CACHE_SIZE:
                self.mask_cache.clear()
            self.mask_cache[bits] = mask
        return mask

    # -- the public history and decode --------------------------------------------------------

    def history_length(self) -> int:
        """Rows of :meth:`history`: the most events a round can hold. A round has one START, at
        most ``B = T - n * hand_size`` draws (the boneyard; R6 search draws included), at most as
        many keeping PASSes, at most ``T - 1`` plays, and at most ``n - 1`` passes on an empty
        boneyard in a row before a play (``n`` would mean nobody can play: the round is blocked,
        R14), so ``1 + 2B + (T - 1) + (n - 1) * T``."""
        return table_layout(self.config).history_length

    def history_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` int16 arrays of :meth:`history`'s shape (every padding entry is -1)."""
        length = self.history_length()
        high = np.array([self._n - 1, int(EventKind.PASS), self.num_actions - 1, self._t - 1], dtype=np.int16)
        return np.full((length, 4), -1, np.int16), np.broadcast_to(high, (length, 4)).copy()

    def decode(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Named views (no copies) of an observation vector, or of a batch ``(..., D)``."""
        vector = np.asarray(vector)
        if vector.shape[-1] != self.size:
            raise ValueError(f"expected observations of size {self.size}, got shape {vector.shape}")
        lead = vector.shape[:-1]
        return {name: vector[..., self.slices[name]].reshape(lead + shape) for name, shape in self.blocks.items()}


def _slices(blocks: dict[str, tuple[int, ...]]) -> dict[str, slice]:
    out, offset = {}, 0
    for name, shape in blocks.items():
        size = int(np.prod(shape))
        out[name] = slice(offset, offset + size)
        offset += size
    return out
