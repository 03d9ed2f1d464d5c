"""Write a run's points where the user asked: CSV or JSON, with one line when that cannot be done.

The CLI's ``--csv`` and the panel's Export buttons both come here, so an unwritable path or an
empty run reads the same in both. Every write goes through ``explorer.outputs``: the path is
checked (``~`` expanded, no folder created), the file's lock is held, and the file is replaced in
one step, so a full disk or a second writer never leaves a half file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from explorer.bench.results import BenchPoint, points_to_csv, points_to_json
from explorer.errors import UserError
from explorer.outputs import write_output
from explorer.roofs.model import Roof


def export_csv(points: Sequence[BenchPoint], path: str | Path) -> Path:
    _refuse_empty(points, "CSV")
    return write_output(path, points_to_csv(points).encode("utf-8"), "the CSV file")


def export_json(points: Sequence[BenchPoint], path: str | Path, roofs: Sequence[Roof] = ()) -> Path:
    """The points and the roofs they were placed under (one per host and device), as the last
    results are kept, so the file is drawn under its own roofs wherever it is read."""
    _refuse_empty(points, "JSON")
    return write_output(path, points_to_json(points, roofs).encode("utf-8"), "the JSON file")


def _refuse_empty(points: Sequence[BenchPoint], what: str) -> None:
    if not points:
        raise UserError(f"nothing to export as {what} yet: run a benchmark first")
