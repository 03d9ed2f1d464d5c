"""The peak a measured figure is drawn against: FP32 GFLOP/s, memory GB/s, PCIe GB/s; and each
device's roof (its theoretical and measured ceilings) for the roofline.

Peaks come from the Devices code (``explorer.devices``), from NVML's PCIe link and, for the CPU,
from its measured clock (:mod:`explorer.bench.clock`): the clock the OS reports is a base or an
advertised one, and a peak built on it is beaten by real matmuls. Measured ceilings come from the
per-machine cache (:mod:`explorer.bench.ceilings`). Where a peak is not known it is ``None`` and
no line is drawn, rather than a guess.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.bench import ceilings
from explorer.bench.ceilings import Ceiling, MeasuredRoof
from explorer.bench.roofline import Roof, place
from explorer.devices.deadline import DEADLINES_S, call_with_deadline
from explorer.devices.isa import cpu_fp32_peak_gflops

if TYPE_CHECKING:
    from explorer.bench.results import BenchPoint

# Usable GB/s per lane per direction: transfer rate (GT/s) x encoding efficiency / 8 bits.
# Gen 1-2 use 8b/10b, gen 3-5 use 128b/130b, gen 6 uses PAM4 with 242/256-byte FLITs.
PCIE_LANE_GBPS: dict[int, float] = {
    1: 2.5 * 8 / 10 / 8,
    2: 5.0 * 8 / 10 / 8,
    3: 8.0 * 128 / 130 / 8,
    4: 16.0 * 128 / 130 / 8,
    5: 32.0 * 128 / 130 / 8,
    6: 64.0 * 242 / 256 / 8,
}


def pcie_peak_gbps(generation: int | None, width: int | None) -> float | None:
    """Peak one-direction bandwidth of a PCIe link (gen3 x16 -> 15.75 GB/s), ``None`` when unknown."""
    if not generation or not width or generation not in PCIE_LANE_GBPS or width <= 0:
        return None
    return PCIE_LANE_GBPS[generation] * width


@functools.lru_cache(maxsize=8)
def device_record(device: str) -> Any:
    """The Devices panel's record for ``device`` ("cpu", "cuda:0"), or ``None`` if it cannot be had."""
    try:
        from explorer.devices.discover import discover

        disc = discover(include_catalog=False, probe_gpus=device != "cpu")
        for d in disc.devices:
            if d.key == device or (device == "cpu" and d.kind == "cpu"):
                return d
    except Exception:
        return None
    return None


def fp32_peak_gflops(device: str) -> float | None:
    """The theoretical FP32 peak (a spec sheet's for catalog GPUs); for the CPU it is built on the
    measured clock, measured here (in the worker) the first time on a machine, then cached."""
    if device == "cpu":
        try:
            ensure_measured("cpu", clock_only=True)
        except Exception:
            pass  # no numba, no threads: the record's estimate from the reported clock stands
    chosen = peak_ceiling(device_roof(device), "compute")
    return chosen.value if chosen else None


def memory_bandwidth_gbps(device: str) -> float | None:
    """The memory roof: a GPU's theoretical bandwidth, the CPU's measured triad (a CPU reports none)."""
    chosen = peak_ceiling(device_roof(device), "memory")
    return chosen.value if chosen else None


def pcie_link(
    device: str, nvml: Any = None, deadline_s: float = DEADLINES_S["nvml"]
) -> tuple[int | None, int | None]:
    """(generation, lanes) of the GPU's link *now*: read after a copy, the link is out of its idle
    power state (GPUs drop to gen1 when idle, and a reading taken then would halve the peak).
    NVML is asked under the probes' deadline (a hung driver costs ``deadline_s``, not the run);
    without an answer the record's reading from discovery stands. ``nvml``: pynvml, or a stand-in."""
    rec = device_record(device)
    gen = getattr(rec, "pcie_generation", None)
    width = getattr(rec, "pcie_width", None)
    bus_id = getattr(rec, "pci_bus_id", None)
    if bus_id:
        try:
            module = nvml
            if module is None:
                from explorer.devices.nvml import import_nvml  # never a sys.exit of a broken pynvml

                module = import_nvml()
            gen, width = call_with_deadline(
                "nvml", lambda: _link_now(module, bus_id), deadline_s, key=("pcie link", id(module))
            )
        except Exception:
            pass  # no NVML, no answer in time (ProbeTimedOut), a driver error: the record's reading
    return gen, width


def _link_now(nvml: Any, bus_id: str) -> tuple[int, int]:
    nvml.nvmlInit()
    try:
        handle = nvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        return nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle), nvml.nvmlDeviceGetCurrPcieLinkWidth(handle)
    finally:
        nvml.nvmlShutdown()


@dataclass(frozen=True)
class PeakBasis:
    """Where a peak figure comes from, in a few words for the plot's label; whether it is an
    estimate (built on a clock the OS or the tables report, not one measured here: the ceiling's
    own ``estimate``); and its kind: "theoretical", "measured" (a ceiling this machine reached),
    "spec sheet"."""

    text: str
    is_estimate: bool
    kind: str = ""


def peak_basis(device: str, unit: str, workload: str = "") -> PeakBasis:
    """Taken from the device's roof, which says how each ceiling was had (an empty basis: a
    figure read off, not derived)."""
    if workload == "copies":
        return PeakBasis("PCIe link maximum (generation x lanes)", False, "theoretical")
    quantities: dict[str, ceilings.Quantity] = {"GFLOP/s": "compute", "GB/s": "memory"}
    quantity = quantities.get(unit)
    if quantity is None:
        return PeakBasis("", False)
    chosen = peak_ceiling(device_roof(device), quantity)
    if chosen is None:
        return PeakBasis("", False)
    return PeakBasis(chosen.basis, chosen.estimate, chosen.kind)


def peak_ceiling(roof: Roof, quantity: ceilings.Quantity) -> Ceiling | None:
    """The ceiling a point's "% of peak" is taken against: the theoretical (or spec-sheet) one where
    there is one, else the highest measured (a CPU's memory has no theoretical figure)."""
    theoretical = [c for c in roof.ceilings if c.quantity == quantity and c.kind != "measured"]
    return theoretical[0] if theoretical else roof.top(quantity)


# --- roofs -------------------------------------------------------------------------------------


def _cpu_facts(rec: Any) -> tuple[str, int | None, int | None, int | None, list[str]]:
    """(name, physical cores, logical cores, memory bytes, ISA flags) of the CPU record."""
    details = getattr(rec, "cpu", None) or rec
    return (
        str(getattr(rec, "name", "CPU")),
        getattr(details, "physical_cores", None),
        getattr(details, "logical_cores", None),
        getattr(rec, "memory_total_bytes", None),
        list(getattr(details, "isa_flags", []) or []),
    )


def fingerprint(device: str) -> str | None:
    """This machine's fingerprint for ``device``'s cached measurements; ``None`` if not present."""
    return record_fingerprint(device_record(device))


def record_fingerprint(rec: Any) -> str | None:
    if rec is None:
        return None
    if rec.kind == "cpu":
        name, physical, logical, memory, _ = _cpu_facts(rec)
        return ceilings.cpu_fingerprint(name, physical, logical, memory)
    return ceilings.gpu_fingerprint(
        rec.name, getattr(rec, "uuid", None), getattr(rec, "driver_version", None)
    )


def cached(device: str, rec: Any = None) -> tuple[ceilings.CacheStatus, MeasuredRoof | None]:
    fp = record_fingerprint(rec) if rec is not None else fingerprint(device)
    if fp is None:
        return "absent", None
    return ceilings.load(device, fp)


#: the roofs this process measured and cached, by device: a benchmark worker lives for one run
_measured_here: dict[str, MeasuredRoof] = {}


def ensure_measured(device: str, *, force: bool = False, clock_only: bool = False) -> MeasuredRoof | None:
    """The device's measured roof, measuring it (and caching it) unless a fresh one is cached.
    ``clock_only`` is enough for the CPU's peak; the roofline needs the ceilings too. Runs in the
    benchmark worker or the CLI, never in the window's thread: it takes seconds.

    A roof this process measured itself, and still cached as it left it, is not measured again
    unless forced, even when it counts as stale because the machine was busy: a busy run's worker
    otherwise measured the clock again before every point, so each point had its own peak (the
    plot's line said 378 GFLOP/s, the caption 381) and every point paid seconds for it. The next
    run, a new worker, measures again."""
    fp = fingerprint(device)
    if fp is None:
        return None
    status, roof = ceilings.load(device, fp)
    complete = roof is not None and (clock_only or roof.ceilings)
    mine = _measured_here.get(device)
    if complete and not force and status == "stale" and mine is not None and roof is not None:
        if (roof.fingerprint, roof.measured_at) == (mine.fingerprint, mine.measured_at):
            return roof
    if status == "fresh" and complete and not force:
        return roof
    if device == "cpu":
        roof = ceilings.measure_cpu_roof(fp, clock_only=clock_only)
    else:
        import torch

        roof = ceilings.measure_gpu_roof(torch, torch.device(device), fp, device)
    ceilings.save(roof)
    _measured_here[device] = roof
    return roof


def ensure_measured_quietly(device: str, force: bool = False) -> str:
    """``ensure_measured`` for a benchmark run: a failure to measure the ceilings never costs the
    point; it is said in one line (returned) and the point is placed with what is known."""
    try:
        ensure_measured(device, force=force)
    except OSError as exc:  # measured, but a full or read-only disk kept it from being stored
        return (
            f"the ceilings of {device} could not be kept in {ceilings.cache_path()} "
            f"({exc.strerror or exc}); they are measured again next time"
        )[:300]
    except Exception as exc:
        return f"the ceilings of {device} could not be measured: {type(exc).__name__}: {exc}"[:300]
    return ""


def place_point(point: BenchPoint, flops: float, bytes_moved: float) -> None:
    """Fill the point's roofline fields from its workload's FLOP and byte counts and the roof of
    its device as cached now (nothing is measured here)."""
    if point.error is not None or point.median_s is None:
        return
    placement = place(flops, bytes_moved, point.median_s, device_roof(point.device))
    point.intensity_flop_per_byte = placement.intensity_flop_per_byte
    point.gflops = placement.gflops
    point.gbps = placement.gbps
    point.bound = placement.bound
    point.ridge_flop_per_byte = placement.ridge_flop_per_byte
    if placement.memory_ceiling is not None:
        point.bandwidth_ceiling_gbps = placement.memory_ceiling.value
        point.bandwidth_ceiling_basis = f"{placement.memory_ceiling.name} ({placement.memory_ceiling.kind_text}): {placement.memory_ceiling.basis}"


def device_roof(device: str) -> Roof:
    """Every ceiling known for a present device (``cpu``, ``cuda:N``), without measuring anything."""
    return record_roof(device, device_record(device))


def record_roof(device: str, rec: Any) -> Roof:
    """``device_roof`` for a record the caller already has (the window's discovery): reads the
    cache file and nothing else, so a view may call it."""
    if rec is None:
        return Roof(device, device, note=f"{device} was not found")
    if rec.kind == "catalog":
        return catalog_roof(rec.key)
    status, measured = cached(device, rec)
    usable = measured if status in ("fresh", "stale") else None
    roof = Roof(device, str(rec.name))
    if device == "cpu":
        physical = _cpu_facts(rec)[1]
        if usable is not None and usable.clock_ghz and physical:
            from explorer.devices.cpu import core_flops_per_cycle

            per_cycle = core_flops_per_cycle(rec)  # its flags on its vendor's core (AMD Zen 4: 32)
            peak = cpu_fp32_peak_gflops(usable.clock_ghz, physical, per_cycle)
            roof.ceilings.append(
                Ceiling(
                    "compute",
                    round(peak, 1),
                    "theoretical",
                    "FP32 peak",
                    f"measured clock {usable.clock_ghz:.2f} GHz x {physical} cores x {per_cycle.basis}",
                    usable.measured_at,
                )
            )
        elif rec.fp32_peak_gflops:  # cores x a reported clock x FLOP per cycle: an estimate
            roof.ceilings.append(_reported_peak(rec))
    else:
        if rec.fp32_peak_gflops:
            roof.ceilings.append(_reported_peak(rec))
        if rec.memory_bandwidth_gbps:
            roof.ceilings.append(
                Ceiling(
                    "memory",
                    rec.memory_bandwidth_gbps,
                    "theoretical",
                    "memory bandwidth",
                    rec.memory_bandwidth_basis or "memory clock x bus width",
                    estimate=True,  # the memory clock the driver reports x the bus width
                )
            )
    if usable is not None:
        roof.ceilings.extend(usable.usable_ceilings())
        roof.clock_ghz, roof.clock_method = usable.clock_ghz, usable.clock_method
        roof.note = ceilings.age_text(usable.measured_at) + (
            " (stale: measured again on the next run)" if status == "stale" else ""
        )
        if usable.disturbed and usable.others_cpu_share is not None:
            roof.note += f"; other programs used {100 * usable.others_cpu_share:.0f}% of the CPU meanwhile"
    else:
        roof.note = {
            "other machine": "the cached measurements are from another machine; not used",
            "absent": "not measured yet on this machine",
        }.get(status, "")
    return roof


def _reported_peak(rec: Any) -> Ceiling:
    """The device record's own FP32 peak: a formula over the clock it reports (a CPU's advertised
    or maximum clock, a GPU's boost clock x the compute-capability tables), hence an estimate."""
    return Ceiling(
        "compute",
        rec.fp32_peak_gflops,
        "theoretical",
        "FP32 peak",
        rec.fp32_peak_basis,
        estimate=bool(rec.fp32_peak_basis),
    )


def catalog_roof(slug_or_key: str) -> Roof:
    """A catalog GPU's roof from its spec sheet, so a lesson can show an H100's roof on any laptop."""
    from explorer.devices.catalog import catalog_device

    rec = catalog_device(slug_or_key)
    roof = Roof(rec.key, f"{rec.name} (catalog)", note=f"spec sheet: {rec.source}")
    if rec.fp32_peak_gflops:
        roof.ceilings.append(
            Ceiling("compute", rec.fp32_peak_gflops, "spec sheet", "FP32 peak", "spec sheet")
        )
    if rec.memory_bandwidth_gbps:
        roof.ceilings.append(
            Ceiling(
                "memory", float(rec.memory_bandwidth_gbps), "spec sheet", "memory bandwidth", "spec sheet"
            )
        )
    return roof
