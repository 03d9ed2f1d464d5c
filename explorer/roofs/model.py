"""Ceilings and roofs: the records every roofline, the Devices page and ``devices --json`` show.

A kernel doing ``I`` FLOP per byte it moves can at best reach ``min(P, B x I)`` FLOP/s, where ``P``
is the compute roof and ``B`` the bandwidth of the memory its bytes come from. That memory is not
one thing: data that fits in the L1 cache streams many times faster than data that must come
from DRAM. So a roof holds one bandwidth ceiling per memory *level* (L1, L2, L3, DRAM on a CPU;
L2 and DRAM on a GPU), each with the working-set range it was measured over, beside the compute
ceilings (a theoretical FP32 peak, a measured sgemm). A point is judged against the ceiling of
the level its working set lives in (``explorer.roofs.placement``), never against DRAM's alone.

Every ceiling says how it was had (``kind``: measured, theoretical, spec sheet; ``basis`` in
words; ``method``: the kernel, threads, working sets, repeats and how the samples were reduced),
when, and whether other programs were using the CPU while it was measured (``disturbed``): a
label then says "measured while busy".

The compute roof a point's share is taken against (``Roof.compute_roof``) is the *measured* FP32
ceiling (an FMA loop on every core) where there is one: a theoretical peak is cores x clock x
FLOP per cycle, and what the flags cannot show (two vCPUs sharing one core's FMA pipes, a power
limit, the lower clock of wide vector code) can put it at twice what any code reaches.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from explorer.roofs.latency import LatencyLadder
from explorer.schema import SchemaError, check_fields, check_range, field_label, show
from explorer.units import binary_bytes, number_text
from explorer.words import on_host

Quantity = Literal["compute", "memory"]
CeilingKind = Literal["measured", "theoretical", "spec sheet"]
#: the memory levels, fastest first; "" for a memory ceiling that names no level
MemoryLevel = Literal["", "L1", "L2", "L3", "DRAM"]
MEMORY_LEVELS: tuple[str, ...] = ("L1", "L2", "L3", "DRAM")
#: whose roof: (host, device), host "" for this machine; a remote's "cuda:0" is not this laptop's
RoofKey = tuple[str, str]
#: no device computes or moves more than this (GFLOP/s or GB/s: an exaFLOP/s): a larger figure
#: in a file or from another machine is damage, not a measurement
MAX_RATE = 1e9
#: the largest working set a ceiling can have been measured over (1 EiB)
MAX_WORKING_SET_BYTES = 1 << 60
#: the latest time stamp a ceiling may carry (the end of year 9999, the last one dates can show)
MAX_TIMESTAMP = 253_402_300_799.0
#: text from a file or another machine is cut to these lengths before it is shown
MAX_NAME_CHARS = 80
MAX_BASIS_CHARS = 1000
#: the name of the measured FP32 compute ceiling (an FMA-throughput loop on every core or SM)
FMA_NAME = "FP32 FMA"
#: the measuring method's version: a remeasure is compared with a stored ceiling only when both
#: were had the same way (an earlier version's figures are replaced, not held against the new)
METHOD_VERSION = 2
#: a quiet remeasure within this share of the stored figure means the machine held still
STEADY_TOLERANCE = 0.10
#: a measured compute ceiling this far from the theoretical peak is said, with why it may be
PEAK_GAP_SAID_ABOVE = 0.25
#: a figure above this multiple of the hardware's theoretical peak at its boost clock is no
#: measurement: the hardware cannot go that fast, so the timing missed work (a clock read before
#: the work was done). The 5% allows a peak's own rounding and a clock a little above its rating.
ABOVE_HARDWARE = 1.05
#: what an invalid point says, in the table, the plot, the CLI and the JSON
INVALID_WORDS = "faster than the hardware can go: the timing missed work"


@dataclass(frozen=True)
class Method:
    """How a measured ceiling was had, stored with it: a later measurement is compared with it
    like with like, and a reader can tell what the figure means."""

    kernel: str  # "read, copy, triad (numba, float64)", "FMA: 16 accumulators x 16 FP32 lanes"
    threads: int  # threads (CPU) or blocks (GPU) that ran it at once
    #: the working sets (bytes, all threads together) the figure was taken over; () for compute
    sizes_bytes: tuple[int, ...] = ()
    repeats: int = 1  # timed samples per size
    best_of: str = ""  # how the samples became the figure: "fastest of 5 passes, median over 4 sizes"
    version: int = METHOD_VERSION

    @property
    def text(self) -> str:
        """ "FMA: 16 x 16 lanes on 2 threads, 40 samples, fastest" for a hover or a report."""
        sizes = ""
        if self.sizes_bytes:
            lo, hi = min(self.sizes_bytes), max(self.sizes_bytes)
            sizes = f" over {len(self.sizes_bytes)} working sets {binary_bytes(lo)} to {binary_bytes(hi)}"
        return f"{self.kernel} on {self.threads} threads{sizes}, {self.repeats} samples each; {self.best_of}"


@dataclass(frozen=True)
class Ceiling:
    """One roof line: a rate the device cannot (theoretical, spec sheet) or did not (measured) beat."""

    quantity: Quantity  # "compute" (GFLOP/s) or "memory" (GB/s)
    value: float
    kind: CeilingKind
    name: str  # short, for the plot: "FP32 peak", "sgemm", "L2 read", "memory bandwidth"
    basis: str  # how it was had, in words
    measured_at: float | None = None  # unix time, for measured ones
    #: a theoretical figure built on a clock the OS or the tables report (advertised, base or
    #: maximum), not on one measured here: a real run may beat it, and its label says "estimated"
    estimate: bool = False
    #: measured while other programs used the CPU (the noise verdict): lower than the device can
    #: do, so its label says so; it never replaces a quiet measurement
    disturbed: bool = False
    #: the memory level this bandwidth belongs to ("" for compute ceilings and unnamed plateaus)
    level: MemoryLevel = ""
    #: the working sets (bytes, all threads together) the level's plateau held over in the sweep
    ws_lo_bytes: int | None = None
    ws_hi_bytes: int | None = None
    #: the cache capacity the level was named by: one cache's size x ``instances``
    cache_bytes: int | None = None
    #: how many separate caches of this level the sweep's threads used (2 per-core L2s, 1 shared L3):
    #: a point on fewer threads has fewer of them
    instances: int | None = None
    #: each sweep kernel's GB/s over the level's working sets ("read", "copy", "triad"): the
    #: level's roof is the fastest of them
    kernel_gbps: dict[str, float] = field(default_factory=dict, compare=False)
    #: how it was measured (``None`` for theoretical and spec-sheet figures, and for measurements
    #: stored before methods were kept)
    method: Method | None = field(default=None, compare=False)

    @property
    def kind_text(self) -> str:
        """ "measured", "measured while busy", "theoretical", "spec sheet": what a label says. Only a
        measurement is "while busy": a theoretical peak built on a clock measured while busy is
        still theoretical (its basis names the clock), never "theoretical while busy"."""
        return "measured while busy" if self.disturbed and self.kind == "measured" else self.kind

    @property
    def quiet(self) -> bool | None:
        """Whether the machine was quiet while it was measured (``None``: not a measurement)."""
        return None if self.kind != "measured" else not self.disturbed

    @property
    def unit(self) -> str:
        return "GFLOP/s" if self.quantity == "compute" else "GB/s"

    @property
    def label(self) -> str:
        """ "L2 (measured): 412 GB/s", "sgemm (measured): 341 GFLOP/s" """
        return f"{self.name} ({self.kind_text}): {number_text(self.value, self.unit)}"

    @property
    def short_label(self) -> str:
        """A level's roof as a crowded plot labels it: "L2: 224 GB/s", saying how it was had only
        where it is not the usual measurement ("DRAM (spec sheet): 3,350 GB/s", "L3 (measured while
        busy): 90 GB/s"); any other ceiling's ``label``."""
        if self.quantity != "memory" or not self.level:
            return self.label
        kind = "" if self.kind_text == "measured" else f" ({self.kind_text})"
        return f"{self.level}{kind}: {number_text(self.value, self.unit)}"

    @property
    def range_text(self) -> str:
        """ "working sets 80 KiB to 1.6 MiB" (where the level's plateau held), or ""."""
        if self.ws_lo_bytes is None or self.ws_hi_bytes is None:
            return ""
        return f"working sets {binary_bytes(self.ws_lo_bytes)} to {binary_bytes(self.ws_hi_bytes)}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["unit"] = self.unit
        data["quiet"] = self.quiet
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> Ceiling:
        """A ceiling from its JSON form, every field checked (``SchemaError`` names the first that
        does not fit: a rate that is not positive and finite, a date past the year 9999...)."""
        kwargs = check_fields(cls, data, where)
        check_range(kwargs["value"], field_label(where, "value"), 0, MAX_RATE)
        if kwargs["value"] <= 0:
            raise SchemaError(
                f"{field_label(where, 'value')} is {show(kwargs['value'])}, not a positive rate"
            )
        check_range(kwargs.get("measured_at"), field_label(where, "measured_at"), 0, MAX_TIMESTAMP)
        for name in ("ws_lo_bytes", "ws_hi_bytes", "cache_bytes"):
            check_range(kwargs.get(name), field_label(where, name), 1, MAX_WORKING_SET_BYTES)
        check_range(kwargs.get("instances"), field_label(where, "instances"), 1, 1 << 20)
        for name, rate in kwargs.get("kernel_gbps", {}).items():
            check_range(rate, field_label(where, f"kernel_gbps[{name!r}]"), 0, MAX_RATE)
        if len(kwargs.get("kernel_gbps", {})) > 8:
            raise SchemaError(f"{field_label(where, 'kernel_gbps')} names more than 8 kernels")
        method = kwargs.get("method")
        if method is not None:
            check_range(method.threads, field_label(where, "method.threads"), 1, 1 << 24)
            check_range(method.repeats, field_label(where, "method.repeats"), 1, 1 << 24)
            if len(method.sizes_bytes) > 512:
                raise SchemaError(f"{field_label(where, 'method.sizes_bytes')} lists more than 512 sizes")
            for size in method.sizes_bytes:
                check_range(size, field_label(where, "method.sizes_bytes"), 1, MAX_WORKING_SET_BYTES)
            kwargs["method"] = replace(
                method, kernel=method.kernel[: MAX_NAME_CHARS * 2], best_of=method.best_of[:MAX_BASIS_CHARS]
            )
        kwargs["name"] = kwargs["name"][:MAX_NAME_CHARS]
        kwargs["basis"] = kwargs["basis"][:MAX_BASIS_CHARS]
        return cls(**kwargs)


def ceiling_key(c: Ceiling) -> tuple[str, str, str]:
    """What makes two measurements the same ceiling: quantity, level and name."""
    return (c.quantity, c.level, c.name)


def unsteady_changes(
    old: list[Ceiling], new: list[Ceiling], tolerance: float = STEADY_TOLERANCE
) -> list[str]:
    """Each measured ceiling of ``new`` more than ``tolerance`` away from the same ceiling in ``old``,
    in words ("L1 356 -> 288 GB/s (-19%)"); only ceilings both measured by the same method version
    are compared (an older method's figure is no yardstick). Empty: the machine held still."""
    before = {
        ceiling_key(c): c
        for c in old
        if c.kind == "measured" and c.method is not None and c.method.version == METHOD_VERSION
    }
    out = []
    for c in new:
        was = before.get(ceiling_key(c))
        if c.kind != "measured" or was is None or c.method is None or was.value <= 0:
            continue
        change = c.value / was.value - 1.0
        if abs(change) > tolerance:
            name = c.level or c.name
            out.append(
                f"{name} {number_text(was.value, c.unit)} -> {number_text(c.value, c.unit)} ({change:+.0%})"
            )
    return out


def level_words(level: str) -> str:
    """How a level is named in a sentence: "L2", "DRAM", "memory" (no level)."""
    return level or "memory"


@dataclass
class Roof:
    """The ceilings of one device (a CPU, a present GPU or a catalog GPU's spec sheet)."""

    device: str  # "cpu", "cuda:0", "catalog:h100-sxm5"
    name: str  # "Intel(R) Xeon(R) ...", "NVIDIA H100 SXM5 (catalog)"
    ceilings: list[Ceiling] = field(default_factory=list)
    note: str = ""  # where the measured ones come from and when, or why there are none
    clock_ghz: float | None = None  # a CPU's measured all-core clock, which its FP32 peak is built on
    clock_method: str = ""
    #: the remote machine the device is on ("gpu-lab"), "" for this one: labels say "CPU ON gpu-lab"
    host: str = ""
    #: when the stored ceilings were measured (unix time), and whether the machine was quiet then
    measured_at: float | None = None
    quiet: bool | None = None
    took_s: float | None = None  # how long the measurement took
    #: one sentence for the user, once: the stored ceilings were damaged and moved aside
    notice: str = ""
    #: the theoretical FP32 peak at the highest clock the device runs at (a GPU's boost clock, a
    #: CPU's maximum turbo clock), GFLOP/s: no FP32 or FP64 code beats it (``above_hardware``)
    boost_peak_gflops: float | None = None
    boost_peak_basis: str = ""
    #: all of the last-level cache, bytes: a working set well past it streams from DRAM, which
    #: no point may then beat its theoretical bandwidth
    llc_bytes: int | None = None
    #: a GPU's measured load latencies (pointer-chase ladder), stored with its ceilings
    latency: LatencyLadder | None = None

    @property
    def key(self) -> RoofKey:
        """Whose roof this is: (host, device); one roof per key is carried with a run's results."""
        return (self.host, self.device)

    @property
    def title(self) -> str:
        """The device's name and, for a remote machine's, where it is: "Intel Xeon ON gpu-lab"."""
        return on_host(self.name, self.host)

    def top(self, quantity: Quantity) -> Ceiling | None:
        """The highest ceiling of that quantity (for memory: the fastest level's)."""
        candidates = [c for c in self.ceilings if c.quantity == quantity and c.value > 0]
        return max(candidates, key=lambda c: c.value, default=None)

    def theoretical(self) -> Ceiling | None:
        """The theoretical (or spec-sheet) FP32 peak: what no code can beat at its clock."""
        return next((c for c in self.ceilings if c.quantity == "compute" and c.kind != "measured"), None)

    def fma(self) -> Ceiling | None:
        """The measured FP32 ceiling: an FMA-throughput loop on every core (SM), ``None`` where not
        measured."""
        return next((c for c in self.ceilings if c.quantity == "compute" and c.name == FMA_NAME), None)

    def compute_roof(self) -> Ceiling | None:
        """The compute roof shares and the ridge are taken against: the measured FP32 ceiling where
        it was measured (what this machine's cores can really retire), else the theoretical or
        spec-sheet peak, else the highest measured compute figure."""
        return self.fma() or self.theoretical() or self.top("compute")

    def levels(self) -> list[Ceiling]:
        """One ceiling per memory level, nearest the cores first (L1, L2, L3, DRAM): where a level has
        several (a GPU's measured DRAM copy and its theoretical bandwidth), the highest, the one no
        measurement can pass."""
        best: dict[str, Ceiling] = {}
        for c in self.ceilings:
            if c.quantity == "memory" and c.level and c.value > 0:
                if c.level not in best or c.value > best[c.level].value:
                    best[c.level] = c
        return [best[name] for name in MEMORY_LEVELS if name in best]

    def level(self, name: str) -> Ceiling | None:
        return next((c for c in self.levels() if c.level == name), None)

    def main_memory(self) -> Ceiling | None:
        """The DRAM (HBM, GDDR) ceiling, the classic roofline's slanted roof: the highest-level one
        where levels were measured, else the device's one memory figure (a spec sheet's)."""
        levels = self.levels()
        if levels:
            return levels[-1]
        return self.top("memory")

    @property
    def ridge_flop_per_byte(self) -> float | None:
        """Where main memory's slanted roof meets the flat one: compute roof / DRAM bandwidth."""
        return self.ridge(self.main_memory())

    def ridge(self, memory: Ceiling | None) -> float | None:
        """Intensity at which ``memory``'s slanted roof meets the compute roof (``compute_roof``)."""
        compute = self.compute_roof()
        if compute is None or memory is None or memory.value <= 0:
            return None
        return compute.value / memory.value

    def attainable_gflops(self, intensity: float, memory: Ceiling | None = None) -> float | None:
        """The roofline itself: min(compute roof, memory roof x intensity), for main memory unless
        another level's ceiling is given."""
        compute, memory = self.compute_roof(), memory or self.main_memory()
        if compute is None or memory is None or intensity <= 0:
            return None
        return min(compute.value, memory.value * intensity)

    def dram_peak(self) -> Ceiling | None:
        """The theoretical (or spec-sheet) DRAM bandwidth: what no DRAM-bound code can beat."""
        return next(
            (
                c
                for c in self.ceilings
                if c.quantity == "memory" and c.kind != "measured" and c.level in ("DRAM", "") and c.value > 0
            ),
            None,
        )

    def with_host(self, host: str) -> Roof:
        return replace(self, host=host)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``devices --json``, saved results, an agent's answer)."""
        return {
            "device": self.device,
            "name": self.name,
            "note": self.note,
            "measured_clock_ghz": self.clock_ghz,
            "measured_clock_method": self.clock_method,
            "measured_at": self.measured_at,
            "quiet": self.quiet,
            "took_s": self.took_s,
            "ridge_flop_per_byte": self.ridge_flop_per_byte,
            "ceilings": [c.to_dict() for c in self.ceilings],
            "host": self.host,
            "notice": self.notice,
            "boost_peak_gflops": self.boost_peak_gflops,
            "boost_peak_basis": self.boost_peak_basis,
            "llc_bytes": self.llc_bytes,
            "latency": self.latency.to_dict() if self.latency is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Any, host: str = "") -> Roof:
        """A roof from its JSON form (another machine's agent, a saved results file): untrusted.

        ``ValueError`` when it is not a roof at all; a ceiling that does not check out (not a
        positive, finite rate, a wrong type) is left out: a roof is drawn from what is valid,
        never from a guessed value."""
        if not isinstance(data, dict):
            raise ValueError("a roof is not an object")
        device, name = data.get("device"), data.get("name")
        if not isinstance(device, str) or not isinstance(name, str) or not device or len(device) > 60:
            raise ValueError("a roof has no device or name")
        rows = data.get("ceilings")
        ceilings: list[Ceiling] = []
        for row in rows if isinstance(rows, list) else []:
            try:
                ceilings.append(Ceiling.from_dict(row))
            except (ValueError, TypeError):
                continue
        return cls(
            device=device,
            name=name[:200],
            ceilings=ceilings,
            note=_text(data.get("note"), 500),
            clock_ghz=_number(data.get("measured_clock_ghz"), 100.0),
            clock_method=_text(data.get("measured_clock_method"), 200),
            host=host,
            measured_at=_number(data.get("measured_at"), MAX_TIMESTAMP),
            quiet=data.get("quiet") if isinstance(data.get("quiet"), bool) else None,
            took_s=_number(data.get("took_s"), 86_400.0),
            notice=_text(data.get("notice"), 1000),
            boost_peak_gflops=_number(data.get("boost_peak_gflops"), MAX_RATE),
            boost_peak_basis=_text(data.get("boost_peak_basis"), MAX_BASIS_CHARS),
            llc_bytes=_whole(data.get("llc_bytes"), MAX_WORKING_SET_BYTES),
            latency=_ladder(data.get("latency")),
        )


def _ladder(data: Any) -> LatencyLadder | None:
    """A roof's latency ladder from its JSON form, or None where it is absent or does not check out
    (a roof is drawn from what is valid)."""
    if data is None:
        return None
    try:
        return LatencyLadder.from_dict(data)
    except (ValueError, TypeError):
        return None


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _whole(value: Any, high: int) -> int | None:
    return value if type(value) is int and 0 < value <= high else None


def _number(value: Any, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value) if abs(value) <= high else math.inf
    return number if math.isfinite(number) and 0 < number <= high else None
