"""Per-deal-set results kept as they come, so that a long evaluation or comparison stopped by
Ctrl-C, a lost machine or a time limit resumes where it stopped (``chickenfoot eval --save``,
``chickenfoot compare --save``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cf_env import ConfigError

__all__ = ["ResultsFile"]


class ResultsFile:
    """Per-deal-set results as JSON lines: a header ``{kind: header}`` naming what was played (for a
    comparison: A, B, the opponents, the seed, the rules; for an evaluation: the lineup, the seed,
    the rules), then one ``{"d": i, ...}`` row per deal set, flushed as each comes. Opened on a file
    that holds the same header, it hands back the rows there (a half-written last line is dropped);
    a file that holds another is refused, naming what it holds."""

    def __init__(self, path: str | Path, header: dict, kind: str = "comparison") -> None:
        self.path = Path(path)
        self.kind = kind
        self.rows: list[dict[str, Any]] = []
        if self.path.exists() and self.path.stat().st_size:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            try:
                kept = json.loads(lines[0]).get(kind)
            except (json.JSONDecodeError, AttributeError):
                kept = None
            if kept != header:
                raise ConfigError(f"{self.path} holds {'another ' + kind if kept else 'no ' + kind}"
                                  f"{': ' + json.dumps(kept) if kept else ''}; give another file for "
                                  f"{json.dumps(header)}")
            for line in lines[1:]:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    break  # the last line, cut short by a stop
                if row.get("d") != len(self.rows):
                    raise ConfigError(f"{self.path}: deal set {len(self.rows)} expected, found {row.get('d')!r}")
                self.rows.append(row)
            self.path.write_text("\n".join([lines[0], *lines[1:1 + len(self.rows)]]) + "\n", encoding="utf-8")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({kind: header}) + "\n", encoding="utf-8")
        self._file = self.path.open("a", encoding="utf-8")

    def add(self, **row: Any) -> None:
        """Append deal set ``len(rows)``'s row."""
        row = {"d": len(self.rows), **row}
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        self.rows.append(row)

    def close(self) -> None:
        self._file.close()
