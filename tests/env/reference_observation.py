"""The observation encoder as it was before the state table (packed flag bits and a numba kernel
over the engine's state view): an independent oracle for the table's gather, which must give the
same vectors bit for bit."""

from __future__ import annotations

import struct

import numba
import numpy as np

from cf_env.engine import EventKind, Role, RulesConfig, action_table
from cf_env.observation import SCORE_FACTOR, ObservationEncoder
from tests.reference_engine import ReferenceGame

_ARM = int(Role.ARM)
_SEARCH_DRAW, _START, _PLAY, _DRAW, _PASS, _ROUND_END = (int(k) for k in EventKind)


@numba.njit(cache=True)
def _encode_kernel(buf: bytes, gather: np.ndarray, params: np.ndarray) -> np.ndarray:
    """One observation from ``buf``: the flag bits (little-endian, ``flag_bytes`` long) gathered
    into observation order; then ``small`` counts, one byte each; then, per opponent and pip value,
    one byte ``1 + draws before its latest failure facing that value`` (0: none), which gives the
    ``void`` flags and the ``void_draws`` counts; then the ``n`` totals as uint32. ``params`` holds
    ``flag_bytes, size, small, void_at, draws_at, void_draws_at, n, k`` (one array: each argument
    of a compiled call costs its own type check)."""
    flag_bytes, size, small, void_at = params[0], params[1], params[2], params[3]
    draws_at, void_draws_at, n, k = params[4], params[5], params[6], params[7]
    out = np.empty(size, np.float32)
    nf = gather.shape[0]
    for i in range(nf):
        j = gather[i]
        out[i] = (np.int64(buf[j >> 3]) >> (j & 7)) & 1
    q = flag_bytes
    c = nf + (n - 1) * k  # the counts follow the flags and the void flags
    for i in range(small):
        out[c + i] = buf[q + i]
    q += small
    for i in range(n - 1):
        drawn = np.int64(buf[flag_bytes + (draws_at - nf - (n - 1) * k) + i + 1])  # opponent i+1's draws
        for v in range(k):
            at = np.int64(buf[q + i * k + v])
            out[void_at + i * k + v] = 1.0 if at else 0.0
            out[void_draws_at + i * k + v] = drawn + 1 - at if at else 0.0
    q += (n - 1) * k
    for i in range(n):
        b = q + 4 * i
        v = np.int64(buf[b]) | np.int64(buf[b + 1]) << 8 | np.int64(buf[b + 2]) << 16 | np.int64(buf[b + 3]) << 24
        out[size - n + i] = v * SCORE_FACTOR  # float64 product, rounded once to float32 (as numpy would)
    return out


@numba.njit(cache=True)
def _history_kernel(codes: np.ndarray, observer: int, n: int, draw: int, pass_: int, action_tile: np.ndarray,
                    out: np.ndarray) -> int:
    """The round's events as ``observer`` may see them (R17) into the rows of ``out`` (already
    filled with -1): ``[seat relative to the observer, kind, action, tile]``; returns the rows."""
    r = 0
    for i in range(codes.shape[0]):
        v = codes[i]
        kind = v & 7
        player = (v >> 3) & 0xFF
        payload = (v >> 11) & 0x3FF
        if kind == _ROUND_END:  # not part of a round in play
            continue
        if kind == _PASS and payload and player != observer:  # a kept playable draw looks like any draw
            continue
        out[r, 0] = (player - observer + n) % n
        out[r, 1] = kind
        if kind == _PLAY:
            out[r, 2] = payload
            out[r, 3] = action_tile[payload]
        elif kind in (_DRAW, _SEARCH_DRAW):  # the tile only in the drawer's own view
            if kind == _DRAW:
                out[r, 2] = draw
            if player == observer:
                out[r, 3] = payload
        elif kind == _START:
            out[r, 3] = payload
        elif kind == _PASS:
            out[r, 2] = pass_
        r += 1
    return r


class ReferenceEncoder:
    """``encode(game, seat)`` as the library computed it up to observation version 2's first release."""

    def __init__(self, config: RulesConfig, version: int = 2) -> None:
        enc = ObservationEncoder(config, version=version)
        self.version, self.index = version, enc.index
        self.latest_size = ObservationEncoder(config).size
        n, k = config.num_players, config.max_pip + 1
        table = action_table(config.max_pip)
        self._table = table
        self._k, self._n = k, n
        self._rounds = config.rounds
        ls = ObservationEncoder(config).slices  # the newest version's blocks
        # The 0/1 blocks (but ``void``) are packed into one int per observation and unpacked in one
        # go: the hand, layout and drawn tile as action bits at offsets 0, W, 2W (W = K*K); the
        # pending value (K bits), pending kind (2 bits), each opponent's unmatched values, then each
        # seat's played tiles as action bits.
        w = k * k
        self._w = w
        self._pv_off = 3 * w
        self._pk_off = 3 * w + k
        self._um_off = 3 * w + k + 2
        self._pl_off = self._um_off + (n - 1) * k
        total_bits = self._pl_off + n * w
        self._flag_bytes = (total_bits + 7) // 8
        tile_action = np.array([lo * k + hi for lo, hi in zip(table.tile_low, table.tile_high)], dtype=np.intp)
        self._gather = np.concatenate([
            tile_action, w + tile_action, 2 * w + tile_action,
            self._pv_off + np.arange(k), self._pk_off + np.arange(2), self._um_off + np.arange((n - 1) * k),
            *[self._pl_off + i * w + tile_action for i in range(n)],
        ]).astype(np.intp)
        self._small = ls["draws"].stop - ls["open_ends"].start
        self._kernel_params = np.array([self._flag_bytes, self.latest_size, self._small, ls["void"].start,
                                        ls["draws"].start, ls["void_draws"].start, n, k], dtype=np.int64)
        self._opponents = [[(seat + i) % n for i in range(1, n)] for seat in range(n)]
        self._pack_totals = struct.Struct(f"<{n}I").pack
        self._length = enc.history_length()

    def encode(self, game: ReferenceGame, seat: int) -> np.ndarray:
        """The observation of ``seat`` (its own hand, everything public)."""
        w = self._w
        (hands, played, current, drawn, pend, pend_val, pend_role, unmatched, ends, counts, bone, r,
         totals, played_by, draws, void_at) = game.state_view()
        flags = hands[seat] | played << w
        if current == seat and drawn >= 0:
            flags |= self._table.tile_bits[drawn] << (2 * w)
        if pend:
            flags |= 1 << (self._pv_off + pend_val)
            flags |= 1 << (self._pk_off + (0 if pend_role == _ARM else 1))
        off = self._um_off
        k = self._k
        opponents = self._opponents[seat]
        for p in opponents:
            flags |= unmatched[p] << off
            off += k
        off = self._pl_off
        flags |= played_by[seat] << off
        for p in opponents:
            off += w
            flags |= played_by[p] << off
        # one bytes object for the numba kernel: flag bits, then the counts (every count fits a byte:
        # the largest set, double-18, has 190 tiles), the opponents' failures, then the totals as uint32
        buf = (flags.to_bytes(self._flag_bytes, "little")
               + bytes((*ends, pend, *counts[seat:], *counts[:seat], bone, r, self._rounds - r - 1,
                        *draws[seat:], *draws[:seat]))
               + b"".join([void_at[p] for p in opponents])
               + self._pack_totals(*totals[seat:], *totals[:seat]))
        out = _encode_kernel(buf, self._gather, self._kernel_params)
        return out if self.version == 2 else out[self.index]


    def history(self, game: ReferenceGame, seat: int) -> np.ndarray:
        """The round's events as ``seat`` sees them, decoded from the whole event log (the pre-table way)."""
        out = np.full((self._length, 4), -1, np.int16)
        _history_kernel(game.round_event_codes(), seat, self._n, self._table.draw, self._table.pass_,
                        np.array(self._table.action_tile, dtype=np.int64), out)
        return out
