"""Measured ceilings of a device, and the per-machine cache that keeps them.

A roofline needs two roofs per device: how fast it can compute and how fast it can move bytes.
The theoretical ones come from clocks and unit counts (or a spec sheet); the *measured* ones say
what this machine really sustains:

* CPU clock: :mod:`explorer.bench.clock` (the theoretical FP32 peak is built on it).
* CPU compute: the best FP32 matmul (torch sgemm on every core, the fastest timed sample of each
  size, best over sizes).
* CPU memory: a STREAM-style triad ``a[i] = b[i] + s * c[i]`` over float64 arrays, each at least
  four times the last-level cache (STREAM's rule, so the caches cannot hold them), run on every
  core with numba; bytes are counted as STREAM counts them: 24 per element (two reads and one
  write), the extra read a write-allocate cache makes is *not* counted; the best of ten passes.
* GPU compute: the best sgemm (torch, FP32 with TF32 off); GPU memory: a device-to-device copy
  of 256 MiB, counted as read + write (2 x bytes, as NVIDIA's bandwidthTest counts it).

Measuring takes seconds, so results are cached in the user's data folder, per device and per
machine fingerprint (CPU model, core counts, memory size, torch version), with the time they were
measured. A cache from another machine (a home folder shared between lab PCs, a copied profile)
is not used; one older than ``STALE_AFTER_S`` is stale and measured again when next needed.
Measuring runs in the benchmark worker process, never in the window's thread.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from explorer.schema import Ranges, SchemaError, build, show
from explorer.statefile import load_json, save_json
from explorer.userdirs import data_dir

log = logging.getLogger(__name__)

CACHE_FILE = "measured-ceilings.json"
CACHE_FORMAT = 1
STALE_AFTER_S = 30 * 24 * 3600.0
#: a ceilings file bigger than this was not written by the app (it holds a few roofs)
MAX_CACHE_BYTES = 1024 * 1024
#: the latest time a measurement may carry (the end of year 9999)
MAX_TIME = 253_402_300_799.0
#: the highest ceiling in GFLOP/s or GB/s (10^9 GFLOP/s, a zettaFLOP/s, is beyond every device)
MAX_CEILING = 1e9
#: the highest clock in GHz a CPU's measured clock may be
MAX_CLOCK_GHZ = 100.0

Quantity = Literal["compute", "memory"]
CeilingKind = Literal["measured", "theoretical", "spec sheet"]
#: other programs used more than this share of the CPU while the roof was measured: it is used
#: with that said, and measured again on the next run (the noise verdicts' bar for other programs)
DISTURBED_SHARE = 0.10
CacheStatus = Literal["fresh", "stale", "other machine", "absent"]


@dataclass(frozen=True)
class Ceiling:
    """One roof line: a rate the device cannot (theoretical, spec sheet) or did not (measured) beat."""

    quantity: Quantity  # "compute" (GFLOP/s) or "memory" (GB/s)
    value: float
    kind: CeilingKind
    name: str  # short, for the plot: "FP32 peak", "sgemm", "STREAM triad", "memory bandwidth"
    basis: str  # how it was had, in words
    measured_at: float | None = None  # unix time, for measured ones
    #: a theoretical figure built on a clock the OS or the tables report (advertised, base or
    #: maximum), not on one measured here: a real run may beat it, and its label says "estimated"
    estimate: bool = False
    #: measured while other programs held more than ``DISTURBED_SHARE`` of the CPU: lower than the
    #: device can do, so its label says so until it is measured again on a quiet machine
    disturbed: bool = False

    RANGES: ClassVar[Ranges] = {"value": (0, MAX_CEILING), "measured_at": (0, MAX_TIME)}

    @property
    def kind_text(self) -> str:
        """ "measured", "measured while busy", "theoretical", "spec sheet": what a label says."""
        return f"{self.kind} while busy" if self.disturbed else self.kind

    @property
    def unit(self) -> str:
        return "GFLOP/s" if self.quantity == "compute" else "GB/s"

    @property
    def label(self) -> str:
        """ "sgemm (measured): 341 GFLOP/s" """
        from explorer.bench.fmt import number_text

        return f"{self.name} ({self.kind_text}): {number_text(self.value, self.unit)}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["unit"] = self.unit
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "a ceiling") -> Ceiling:
        """The ceiling ``data`` describes, every field checked (``explorer.schema``): a file or a
        remote's answer is untrusted; ``SchemaError`` (a ``ValueError``) names what does not fit."""
        return build(cls, data, where)


@dataclass
class MeasuredRoof:
    """What was measured for one device on one machine: the clock (CPUs) and the measured ceilings."""

    device: str  # "cpu", "cuda:0"
    fingerprint: str
    measured_at: float
    clock_ghz: float | None = None
    clock_threads: int | None = None
    clock_method: str = ""
    ceilings: list[Ceiling] = field(default_factory=list)
    #: other programs' share of the CPU while measuring, where psutil could tell (a busy machine
    #: lowers measured ceilings; the text says so)
    others_cpu_share: float | None = None

    RANGES: ClassVar[Ranges] = {
        "measured_at": (0, MAX_TIME),
        "clock_ghz": (0, MAX_CLOCK_GHZ),
        "clock_threads": (1, 1 << 20),
        "others_cpu_share": (0, 100),
    }

    def ceiling(self, quantity: Quantity) -> Ceiling | None:
        return next((c for c in self.ceilings if c.quantity == quantity), None)

    @property
    def disturbed(self) -> bool:
        """Other programs held more than ``DISTURBED_SHARE`` of the CPU while it was measured."""
        return self.others_cpu_share is not None and self.others_cpu_share > DISTURBED_SHARE

    def usable_ceilings(self) -> list[Ceiling]:
        """The ceilings as a roof shows them: marked "while busy" where the machine was busy."""
        return [replace(c, disturbed=True) if self.disturbed else c for c in self.ceilings]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ceilings"] = [c.to_dict() for c in self.ceilings]
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> MeasuredRoof:
        """The roof ``data`` describes, every field and ceiling checked; ``SchemaError`` otherwise."""
        return build(cls, data, where)


# --- the machine fingerprint -------------------------------------------------------------------


def _torch_version() -> str:
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:
        return "none"


def cpu_fingerprint(
    name: str, physical_cores: int | None, logical_cores: int | None, memory_bytes: int | None
) -> str:
    """What must match for a CPU's measured figures to be reused: model, cores, memory, OS, torch."""
    memory_gib = round((memory_bytes or 0) / 2**30)
    return (
        f"cpu|{name}|{physical_cores}c/{logical_cores}t|{memory_gib} GiB|"
        f"{platform.system()} {platform.machine()}|torch {_torch_version()}"
    )


def gpu_fingerprint(name: str, uuid: str | None, driver: str | None) -> str:
    return f"gpu|{name}|{uuid or '-'}|driver {driver or '-'}|torch {_torch_version()}"


# --- the cache ---------------------------------------------------------------------------------


def cache_path() -> Path:
    return data_dir() / CACHE_FILE


def _parse_cache(data: Any) -> dict[str, MeasuredRoof]:
    """Every roof of a ceilings file, checked; ``SchemaError`` names the first value that does not fit."""
    if not isinstance(data, dict) or not isinstance(data.get("roofs"), dict):
        raise SchemaError(f"it is {show(data)}, not a list of measured roofs")
    if data.get("format_version") != CACHE_FORMAT:
        raise SchemaError(f"its format_version is {show(data.get('format_version'))}, not {CACHE_FORMAT}")
    return {
        str(device): MeasuredRoof.from_dict(entry, where=f"the roof of {show(device)}")
        for device, entry in data["roofs"].items()
    }


def _read_all(path: Path) -> dict[str, MeasuredRoof]:
    """Every cached roof by device, read through ``explorer.statefile`` (bounded, never blocking on
    a pipe, every value checked); a damaged file is moved aside (named, never deleted), said in
    one logged line, and the ceilings are measured again when next needed."""
    loaded = load_json(
        path,
        _parse_cache,
        what="measured roofline ceilings",
        instead="they are measured again when next needed",
        max_bytes=MAX_CACHE_BYTES,
    )
    if loaded.notice:
        log.warning("%s", loaded.notice)
    return loaded.value or {}


def load(device: str, fingerprint: str, now: float | None = None) -> tuple[CacheStatus, MeasuredRoof | None]:
    """The cached roof of ``device`` and whether it can be used: fresh, stale (older than
    ``STALE_AFTER_S``), from another machine, or absent. An entry that does not parse is absent."""
    roof = _read_all(cache_path()).get(device)
    if roof is None:
        return "absent", None
    if roof.fingerprint != fingerprint:
        return "other machine", roof
    age = (time.time() if now is None else now) - roof.measured_at
    if roof.disturbed:
        # measured while other programs held the CPU: usable (its note says so) but not kept, or
        # a roof measured once under load (37 GFLOP/s against 150 GFLOP/s points) stays for days
        return "stale", roof
    return ("stale" if age > STALE_AFTER_S else "fresh"), roof


def save(roof: MeasuredRoof) -> Path:
    """Store ``roof`` beside the other devices' (``explorer.statefile``: a temporary file, then
    os.replace; ``OSError`` when the disk is full, and no temporary file is left)."""
    path = cache_path()
    roofs = {key: r.to_dict() for key, r in _read_all(path).items()}
    roofs[roof.device] = roof.to_dict()
    return save_json(path, {"format_version": CACHE_FORMAT, "roofs": roofs}, create_folder=True)


def age_text(measured_at: float, now: float | None = None) -> str:
    """ "measured 3 days ago (2026-11-20 14:02 UTC)" """
    age = max(0.0, (time.time() if now is None else now) - measured_at)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(measured_at))
    if age < 120:
        ago = "just now"
    elif age < 7200:
        ago = f"{age / 60:.0f} minutes ago"
    elif age < 2 * 86400:
        ago = f"{age / 3600:.0f} hours ago"
    else:
        ago = f"{age / 86400:.0f} days ago"
    return f"measured {ago} ({when})"


# --- measuring ---------------------------------------------------------------------------------

MATMUL_SIZES_CPU = (1024, 2048)
MATMUL_SIZES_GPU = (4096, 8192)
TRIAD_MIN_ARRAY_BYTES = 64 * 2**20
TRIAD_PASSES = 10
COPY_BYTES_GPU = 256 * 2**20


def _others_share(measure: Callable[[], Any]) -> tuple[Any, float | None]:
    """Run ``measure`` and say what share of all CPUs other programs used meanwhile (psutil)."""
    try:
        import psutil

        me = psutil.Process()
        cpus = psutil.cpu_count() or 1
        total0, mine0 = psutil.cpu_times(), me.cpu_times()
        t0 = time.perf_counter()
        result = measure()
        wall = time.perf_counter() - t0
        total1, mine1 = psutil.cpu_times(), me.cpu_times()
        busy = (total1.user - total0.user) + (total1.system - total0.system)
        busy += getattr(total1, "nice", 0.0) - getattr(total0, "nice", 0.0)
        own = (mine1.user - mine0.user) + (mine1.system - mine0.system)
        share = max(0.0, busy - own) / (wall * cpus) if wall > 0 else None
        return result, None if share is None else min(1.0, share)
    except ImportError:
        return measure(), None


def best_sgemm(
    torch: Any, device: Any, sizes: tuple[int, ...], budget_s: float, sync: Callable[[], None] | None
) -> tuple[float, int]:
    """(best GFLOP/s, its n): each size's fastest sample of repeated FP32 matmuls, the best over sizes.
    The fastest, as STREAM reports its best pass: other programs can only slow a sample down, and a
    roof is what the hardware can do, not what it did while shared."""
    from explorer.bench.timing import measure, measure_torch

    best, best_n = 0.0, 0
    for n in sizes:
        gen = torch.Generator(device="cpu").manual_seed(n)
        a = torch.rand(n, n, generator=gen).to(device)
        b = torch.rand(n, n, generator=gen).to(device)
        c = torch.empty(n, n, device=device)

        def step(a: Any = a, b: Any = b, c: Any = c) -> None:
            torch.mm(a, b, out=c)

        if sync is None:
            timing = measure_torch(step, budget_s=budget_s)
        else:
            timing = measure(step, sync, budget_s=budget_s)
        rate = 2.0 * n**3 / timing.min_s / 1e9
        if rate > best:
            best, best_n = rate, n
        del a, b, c
    return best, best_n


def llc_bytes() -> int | None:
    """The last-level cache's size where the OS says (Linux sysfs), else ``None``."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    sizes = []
    try:
        for index in base.glob("index*"):
            text = (index / "size").read_text().strip().upper()
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            sizes.append(int(text.rstrip("KMG")) * mult)
    except (OSError, ValueError):
        return None
    return max(sizes) if sizes else None


def triad_array_elements(llc: int | None, available_bytes: int | None) -> tuple[int, str]:
    """Elements per float64 array: four times the LLC (STREAM's rule), at least 64 MiB, and the three
    arrays within a quarter of the free memory. Returns the count and the rule that set it."""
    want = max(TRIAD_MIN_ARRAY_BYTES, 4 * llc) if llc else TRIAD_MIN_ARRAY_BYTES
    rule = (
        f"4 x the {llc / 2**20:.0f} MiB last-level cache"
        if llc and 4 * llc >= TRIAD_MIN_ARRAY_BYTES
        else "64 MiB"
    )
    if available_bytes and 3 * want > available_bytes // 4:
        want = max(8 * 2**20, available_bytes // 12)
        rule = "a quarter of the free memory (smaller than STREAM asks: caches may help)"
    return want // 8, rule


def stream_triad_gbps(elements: int, passes: int = TRIAD_PASSES) -> float:
    """Best-of-``passes`` triad bandwidth on every core (numba parallel), STREAM's byte count."""
    import numpy as np
    from numba import njit, prange

    @njit(parallel=True, nogil=True, cache=False)
    def triad(a: Any, b: Any, c: Any, s: float) -> None:  # pragma: no cover - compiled by numba
        for i in prange(a.shape[0]):
            a[i] = b[i] + s * c[i]

    @njit(parallel=True, cache=False)
    def fill(a: Any, b: Any, c: Any) -> None:  # pragma: no cover - first touch on every core
        for i in prange(a.shape[0]):
            a[i] = 1.0
            b[i] = 2.0
            c[i] = 0.5

    a, b, c = (np.empty(elements) for _ in range(3))
    fill(a, b, c)
    triad(a, b, c, 3.0)  # compile and warm
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        triad(a, b, c, 3.0)
        best = min(best, time.perf_counter() - t0)
    if not (a[0] == 2.0 + 3.0 * 0.5 and a[-1] == a[0]):
        raise RuntimeError("the triad computed a wrong result")
    return 24.0 * elements / best / 1e9


def measure_cpu_roof(
    fingerprint: str, flags_note: str = "", *, clock_only: bool = False, budget_s: float = 1.0
) -> MeasuredRoof:
    """Measure the CPU: its all-core clock, and (unless ``clock_only``) sgemm and triad."""
    from explorer.bench.clock import measure_clock

    def work() -> MeasuredRoof:
        clock = measure_clock()
        roof = MeasuredRoof(
            device="cpu",
            fingerprint=fingerprint,
            measured_at=time.time(),
            clock_ghz=round(clock.ghz, 4),
            clock_threads=clock.threads,
            clock_method=clock.method,
        )
        if clock_only:
            return roof
        import torch

        threads = torch.get_num_threads()
        rate, n = best_sgemm(torch, torch.device("cpu"), MATMUL_SIZES_CPU, budget_s, None)
        roof.ceilings.append(
            Ceiling(
                "compute",
                round(rate, 2),
                "measured",
                "sgemm",
                f"best FP32 matmul: torch.mm n={n} on {threads} threads, fastest of its timed samples",
                roof.measured_at,
            )
        )
        import psutil

        elements, rule = triad_array_elements(llc_bytes(), psutil.virtual_memory().available)
        gbps = stream_triad_gbps(elements)
        roof.ceilings.append(
            Ceiling(
                "memory",
                round(gbps, 2),
                "measured",
                "STREAM triad",
                f"a = b + s*c on {elements * 8 / 2**20:.0f} MiB float64 arrays ({rule}), every core "
                "(numba), best of 10; 24 bytes per element as STREAM counts (write-allocate not counted)",
                roof.measured_at,
            )
        )
        return roof

    roof, share = _others_share(work)
    roof.others_cpu_share = None if share is None else round(share, 3)
    return roof


def measure_gpu_roof(
    torch: Any, device: Any, fingerprint: str, key: str, *, budget_s: float = 1.0
) -> MeasuredRoof:
    """Measure a GPU: its best sgemm (TF32 off) and a device-to-device copy. ``torch`` and ``device``
    are passed in so the same code can be run against the CPU in tests."""
    sync = (
        (lambda: torch.cuda.synchronize(device))
        if getattr(device, "type", "cpu") == "cuda"
        else (lambda: None)
    )
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # true FP32: TF32 would beat the FP32 peak
    try:
        rate, n = best_sgemm(torch, device, MATMUL_SIZES_GPU, budget_s, sync)
    finally:
        torch.set_float32_matmul_precision(previous)
    from explorer.bench.timing import measure

    src = torch.ones(COPY_BYTES_GPU // 4, device=device)
    dst = torch.empty_like(src)
    timing = measure(lambda: dst.copy_(src), sync, budget_s=budget_s)
    gbps = 2.0 * COPY_BYTES_GPU / timing.min_s / 1e9
    now = time.time()
    return MeasuredRoof(
        device=key,
        fingerprint=fingerprint,
        measured_at=now,
        ceilings=[
            Ceiling(
                "compute",
                round(rate, 2),
                "measured",
                "sgemm",
                f"best FP32 sgemm: torch.mm n={n}, TF32 off",
                now,
            ),
            Ceiling(
                "memory",
                round(gbps, 2),
                "measured",
                "device copy",
                f"device-to-device copy of {COPY_BYTES_GPU // 2**20} MiB, fastest sample, counted as read + write",
                now,
            ),
        ],
    )
