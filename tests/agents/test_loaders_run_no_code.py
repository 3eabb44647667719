"""No file named in a spec runs code when it is loaded: every loader reads weights only, so a
``.pt`` file whose pickle would run a command is refused before anything in it runs. Each loader
is handed such a file (the SB3 zip's own case is in tests/integrations/test_sb3.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from cf_env import RulesConfig  # noqa: E402

RULES = RulesConfig(num_players=2, max_pip=4, hand_size=4, rounds=1)


class _Touch:
    """A pickle that creates a file when unpickled: what a crafted file could do (a shell command
    is as easy)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _planted(tmp_path: Path, payload: dict) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    path = tmp_path / "crafted.pt"
    torch.save({**payload, "trap": _Touch(marker)}, path)
    return path, marker


def test_a_checkpoint_runs_no_code(tmp_path):
    from agents.checkpoint import CheckpointError, load_checkpoint

    path, marker = _planted(tmp_path, {"format": "chickenfoot-rl-checkpoint"})
    with pytest.raises(CheckpointError, match="only ever loaded without running code"):
        load_checkpoint(path)
    assert not marker.exists()
