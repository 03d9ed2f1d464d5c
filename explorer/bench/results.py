"""Benchmark result records, their CSV / JSON forms, and where the last run is kept on disk.

A point is either a measurement or an error row (``error`` set, timings ``None``): a crashed or
timed-out point is still a row the user sees, so a run never silently loses a size.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from explorer.atomicwrite import write_text_atomic
from explorer.bench.spec import PointKey
from explorer.cleantext import clean_json, is_clean
from explorer.roofs.model import MEMORY_LEVELS, Roof
from explorer.schema import SchemaError, check_fields, field_label, loads, show
from explorer.statefile import Loaded, decode_text, load_json, parse_json_bytes, read_bounded, save_json
from explorer.userdirs import data_dir
from explorer.words import percent

LAST_RESULTS_FILE = "last-bench-results.json"
JSON_FORMAT_VERSION = 1
#: a last-results file bigger than this was not written by the app (a run is a few hundred points)
MAX_RESULTS_BYTES = 32 * 1024 * 1024
#: the latest time stamp a point may carry (the end of year 9999, the last one dates can show)
MAX_TIMESTAMP = 253_402_300_799.0
#: more timed repeats than anyone waits for (``bench --repeats`` and a point's own count)
MAX_REPEATS = 100_000
#: the longest a point's time may be: a day (a point is stopped after minutes)
MAX_POINT_S = 86_400.0
#: the largest rate in any unit per second (1e15 elements/s or GFLOP/s is beyond every device)
MAX_RATE = 1e15
#: the most threads a CPU point may name, and the most times one may be measured again
MAX_THREADS = 1 << 20
#: the key in a point's ``extra`` of the line saying its device's ceilings could not be measured or
#: kept (a full disk while measuring them again): printed with the point, never silent
CEILINGS_NOTE = "ceilings_note"
#: the allowed range of each numeric field, beyond its declared type (``None`` is always allowed
#: where the type allows it): sizes and times are never negative, a time stamp is a date, and
#: nothing is so large that printing it would fill a screen (a remote's ``repeats`` of 10**400)
FIELD_RANGES: dict[str, tuple[float | None, float | None]] = {
    "size": (0, None),  # at most schema.MAX_INT, as every whole number
    "median_s": (0, MAX_POINT_S),
    "spread_s": (0, MAX_POINT_S),
    "min_s": (0, MAX_POINT_S),
    "repeats": (0, MAX_REPEATS),
    "throughput": (0, MAX_RATE),
    "peak": (0, MAX_RATE),
    "model_estimate": (0, MAX_RATE),
    "threads": (1, MAX_THREADS),
    "remeasured": (0, MAX_REPEATS),
    # shares of the machine: tick rounding can put one a little above 1, never a hundred times
    "others_cpu_share": (0, 100),
    "waiting_share": (0, 100),
    "steal_share": (0, 100),
    "sm_mhz_steady": (0, 100_000),  # MHz: no clock is 100 GHz
    "sm_mhz_min": (0, 100_000),
    "intensity_flop_per_byte": (0, MAX_RATE),
    "gflops": (0, MAX_RATE),
    "gbps": (0, MAX_RATE),
    "ridge_flop_per_byte": (0, MAX_RATE),
    "bandwidth_ceiling_gbps": (0, MAX_RATE),
    "working_set_bytes": (0, None),  # at most schema.MAX_INT
    "roof_share": (0, MAX_RATE),
    "near_level_share": (0, MAX_RATE),
}


@dataclass(frozen=True)
class BenchPoint:
    """One measured point of one workload variant on one device, or the error that stopped it.

    Immutable: a point is built once, with everything known (``dataclasses.replace`` makes a
    changed copy), so the point a table row, a plot and a saved file show is the same. Its
    identity is ``key``: (host, device, ``variant_key``, size), never its on-screen label."""

    workload: str
    variant: (
        str  # series label, unique within a run: "cpu", "cuda:0", "cuda:0 pinned H2D", "cpu naive (no sync)"
    )
    device: str  # "cpu" or "cuda:N"
    size: int
    size_label: str  # "n=4096", "4 MiB", "batch=64"
    #: the variant's stable key ("h2d_pinned", ``explorer.bench.variants.Variant.key``): what the
    #: point measured; "" in files written before keys were saved (``resume`` maps their labels)
    variant_key: str = ""
    median_s: float | None = None
    spread_s: float | None = None  # interquartile range; max - min under 4 repeats
    min_s: float | None = None
    repeats: int = 0
    throughput: float | None = None
    throughput_unit: str = ""
    peak: float | None = None  # the device's peak in throughput_unit where known
    peak_basis: str = ""  # where the peak comes from: "estimate from advertised clock", ...
    peak_is_estimate: bool = False  # a formula over clocks and unit counts, not a reported figure
    peak_kind: str = ""  # "theoretical", "measured" (a ceiling this machine reached), "spec sheet"
    # Where the point sits on its device's roofline (explorer.bench.roofline): the FLOP per byte its
    # workload declares, the rates it reached, which roof bounds it, and the memory roof it is held to.
    intensity_flop_per_byte: float | None = None
    gflops: float | None = None
    gbps: float | None = None
    bound: str = ""  # "memory", "compute" (from its level's ridge), "bus" (PCIe, a peer link); "" unknown
    ridge_flop_per_byte: float | None = None
    bandwidth_ceiling_gbps: float | None = None
    bandwidth_ceiling_basis: str = ""
    # The roof the point is judged against (``explorer.roofs.placement``): the bytes its data
    # occupies (working set), the memory level that working set lives in ("L2"), the roof at its
    # intensity ("L2", or "compute" where the compute roof is the lower), its share of that roof
    # (1.0 = on the roof) and, where that share is above 110%, why in words.
    working_set_bytes: float | None = None
    memory_level: str = ""
    roof_level: str = ""
    roof_share: float | None = None
    roof_note: str = ""
    #: that roof was measured while other programs were busy: a share above 100% of it is no figure
    roof_busy: bool = False
    #: a memory-bound working set within twice a cache's edge (either side): the level across that
    #: edge ("L2") and the point's share of its roof, shown beside its own level's
    near_level: str = ""
    near_level_share: float | None = None
    #: faster than the hardware can go (``explorer.roofs.placement.above_hardware``): the timing
    #: missed work. Such a point has no roof share, makes no roof and says why in ``invalid_reason``
    invalid: bool = False
    invalid_reason: str = ""
    # What a model of the hardware predicts beside the measurement (explorer.memory: coalescing,
    # bank conflicts, divergence), never a measurement itself: ``model`` a few words for the table
    # and the CLI ("est. 419 GB/s", "32-way bank conflict"), ``model_estimate`` the predicted
    # throughput in ``throughput_unit`` where the model gives one, ``model_note`` the whole
    # sentence with the model's basis.
    model: str = ""
    model_estimate: float | None = None
    model_note: str = ""
    threads: int | None = None
    dtype: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, float | str] = field(default_factory=dict)
    error: str | None = None
    timestamp: float = field(default_factory=time.time)
    # The noise verdict (explorer.bench.noise): was this point disturbed, and by what, in words.
    noisy: bool = False
    noise_reason: str = ""
    remeasured: int = 0  # times the point was measured again because it was disturbed
    others_cpu_share: float | None = None  # other programs' CPU use, share of all cores
    waiting_share: float | None = None  # share of the time the point's threads waited for a CPU
    steal_share: float | None = None  # share of all cores the hypervisor gave to other VMs
    # A GPU point's SM clock (``explorer.devices.gpu_clock``): the steady value held before the
    # samples, the lowest read during them, and whether that fell below 75% of steady (nvbench's
    # rule; its sentence is in ``noise_reason`` and the point is marked noisy).
    sm_mhz_steady: float | None = None
    sm_mhz_min: float | None = None
    throttled: bool = False
    # The remote machine the point was measured on (``explorer.remote``: the ssh destination's
    # host, "gpu-lab"); "" for this machine. A remote "cuda:0" is not this laptop's cuda:0.
    host: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def verdict(self) -> str:
        """The worst thing known about the point, in the word every table shows: "error",
        "invalid" (faster than the hardware can go), "noisy" (others disturbed it) or "ok"."""
        return "error" if self.error else "invalid" if self.invalid else "noisy" if self.noisy else "ok"

    @property
    def verdict_reason(self) -> str:
        """Why the verdict is not "ok", in words; "" when it is."""
        return self.error or self.invalid_reason or self.noise_reason or ""

    @property
    def key(self) -> PointKey:
        """What the point measured: (host, device, variant key, size)."""
        return PointKey(self.host, self.device, self.variant_key, self.size)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> BenchPoint:
        """The point a JSON object describes, each field checked against its declared type and
        range; ``SchemaError`` (a ``ValueError``) names the first that does not fit. Keys this
        version does not know are ignored (a newer version's fields)."""
        kwargs = check_fields(cls, data, where, FIELD_RANGES)
        # text from a file or another machine is data: no escape sequence or line break of it
        # reaches a terminal line, a CSV cell or the table (a "variant" that clears the screen)
        for key, value in kwargs.items():
            if (type(value) is str and not is_clean(value)) or (type(value) is dict and value):
                kwargs[key] = clean_json(value)
        stamp = kwargs.get("timestamp", 0.0)
        if not 0 <= stamp <= MAX_TIMESTAMP:
            label = field_label(where, "timestamp")
            raise SchemaError(f"{label} is {show(stamp)}, not a time between 1970 and the year 9999")
        return cls(**kwargs)


def error_point(
    workload: str,
    variant: str,
    device: str,
    size: int,
    size_label: str,
    error: str,
    unit: str = "",
    *,
    variant_key: str = "",
    dtype: str = "",
    versions: dict[str, str] | None = None,
    host: str = "",
) -> BenchPoint:
    """An error row: the point that could not be measured, and in one line why."""
    return BenchPoint(
        workload=workload,
        variant=variant,
        device=device,
        size=size,
        size_label=size_label,
        variant_key=variant_key,
        throughput_unit=unit,
        error=error,
        dtype=dtype,
        versions=dict(versions or {}),
        host=host,
    )


# --- JSON ------------------------------------------------------------------------------------


def points_to_dict(points: Iterable[BenchPoint], roofs: Iterable[Roof] = ()) -> dict[str, Any]:
    """The JSON form of a run: its points and, where given, the roofs they were placed under (one
    per device and machine, as the worker used them), so a saved run is drawn under its own roofs."""
    data: dict[str, Any] = {"format_version": JSON_FORMAT_VERSION, "points": [p.to_dict() for p in points]}
    roof_rows = [r.to_dict() for r in roofs]
    if roof_rows:
        data["roofs"] = roof_rows
    return data


def points_to_json(points: Iterable[BenchPoint], roofs: Iterable[Roof] = ()) -> str:
    return json.dumps(points_to_dict(points, roofs), indent=1)


def points_from_json(data: Any) -> list[BenchPoint]:
    """The points of a parsed results file (``{"format_version": 1, "points": [...]}``, or a bare
    list of points), every field checked; ``SchemaError`` names the first point and field that
    does not fit."""
    if isinstance(data, dict):
        if "points" not in data:
            raise SchemaError("it has no list of points")
        rows = data["points"]
    else:
        rows = data
    if not isinstance(rows, list):
        raise SchemaError(f"it is {show(rows)}, not a list of points")
    return [BenchPoint.from_dict(r, where=f"point {i}") for i, r in enumerate(rows, start=1)]


@dataclass(frozen=True)
class SavedRun:
    """A run read back: its points and the roofs they were placed under (none in older files)."""

    points: list[BenchPoint]
    roofs: list[Roof]


def run_from_json(data: Any) -> SavedRun:
    """``points_from_json`` and the file's roofs; a roof that does not check out is left out (the
    run is drawn without it), a point that does not is a ``SchemaError`` as before."""
    points = points_from_json(data)
    rows = data.get("roofs") if isinstance(data, dict) else None
    roofs: list[Roof] = []
    for row in rows if isinstance(rows, list) else []:
        try:
            roofs.append(Roof.from_dict(row, host=row.get("host", "") if isinstance(row, dict) else ""))
        except ValueError:
            continue
    return SavedRun(points, roofs)


def write_json(points: Iterable[BenchPoint], path: str | os.PathLike[str]) -> None:
    """Write atomically into an existing folder, so a crash or a full disk never leaves a half
    file where the last results were."""
    write_text_atomic(path, points_to_json(points))


def read_json(path: str | os.PathLike[str]) -> list[BenchPoint]:
    """Points from a JSON file; ``ValueError`` (``SchemaError``, or ``Damaged`` for a file that is
    not JSON at all) when a value does not fit. Read bounded, never blocking on a pipe."""
    data = read_bounded(Path(path), MAX_RESULTS_BYTES)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    return points_from_json(parse_json_bytes(data))


# --- CSV -------------------------------------------------------------------------------------

CSV_COLUMNS = [f.name for f in fields(BenchPoint)]
_FLOAT_COLUMNS = {
    "median_s",
    "spread_s",
    "min_s",
    "throughput",
    "peak",
    "timestamp",
    "others_cpu_share",
    "waiting_share",
    "steal_share",
    "model_estimate",
}
_INT_COLUMNS = {"size", "repeats", "threads", "remeasured"}
_DICT_COLUMNS = {"versions", "extra"}
_BOOL_COLUMNS = {"peak_is_estimate", "noisy", "roof_busy", "throttled", "invalid"}
_TEXT_COLUMNS = {
    "variant",
    "variant_key",
    "size_label",
    "throughput_unit",
    "peak_basis",
    "dtype",
    "noise_reason",
}
_FLOAT_COLUMNS |= {
    "intensity_flop_per_byte",
    "gflops",
    "gbps",
    "ridge_flop_per_byte",
    "bandwidth_ceiling_gbps",
    "working_set_bytes",
    "roof_share",
    "near_level_share",
    "sm_mhz_steady",
    "sm_mhz_min",
}
_TEXT_COLUMNS |= {"bound", "bandwidth_ceiling_basis", "peak_kind", "host", "model", "model_note"}
_TEXT_COLUMNS |= {"memory_level", "roof_level", "roof_note", "near_level", "invalid_reason"}


def write_csv(points: Iterable[BenchPoint], path: str | os.PathLike[str]) -> None:
    """One row per point; dict columns hold compact JSON so a spreadsheet still opens the file."""
    write_text_atomic(path, points_to_csv(points))


#: a cell beginning with one of these is a formula to a spreadsheet (OWASP's list: ``=HYPERLINK(...)``
#: from a remote's text would run when a student opens the CSV); tab and carriage return too
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(text: str) -> str:
    """Text as a CSV cell a spreadsheet shows as text: one that would start a formula gets a
    leading ``'`` (OWASP's advice), as does one that already starts with quotes before such a
    character, so ``cell_text`` gives back exactly the text written."""
    return "'" + text if text.lstrip("'").startswith(FORMULA_STARTS) else text


def cell_text(cell: str) -> str:
    """The text ``spreadsheet_cell`` wrote: its added ``'`` taken off again."""
    return cell[1:] if cell.startswith("'") and cell[1:].lstrip("'").startswith(FORMULA_STARTS) else cell


def points_to_csv(points: Iterable[BenchPoint]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    for p in points:
        row = p.to_dict()
        for key in _DICT_COLUMNS:
            row[key] = json.dumps(row[key], sort_keys=True)
        writer.writerow(
            {
                k: ""
                if v is None
                else spreadsheet_cell(v)
                if isinstance(v, str) and k not in _DICT_COLUMNS
                else v
                for k, v in row.items()
            }
        )
    return buffer.getvalue()


def read_csv(path: str | os.PathLike[str]) -> list[BenchPoint]:
    """Points from a CSV file the app wrote (``ValueError``: ``SchemaError`` or ``Damaged``, when
    it is not one); read as every state file is read: bounded, never blocking on a pipe."""
    data = read_bounded(Path(path), MAX_RESULTS_BYTES)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    return points_from_csv(decode_text(data))


def points_from_csv(text: str) -> list[BenchPoint]:
    """The points of a CSV text, every value checked; ``SchemaError`` names the first row and field
    that does not fit (a field longer than the csv module's limit included)."""
    out: list[BenchPoint] = []
    rows = csv.DictReader(io.StringIO(text, newline=""))
    while True:
        number = len(out) + 1
        try:
            row = next(rows)
        except StopIteration:
            return out
        except csv.Error as exc:  # a field over 131,072 characters, a NUL byte ...
            raise SchemaError(f"row {number} is not CSV the app writes ({exc})") from None
        data: dict[str, Any] = {}
        for key, text_value in row.items():
            if key is None or not isinstance(text_value, str):  # a short or overlong row
                raise SchemaError(f"row {number} does not have the columns its header names")
            data[key] = _cell_value(key, text_value, f"row {number}")
        out.append(BenchPoint.from_dict(data, where=f"row {number}"))


def _cell_value(key: str, text: str, where: str) -> Any:
    """One CSV cell as the JSON value ``BenchPoint.from_dict`` checks."""
    label = field_label(where, key)
    if key in _DICT_COLUMNS:
        try:  # written by json.dumps, so NaN as Python spells it: the point's own check names it
            return loads(text, max_bytes=None, allow_nan=True) if text else {}
        except SchemaError as exc:
            raise SchemaError(f"{label} is {show(text)}, not JSON ({exc})") from None
    try:
        if key in _BOOL_COLUMNS:
            return text.strip().lower() == "true"
        if text == "":
            return "" if key in _TEXT_COLUMNS else None
        if key in _FLOAT_COLUMNS:
            return float(text)
        if key in _INT_COLUMNS:
            return int(text)
    except ValueError:  # not a number, a 5,000-digit number
        raise SchemaError(f"{label} is {show(text)}, not a number") from None
    return cell_text(text)


# --- where results live ----------------------------------------------------------------------


def last_results_path() -> Path:
    return data_dir() / LAST_RESULTS_FILE


def save_last(points: Iterable[BenchPoint], roofs: Iterable[Roof] = ()) -> Path:
    """Keep a run (and the roofs its points were placed under) for the next start, atomically; the
    app's data folder is made if need be. Raises ``OSError`` (or ``ValueError`` for a non-finite
    number) when it cannot."""
    return save_json(last_results_path(), points_to_dict(points, roofs), create_folder=True)


def load_last_run() -> Loaded[SavedRun]:
    """The last saved run with its roofs (``value`` ``None`` when there is none). Never raises or
    blocks: a damaged file is moved aside and ``notice`` says so, once, with both paths."""
    return load_json(
        last_results_path(),
        run_from_json,
        what="saved benchmark results",
        instead="the Benchmarks panel starts empty and the next run is saved afresh",
        max_bytes=MAX_RESULTS_BYTES,
    )


def load_last() -> Loaded[list[BenchPoint]]:
    """The last saved run's points (``load_last_run`` without its roofs)."""
    loaded = load_last_run()
    return Loaded(None if loaded.value is None else loaded.value.points, loaded.notice)


# --- one human-readable line -----------------------------------------------------------------


def roof_words(p: BenchPoint) -> str:
    """Where a point sits under its roof in a few words, for the CLI and the table: "fits in L2",
    "fits in L1, compute-bound: 53% of its roof" (the share is said here where "% of peak" is not
    already that roof's: a GFLOP/s point's peak is the compute peak whatever binds it)."""
    from explorer.roofs.placement import level_text, share_words

    words = level_text(p.memory_level, p.roof_level)
    if not words or p.roof_share is None:
        return words
    if p.near_level and p.near_level_share is not None and p.roof_level == p.memory_level:
        # its data is served from both sides of a cache's edge: its share of each level's roof
        home = share_words(p.roof_share, p.roof_busy, f" of {p.memory_level}", decimals=0)
        return f"{words}, near {_edge_of(p)}: {home}, {percent(p.near_level_share, decimals=0)} of {p.near_level}"
    if p.throughput and p.peak and abs(p.throughput / p.peak - p.roof_share) < 0.005:
        return words  # its "% of peak" is this roof's share already
    return f"{words}: {share_words(p.roof_share, p.roof_busy, ' of its roof', decimals=0)}"


def roof_share_words(p: BenchPoint) -> str:
    """A point's share of its roof for a hover: "81% of its L2 roof", ">100% of its DRAM roof (roof
    measured while busy)", "53% of the compute roof"; near a cache's edge, its share of the level
    across it too ("..., 40% of L2's roof across its edge"). "" where it has no share."""
    from explorer.roofs.placement import share_words

    if p.roof_share is None:
        return ""
    roof = " of the compute roof" if p.roof_level == "compute" else f" of its {p.roof_level} roof"
    text = share_words(p.roof_share, p.roof_busy, roof, decimals=0)
    if p.near_level and p.near_level_share is not None and p.roof_level == p.memory_level:
        text += f", {percent(p.near_level_share, decimals=0)} of {p.near_level}'s roof across {_edge_of(p)}"
    return text


def _edge_of(p: BenchPoint) -> str:
    """ "L2's edge": the edge of the faster of the point's level and its near one."""
    order = {level: i for i, level in enumerate(MEMORY_LEVELS)}  # a file's unknown level: last
    faster = min(p.memory_level, p.near_level, key=lambda level: order.get(level, len(order)))
    return f"{faster}'s edge"


def model_cell(p: BenchPoint) -> str:
    """The model's few words beside a point, with the measured / model ratio where the model
    predicts the throughput itself, "est. 57 GB/s (measured 1.04x)" (the table's "model" cell;
    the CLI's "[model: ...]")."""
    if not p.model:
        return ""
    if p.model_estimate and p.throughput is not None:
        return f"{p.model} (measured {p.throughput / p.model_estimate:.2f}x)"
    return p.model
