"""Write the plot as drawn to a PNG through pyqtgraph (CSV and JSON are ``explorer.bench.export``).

It takes a path, so tests and scripts call it without a file dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer.errors import UserError


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
