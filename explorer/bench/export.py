"""Write a run's points where the user asked: CSV or JSON, with one line when that cannot be done.

The CLI's ``--csv`` and the panel's Export buttons both come here, so an unwritable path or an
empty run reads the same in both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.bench.results import BenchPoint, write_csv, write_json
from explorer.errors import UserError


def export_csv(points: Sequence[BenchPoint], path: str | Path) -> Path:
    return _export(points, path, "CSV", write_csv)


def export_json(points: Sequence[BenchPoint], path: str | Path) -> Path:
    return _export(points, path, "JSON", write_json)


def _export(
    points: Sequence[BenchPoint],
    path: str | Path,
    what: str,
    write: Callable[[Sequence[BenchPoint], Path], None],
) -> Path:
    if not points:
        raise UserError(f"nothing to export as {what} yet: run a benchmark first")
    path = Path(path)
    try:
        write(points, path)
    except OSError as exc:
        raise UserError(f"cannot write {what} file '{path}': {exc.strerror or exc}") from None
    return path
