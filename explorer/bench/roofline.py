"""The roofline model: a device's roofs, its ridge point, and where a measured point sits under them.

A kernel doing ``I`` FLOP per byte it moves can at best reach ``min(P, B x I)`` FLOP/s, where
``P`` is the compute roof and ``B`` the memory roof: below the ridge point ``I = P / B`` the
bytes are the limit (the slanted roof), above it the arithmetic is (the flat roof). Every device
has several ceilings (theoretical, measured, from a spec sheet); the *roof* is the highest of
each, because nothing can beat the highest, so it sets the ridge and the bound of a point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from explorer.bench.ceilings import MAX_CLOCK_GHZ, Ceiling, Quantity
from explorer.schema import SchemaError, check_range, check_value

Bound = Literal["memory", "compute", ""]


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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``devices --json``, exports): every ceiling with its kind and basis."""
        return {
            "device": self.device,
            "name": self.name,
            "note": self.note,
            "measured_clock_ghz": self.clock_ghz,
            "measured_clock_method": self.clock_method,
            "ridge_flop_per_byte": self.ridge_flop_per_byte,
            "ceilings": [c.to_dict() for c in self.ceilings],
            "host": self.host,
        }

    @classmethod
    def from_dict(cls, data: Any, host: str = "") -> Roof:
        """A roof another machine's agent sent (``to_dict``'s form), checked: untrusted input.

        ``ValueError`` when it is not a roof at all; a ceiling that is not a positive, finite
        rate is left out (a roof is drawn from what is valid, never from a guessed value)."""
        if not isinstance(data, dict):
            raise ValueError("a roof is not an object")
        device, name = data.get("device"), data.get("name")
        if not isinstance(device, str) or not isinstance(name, str) or not device or len(device) > 60:
            raise ValueError("a roof has no device or name")
        rows = data.get("ceilings")
        ceilings: list[Ceiling] = []
        for row in rows if isinstance(rows, list) else []:
            try:
                ceiling = Ceiling.from_dict(row)
            except SchemaError:
                continue
            if ceiling.value > 0:  # finite and in range: the schema checked it
                ceilings.append(ceiling)
        note, clock = data.get("note"), data.get("measured_clock_ghz")
        method = data.get("measured_clock_method")
        try:  # a number too large for a float (a 400-digit clock) is refused here, never raised
            clock_ghz = check_value(clock, float | None, "measured_clock_ghz")
            check_range(clock_ghz, "measured_clock_ghz", 0, MAX_CLOCK_GHZ)
        except SchemaError:
            clock_ghz = None
        return cls(
            device=device,
            name=name[:200],
            ceilings=ceilings,
            note=note[:500] if isinstance(note, str) else "",
            clock_ghz=clock_ghz,
            clock_method=method[:200] if isinstance(method, str) else "",
            host=host,
        )

    @property
    def title(self) -> str:
        """The device's name and, for a remote machine's, where it is: "Intel Xeon ON gpu-lab"."""
        return f"{self.name} ON {self.host}" if self.host else self.name

    def top(self, quantity: Quantity) -> Ceiling | None:
        """The highest ceiling of that quantity: the roof no measurement can pass."""
        candidates = [c for c in self.ceilings if c.quantity == quantity and c.value > 0]
        return max(candidates, key=lambda c: c.value, default=None)

    @property
    def ridge_flop_per_byte(self) -> float | None:
        """Intensity at which the slanted roof meets the flat one: compute roof / memory roof."""
        compute, memory = self.top("compute"), self.top("memory")
        if compute is None or memory is None:
            return None
        return compute.value / memory.value

    def attainable_gflops(self, intensity: float) -> float | None:
        """The roofline itself: min(compute roof, memory roof x intensity)."""
        compute, memory = self.top("compute"), self.top("memory")
        if compute is None or memory is None or intensity <= 0:
            return None
        return min(compute.value, memory.value * intensity)

    def bound(self, intensity: float | None) -> Bound:
        """Which roof bounds a point of that intensity; "" where the roof is not known."""
        ridge = self.ridge_flop_per_byte
        if intensity is None or ridge is None:
            return ""
        return "memory" if intensity < ridge else "compute"


def intensity(flops: float, bytes_moved: float) -> float | None:
    """FLOP per byte from a workload's declared counts; ``None`` where it moves no bytes."""
    if bytes_moved <= 0:
        return None
    return flops / bytes_moved


@dataclass(frozen=True)
class Placement:
    """Where one measured point sits on its device's roofline."""

    intensity_flop_per_byte: float | None
    gflops: float | None  # achieved FLOP rate (the roofline's y)
    gbps: float | None  # achieved byte rate
    bound: Bound
    ridge_flop_per_byte: float | None
    memory_ceiling: Ceiling | None  # the memory roof a memory-bound point is compared with


def place(flops: float, bytes_moved: float, seconds: float | None, roof: Roof | None) -> Placement:
    """A point doing ``flops`` FLOP and moving ``bytes_moved`` bytes in ``seconds``, under ``roof``."""
    inten = intensity(flops, bytes_moved)
    ok = seconds is not None and seconds > 0
    gflops = flops / seconds / 1e9 if ok and flops > 0 and seconds else None
    gbps = bytes_moved / seconds / 1e9 if ok and bytes_moved > 0 and seconds else None
    if roof is None:
        return Placement(inten, gflops, gbps, "", None, None)
    bound: Bound = "memory" if bytes_moved > 0 and flops <= 0 else roof.bound(inten)
    return Placement(inten, gflops, gbps, bound, roof.ridge_flop_per_byte, roof.top("memory"))


def plot_range(roofs: Sequence[Roof], intensities: Sequence[float]) -> tuple[float, float]:
    """The x range (FLOP/byte) a roofline plot needs: every point and every ridge, with a decade
    either side, never narrower than 1/16 .. 64."""
    xs = [i for i in intensities if i and i > 0]
    xs += [r.ridge_flop_per_byte for r in roofs if r.ridge_flop_per_byte]
    lo = min([1 / 16, *[x / 4 for x in xs]])
    hi = max([64.0, *[x * 4 for x in xs]])
    return lo, hi


@dataclass(frozen=True)
class Segment:
    """One ceiling as drawn: from (x0, y0) to (x1, y1) in FLOP/byte and GFLOP/s."""

    ceiling: Ceiling
    x0: float
    y0: float
    x1: float
    y1: float


def segments(roof: Roof, x_lo: float, x_hi: float) -> list[Segment]:
    """Each ceiling of ``roof`` as a line between ``x_lo`` and ``x_hi``: a memory ceiling B rises as
    B x intensity until it meets the highest compute roof; a compute ceiling P runs flat from where
    it meets the highest memory roof. So the top two meet at the ridge point, and lower ceilings
    (a measured sgemm under the theoretical peak) show how far below the roof real code stays."""
    top_p, top_b = roof.top("compute"), roof.top("memory")
    out: list[Segment] = []
    for c in roof.ceilings:
        if c.value <= 0:
            continue
        if c.quantity == "memory":
            end = min(x_hi, top_p.value / c.value) if top_p else x_hi
            if end > x_lo:
                out.append(Segment(c, x_lo, c.value * x_lo, end, c.value * end))
        else:
            start = max(x_lo, c.value / top_b.value) if top_b else x_lo
            if start < x_hi:
                out.append(Segment(c, start, c.value, x_hi, c.value))
    return out
