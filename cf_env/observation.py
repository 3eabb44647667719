"""The observation: one flat float32 vector per seat, with named views.

Seat-relative: every block that lists players starts with the observer and goes clockwise, so
one policy serves every seat. With ``T = num_tiles``, ``K = max_pip + 1`` and ``n`` players
(sizes for 4-player double-nine in brackets; D = 229):

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
``open_ends``      (K,) [10]    number of free open ends showing each pip value
``pending_count``  (1,)         forced slots still empty (0 when play is free)
``hand_sizes``     (n,) [4]     tiles in each hand, observer first, then clockwise
``boneyard``       (1,)         tiles left in the boneyard
``round``          (2,)         [0-based round index, rounds left after this one]
``scores``         (n,) [4]     cumulative points so far / ``SCORE_SCALE`` (100), observer first
=================  ===========  =================================================================

The first six blocks are 0/1 flags, the rest are counts. :meth:`ObservationEncoder.bounds` gives
each element's largest possible value (the env's ``observation_space`` is built from it):

=================  =============================================================================
block              upper bound (every block's lower bound is 0)
=================  =============================================================================
flags (6 blocks)   1
``open_ends``      ``max_pip``: an end showing v is the free end of a distinct non-double tile
                   holding v, and the set has ``max_pip`` of those
``pending_count``  ``max(center_arms, 3)`` (R9 arms, R10 toes)
``hand_sizes``     ``T - (n - 1) * hand_size``: a hand plus the whole boneyard
``boneyard``       ``T - n * hand_size``
``round``          ``rounds - 1`` for both entries
``scores``         ``rounds * (pips of the whole set + double_blank_points) / 100``
=================  =============================================================================

The vector holds everything public (docs/RULES.md R17) that decides legality, scoring and what can
still be drawn, plus the observer's own hand; it never shows an opponent's tile or the
boneyard's order. ``OBSERVATION_VERSION`` changes whenever this table does (checkpoints store it).
"""

from __future__ import annotations

import struct

import numba
import numpy as np

from cf_env.engine import Game, Role, RulesConfig, action_table

__all__ = ["OBSERVATION_VERSION", "ObservationEncoder", "SCORE_FACTOR", "SCORE_SCALE"]

OBSERVATION_VERSION = 1
SCORE_SCALE = 100.0  # the ``scores`` block holds points / SCORE_SCALE
SCORE_FACTOR = 1.0 / SCORE_SCALE  # what the encoders multiply by (0.01 exactly as the literal: 1/100 rounds to it)
_MASK_CACHE_SIZE = 1 << 16
_ARM = int(Role.ARM)


@numba.njit(cache=True, nogil=True)
def _encode_kernel(buf: bytes, gather: np.ndarray, flag_bytes: int, size: int, num_totals: int) -> np.ndarray:
    """One observation from ``buf``: the flag bits (little-endian, ``flag_bytes`` long) gathered
    into observation order, then the small counts one byte each, then the totals as uint32."""
    out = np.empty(size, np.float32)
    nf = gather.shape[0]
    for i in range(nf):
        j = gather[i]
        out[i] = (np.int64(buf[j >> 3]) >> (j & 7)) & 1
    small = size - nf - num_totals
    for i in range(small):
        out[nf + i] = buf[flag_bytes + i]
    q = flag_bytes + small
    for i in range(num_totals):
        b = q + 4 * i
        v = np.int64(buf[b]) | np.int64(buf[b + 1]) << 8 | np.int64(buf[b + 2]) << 16 | np.int64(buf[b + 3]) << 24
        out[size - num_totals + i] = v * SCORE_FACTOR  # float64 product, rounded once to float32 (as numpy would)
    return out


class ObservationEncoder:
    """Builds and decodes observation vectors for one :class:`RulesConfig`."""

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        n, k = config.num_players, config.max_pip + 1
        t = config.num_tiles
        self.num_actions = config.num_actions
        self.blocks: dict[str, tuple[int, ...]] = {
            "hand": (t,),
            "layout": (t,),
            "drawn": (t,),
            "pending_value": (k,),
            "pending_kind": (2,),
            "unmatched": (n - 1, k),
            "open_ends": (k,),
            "pending_count": (1,),
            "hand_sizes": (n,),
            "boneyard": (1,),
            "round": (2,),
            "scores": (n,),
        }
        self.slices: dict[str, slice] = {}
        offset = 0
        for name, shape in self.blocks.items():
            size = int(np.prod(shape))
            self.slices[name] = slice(offset, offset + size)
            offset += size
        self.size = offset
        self.num_flags = self.slices["unmatched"].stop  # the 0/1 blocks come first
        table = action_table(config.max_pip)
        self._table = table
        self._k, self._n, self._t = k, n, t
        self._rounds = config.rounds
        # All 0/1 blocks are packed into one int per observation and unpacked in one go: the
        # hand, layout and drawn tile as action bits at offsets 0, W, 2W (W = K*K); then the
        # pending value (K bits), pending kind (2 bits) and each opponent's unmatched values.
        w = k * k
        self._w = w
        self._pv_off = 3 * w
        self._pk_off = 3 * w + k
        self._um_off = 3 * w + k + 2
        total_bits = self._um_off + (n - 1) * k
        self._flag_bytes = (total_bits + 7) // 8
        tile_action = np.array([lo * k + hi for lo, hi in zip(table.tile_low, table.tile_high)], dtype=np.intp)
        self._gather = np.concatenate([
            tile_action, w + tile_action, 2 * w + tile_action,
            self._pv_off + np.arange(k), self._pk_off + np.arange(2), self._um_off + np.arange((n - 1) * k),
        ]).astype(np.intp)
        self._mask_bytes = (table.num_actions + 7) // 8
        self._opponents = [[(seat + i) % n for i in range(1, n)] for seat in range(n)]
        self._pack_totals = struct.Struct(f"<{n}I").pack  # the totals as little-endian uint32
        self._mask_cache: dict[int, np.ndarray] = {}

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
            "round": rounds - 1,
            "scores": np.float32(rounds * (set_pips + cfg.double_blank_points) * SCORE_FACTOR),  # as encode() rounds
        }
        for name, value in per_block.items():
            high[self.slices[name]] = value
        return np.zeros(self.size, dtype=np.float32), high

    # -- bit helpers ---------------------------------------------------------------------------

    def mask(self, bits: int) -> np.ndarray:
        """The int8 action mask of an int of legal-action bits. Masks are cached and shared, so
        they are read-only; copy one before writing to it."""
        mask = self._mask_cache.get(bits)
        if mask is None:
            raw = np.frombuffer(bits.to_bytes(self._mask_bytes, "little"), dtype=np.uint8)
            mask = np.unpackbits(raw, bitorder="little")[: self.num_actions].view(np.int8)
            mask.flags.writeable = False
            if len(self._mask_cache) >= _MASK_CACHE_SIZE:
                self._mask_cache.clear()
            self._mask_cache[bits] = mask
        return mask

    # -- encode / decode -----------------------------------------------------------------------

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation of ``seat`` (its own hand, everything public)."""
        w = self._w
        (hands, played, current, drawn, pend, pend_val, pend_role, unmatched, ends, counts, bone, r,
         totals) = game.state_view()
        flags = hands[seat] | played << w
        if current == seat and drawn >= 0:
            flags |= self._table.tile_bits[drawn] << (2 * w)
        if pend:
            flags |= 1 << (self._pv_off + pend_val)
            flags |= 1 << (self._pk_off + (0 if pend_role == _ARM else 1))
        off = self._um_off
        k = self._k
        for p in self._opponents[seat]:
            flags |= unmatched[p] << off
            off += k
        # one bytes object for the numba kernel: flag bits, then the counts (every count fits a byte:
        # the largest set, double-18, has 190 tiles), then the totals as uint32
        buf = (flags.to_bytes(self._flag_bytes, "little")
               + bytes((*ends, pend, *counts[seat:], *counts[:seat], bone, r, self._rounds - r - 1))
               + self._pack_totals(*totals[seat:], *totals[:seat]))
        return _encode_kernel(buf, self._gather, self._flag_bytes, self.size, self._n)

    def observe(self, game: Game) -> dict[str, np.ndarray]:
        """What the seat to move acts on, as the env gives it: ``{"observation": encode(game,
        seat), "action_mask": its legal actions}`` (for loops that drive a :class:`Game` directly)."""
        return {"observation": self.encode(game, game.current_player), "action_mask": self.mask(game.legal_bits)}

    def decode(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Named views (no copies) of an observation vector, or of a batch ``(..., D)``."""
        vector = np.asarray(vector)
        if vector.shape[-1] != self.size:
            raise ValueError(f"expected observations of size {self.size}, got shape {vector.shape}")
        lead = vector.shape[:-1]
        return {name: vector[..., self.slices[name]].reshape(lead + shape) for name, shape in self.blocks.items()}
