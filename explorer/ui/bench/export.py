"""Write the panel's results and plot to files: CSV and JSON through the engine, PNG through pyqtgraph.

Each function takes a path, so tests and scripts call them without a file dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer.errors import UserError


def export_csv(points: list[Any], path: str | Path) -> Path:
    from explorer.bench.results import write_csv

    path = Path(path)
    _need_points(points, "CSV")
    write_csv(points, path)
    return path


def export_json(points: list[Any], path: str | Path) -> Path:
    from explorer.bench.results import write_json

    path = Path(path)
    _need_points(points, "JSON")
    write_json(points, path)
    return path


def export_png(plot_widget: Any, path: str | Path, width_px: int = 1600) -> Path:
    """The plot as drawn (series, peaks, legend), at a width good for slides."""
    from pyqtgraph.exporters import ImageExporter

    path = Path(path)
    exporter = ImageExporter(plot_widget.getPlotItem())
    exporter.parameters()["width"] = width_px
    exporter.export(str(path))
    if not path.is_file():
        raise UserError(f"could not write the plot to {path}")
    return path


def _need_points(points: list[Any], what: str) -> None:
    if not points:
        raise UserError(f"nothing to export as {what} yet: run a benchmark first")
