"""The layout's geometry: where each tile lies and which ends are open (:class:`GameLayout`, a
part of :class:`cf_env.engine.Game`; ``Game._play`` places tiles by the same rule, inline)."""

from __future__ import annotations

from operator import index as as_index
from typing import Any

from cf_env.engine.errors import IllegalActionError
from cf_env.engine.state import (
    ARM_MASK,
    L_ARM,
    R_ARM,
    R_DOUBLE,
    R_LINE,
    GameState,
    Placement,
    Role,
    unpack_placement,
)


class GameLayout(GameState):
    """:meth:`layout` (every placement in the order played), :meth:`placement_of` (where a play
    would lie) and :meth:`open_end_nodes`."""

    __slots__ = ()

    def _coerce(self, action: Any) -> int:
        try:
            return as_index(action)
        except TypeError:
            raise IllegalActionError(f"an action must be an int id, got {action!r}") from None

    def placement_of(self, action: int) -> Placement:
        """Where the legal play ``action`` of :attr:`current_player` would lie, before it is made:
        the :class:`Placement` that :meth:`layout` will end with after ``apply(action)`` (R8-R10:
        a forced slot first, else the open end of that value that has been open longest; the
        same rule as ``_play``, which keeps it inline for speed; the tests hold the two equal).
        Raises :class:`IllegalActionError` for anything but a legal play."""
        a = self._coerce(action)
        if a < 0 or a >= self._draw_action or not self._legal >> a & 1:
            raise IllegalActionError(f"action {action!r} is not a legal play now: no tile to place")
        t = self._actions
        m, x = t.match[a], t.expose[a]
        layout = self._layout
        if self._pending:
            parent, role = self._pending_parent, self._pending_role
            arm = (self._arms - self._pending) if role == R_ARM else (layout[parent] >> L_ARM & ARM_MASK) - 1
        else:
            parent = self._end_nodes[m][0]
            arm = (layout[parent] >> L_ARM & ARM_MASK) - 1
            role = R_DOUBLE if m == x else R_LINE
        return Placement(m, x, parent, arm, Role(role), self._current)

    def layout(self) -> list[Placement]:
        """Every tile on this round's layout, in the order played; index 0 is the centre double."""
        return [unpack_placement(v) for v in self._layout]

    def open_end_nodes(self) -> list[list[int]]:
        """For each pip value, the layout indices whose free end shows it (oldest first)."""
        return [list(nodes) for nodes in self._end_nodes]
