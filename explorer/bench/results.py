"""Benchmark result records, their CSV / JSON forms, and where the last run is kept on disk.

A point is either a measurement or an error row (``error`` set, timings ``None``): a crashed or
timed-out point is still a row the user sees, so a run never silently loses a size.
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from explorer.userdirs import data_dir

LAST_RESULTS_FILE = "last-bench-results.json"
JSON_FORMAT_VERSION = 1


@dataclass
class BenchPoint:
    """One measured point of one workload variant on one device, or the error that stopped it."""

    workload: str
    variant: (
        str  # series label, unique within a run: "cpu", "cuda:0", "cuda:0 pinned H2D", "cpu naive (no sync)"
    )
    device: str  # "cpu" or "cuda:N"
    size: int
    size_label: str  # "n=4096", "4 MiB", "batch=64"
    median_s: float | None = None
    spread_s: float | None = None  # interquartile range; max - min under 4 repeats
    min_s: float | None = None
    repeats: int = 0
    throughput: float | None = None
    throughput_unit: str = ""
    peak: float | None = None  # the device's peak in throughput_unit where known
    peak_basis: str = ""  # where the peak comes from: "estimate from advertised clock", ...
    peak_is_estimate: bool = False  # a formula over clocks and unit counts, not a reported figure
    threads: int | None = None
    dtype: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, float | str] = field(default_factory=dict)
    error: str | None = None
    timestamp: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchPoint:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def error_point(
    workload: str, variant: str, device: str, size: int, size_label: str, error: str, unit: str = ""
) -> BenchPoint:
    """An error row: the point that could not be measured, and in one line why."""
    return BenchPoint(
        workload=workload,
        variant=variant,
        device=device,
        size=size,
        size_label=size_label,
        throughput_unit=unit,
        error=error,
    )


# --- JSON ------------------------------------------------------------------------------------


def points_to_json(points: Iterable[BenchPoint]) -> str:
    return json.dumps(
        {"format_version": JSON_FORMAT_VERSION, "points": [p.to_dict() for p in points]}, indent=1
    )


def write_json(points: Iterable[BenchPoint], path: str | os.PathLike[str]) -> None:
    """Write atomically, so a crash mid-write never leaves a half file where the last results were."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(points_to_json(points), encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: str | os.PathLike[str]) -> list[BenchPoint]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = data["points"] if isinstance(data, dict) else data
    return [BenchPoint.from_dict(r) for r in rows]


# --- CSV -------------------------------------------------------------------------------------

CSV_COLUMNS = [f.name for f in fields(BenchPoint)]
_FLOAT_COLUMNS = {"median_s", "spread_s", "min_s", "throughput", "peak", "timestamp"}
_INT_COLUMNS = {"size", "repeats", "threads"}
_DICT_COLUMNS = {"versions", "extra"}
_BOOL_COLUMNS = {"peak_is_estimate"}
_TEXT_COLUMNS = {"variant", "size_label", "throughput_unit", "peak_basis", "dtype"}


def write_csv(points: Iterable[BenchPoint], path: str | os.PathLike[str]) -> None:
    """One row per point; dict columns hold compact JSON so a spreadsheet still opens the file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for p in points:
            row = p.to_dict()
            for key in _DICT_COLUMNS:
                row[key] = json.dumps(row[key], sort_keys=True)
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})


def read_csv(path: str | os.PathLike[str]) -> list[BenchPoint]:
    out: list[BenchPoint] = []
    with Path(path).open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            data: dict[str, Any] = {}
            for key, text in row.items():
                if key in _DICT_COLUMNS:
                    data[key] = json.loads(text) if text else {}
                elif key in _BOOL_COLUMNS:
                    data[key] = text.strip().lower() == "true"
                elif text == "":
                    data[key] = "" if key in _TEXT_COLUMNS else None
                elif key in _FLOAT_COLUMNS:
                    data[key] = float(text)
                elif key in _INT_COLUMNS:
                    data[key] = int(text)
                else:
                    data[key] = text
            out.append(BenchPoint.from_dict(data))
    return out


# --- where results live ----------------------------------------------------------------------


def last_results_path() -> Path:
    return data_dir() / LAST_RESULTS_FILE


def save_last(points: Iterable[BenchPoint]) -> Path:
    path = last_results_path()
    write_json(list(points), path)
    return path


def load_last() -> list[BenchPoint]:
    """The last saved run, or an empty list when there is none or the file cannot be read."""
    path = last_results_path()
    try:
        return read_json(path)
    except (OSError, ValueError, KeyError, TypeError):
        return []


# --- one human-readable line -----------------------------------------------------------------


def format_point(p: BenchPoint) -> str:
    """The CLI's text line for one point (the panel's table shows the same fields)."""
    from explorer.bench.compare import peak_share_text
    from explorer.bench.fmt import number_text, seconds_text

    head = f"{p.workload:<13} {p.variant:<28} {p.size_label:<12}"
    if p.error:
        return f"{head} ERROR: {p.error}"
    text = (
        f"{head} median {seconds_text(p.median_s, '-')} (IQR {seconds_text(p.spread_s, '-')}, "
        f"{p.repeats} repeats)"
    )
    if p.throughput is not None:
        text += f"  {number_text(p.throughput, p.throughput_unit)}"
        share = peak_share_text(p)
        if share:
            text += f" ({share})"
    if p.threads is not None and p.device == "cpu":
        text += f"  threads={p.threads}"
    for key, value in p.extra.items():
        if isinstance(value, float):
            text += f"  {key}={value:.3g}"
    return text
