"""The roof a benchmark worker places its points under, and the peaks its workloads are drawn against.

One roof per device per worker process (``worker_roof``, from this process's
``explorer.devices.roofs.RoofBook``): built once from the device's record and this machine's
stored ceilings, after measuring them where the run asked for it (``ensure_measured``), and then
used for every point of that device: each point's level, share and "% of peak" come from the same
figures, and the runner asks the worker for that very roof once (agent method ``bench.roof``) to
carry it with the results, one per (host, device). Nothing here reads the store again for a later
point, and discovery runs once per kind of device (``device_record``: the CPU's probe, or the
GPUs') per process; the records it gives are typed (``CpuDevice``, ``CudaGpu``).

A GFLOP/s point's "% of peak" is taken against the measured FP32 ceiling (an FMA loop on every
core) where it was measured, the theoretical peak named beside it (``peak_ceiling``). A quiet
remeasure that moved more than 10% from the quiet one stored is turned away (``NotSteady``).

Also here: the PCIe link's peak (copies are bound by the bus, not by a memory level).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from explorer.devices.deadline import DEADLINES_S, call_with_deadline
from explorer.devices.model import CpuDevice, CudaGpu
from explorer.devices.roofs import RoofBook, fingerprint
from explorer.roofs import store
from explorer.roofs.model import STEADY_TOLERANCE, Ceiling, Roof, unsteady_changes
from explorer.units import number_text

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


class PcieLinkReader(Protocol):
    """What ``pcie_link`` asks of NVML (pynvml, or the tests' stand-in)."""

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None: ...
    def nvmlDeviceGetHandleByPciBusId(self, bus_id: str) -> object: ...
    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: object) -> int: ...
    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: object) -> int: ...


#: a device that can run a benchmark point: this machine's CPU or one of its CUDA GPUs
PresentDevice = CpuDevice | CudaGpu

_discovery_lock = threading.Lock()
#: this process's records, discovered once per kind ("cpu", "gpu") and never again
_records: dict[str, list[PresentDevice]] = {}


def device_record(device: str) -> PresentDevice | None:
    """The record of ``device`` ("cpu", "cuda:0") on this machine, from one discovery per kind and
    process (the CPU's probe for "cpu", the GPU probes for a GPU: neither runs twice); ``None``
    when it is not here."""
    kind = "cpu" if device == "cpu" else "gpu"
    with _discovery_lock:
        if kind not in _records:
            try:
                from explorer.devices.discover import discover

                found = discover(include_catalog=False, probe_cpu=kind == "cpu", probe_gpus=kind == "gpu")
                _records[kind] = [d for d in found.devices if isinstance(d, (CpuDevice, CudaGpu))]
            except Exception:  # discovery never raises; belt and braces for a worker
                _records[kind] = []
        records = _records[kind]
    return next((d for d in records if d.key == device or (device == "cpu" and d.kind == "cpu")), None)


def pcie_link(
    device: str, nvml: PcieLinkReader | None = None, deadline_s: float = DEADLINES_S["nvml"]
) -> tuple[int | None, int | None]:
    """(generation, lanes) of the GPU's link *now*: read after a copy, the link is out of its idle
    power state (GPUs drop to gen1 when idle, and a reading taken then would halve the peak).
    NVML is asked under the probes' deadline (a hung driver costs ``deadline_s``, not the run);
    without an answer the record's reading from discovery stands. ``nvml``: pynvml, or a stand-in."""
    rec = device_record(device)
    if not isinstance(rec, CudaGpu):
        return None, None
    gen, width, bus_id = rec.pcie_generation, rec.pcie_width, rec.pci_bus_id
    if bus_id:
        try:
            module: PcieLinkReader
            if nvml is None:
                from explorer.devices.nvml import import_nvml  # never a sys.exit of a broken pynvml

                module = import_nvml()
            else:
                module = nvml
            gen, width = call_with_deadline(
                "nvml", lambda: _link_now(module, bus_id), deadline_s, key=("pcie link", id(module))
            )
        except Exception:
            pass  # no NVML, no answer in time (ProbeTimedOut), a driver error: the record's reading
    return gen, width


def _link_now(nvml: PcieLinkReader, bus_id: str) -> tuple[int, int]:
    nvml.nvmlInit()
    try:
        handle = nvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        return nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle), nvml.nvmlDeviceGetCurrPcieLinkWidth(handle)
    finally:
        nvml.nvmlShutdown()


# --- the worker's roofs -------------------------------------------------------------------------

#: the roof each device's points are placed under in this process, built once
_book = RoofBook()


def worker_roof(device: str) -> Roof:
    """The roof of ``device`` this process places points under: built on first use, then the same
    object for every later point (``forget_roof`` after measuring again). Its ``notice`` says, once,
    that the stored ceilings were damaged and moved aside."""
    roof = _book.get(device)
    if roof is not None:
        return roof
    rec = device_record(device)
    if rec is None:
        roof = Roof(device, device, note=f"{device} was not found")
        _book.replace(roof)
        return roof
    roof = _book.roof(rec)
    notice = _book.take_notice()
    if notice:
        roof.notice = f"{roof.notice} {notice}".strip()
    return roof


def forget_roof(device: str) -> None:
    _book.forget(device)


def machine_quiet_now() -> bool:
    """Whether other programs leave the CPU alone right now (a 0.15 s look): a roof measured while
    they do not would be marked busy and could not replace one measured while busy before."""
    from explorer.bench.noise import OTHERS_LIMIT, others_busy_cores

    cpus = os.cpu_count() or 1
    return others_busy_cores() <= OTHERS_LIMIT * cpus


def needs_measuring(device: str) -> bool:
    """Whether a run asked to measure the ceilings "once" must measure them now: none stored for
    this machine, or only one measured while busy and the machine is quiet now."""
    rec = device_record(device)
    fp = fingerprint(rec) if rec is not None else None
    if fp is None:
        return False
    status, stored = store.load(device, fp)
    if status != "stored" or stored is None:
        return True
    return not stored.quiet and machine_quiet_now()


def ensure_measured(
    device: str,
    *,
    force: bool = False,
    record: PresentDevice | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> store.Saved | None:
    """Measure ``device``'s ceilings and store them (where ``force``, or ``needs_measuring``);
    ``None`` when nothing was measured. A busy measurement does not replace a quiet stored one
    (``store.save``); the returned ``Saved`` says which is kept. ``record``: the device's record
    where the caller has one (else this process's discovery). Runs in a benchmark worker or the
    CLI, never in the window's thread: it takes seconds."""
    rec = record if record is not None else device_record(device)
    fp = fingerprint(rec) if rec is not None else None
    if rec is None or fp is None or not (force or needs_measuring(device)):
        return None
    from explorer.bench import ceilings

    said = progress if progress is not None else ceilings.quiet_progress
    if isinstance(rec, CpuDevice):
        measured = ceilings.measure_cpu_roof(rec, fp, progress=said)
    else:
        import torch

        measured = ceilings.measure_gpu_roof(torch, torch.device(device), rec, fp, device, progress=said)
    unsteady = unsteady_against_stored(measured)
    if unsteady is not None:
        return unsteady
    saved = store.save(measured)
    forget_roof(device)
    return saved


@dataclass(frozen=True)
class NotSteady(store.Saved):
    """A quiet measurement turned away because it moved more than 10% from the quiet one stored:
    the machine did not hold still, so neither figure can be trusted over the other, and the
    earlier one stays."""

    @property
    def message(self) -> str:
        from explorer.roofs.texts import when_text

        kept = self.stored
        return (
            f"{kept.device}: the machine is not steady: {self.turned_away} (more than "
            f"{STEADY_TOLERANCE:.0%} from the stored figures), so the quiet measurement "
            f"{when_text(kept.measured_at)} is kept; measure again when the machine is idle"
        )


def unsteady_against_stored(measured: store.MeasuredRoof) -> store.Saved | None:
    """Where a quiet measurement lands more than 10% from the quiet one stored for this machine at
    any level (or the FP32 ceiling), measured the same way: the machine is not steady, and the
    stored one is kept (a ``Saved`` saying so). ``None`` where the new one may be stored: it
    agrees, nothing comparable is stored, or either was measured while busy (the busy rule)."""
    status, old = store.load(measured.device, measured.fingerprint)
    if status != "stored" or old is None or not old.quiet or not measured.quiet:
        return None
    changes = unsteady_changes(old.ceilings, measured.ceilings)
    if not changes:
        return None
    return NotSteady(old, replaced=False, turned_away="; ".join(changes))


#: devices whose ceilings this process has already seen to (a run looks once, at its first point)
_checked: set[str] = set()


class RoofNotice(NamedTuple):
    """What a run must say of a device's ceilings (one line, "" for nothing) and whether it is a
    failure (not measured, or measured but not kept: a full disk), which the point carries and the
    CLI's exit status reports, or only news (a busy measurement turned away)."""

    text: str = ""
    failed: bool = False


def ensure_measured_quietly(device: str, force: bool = False) -> RoofNotice:
    """``ensure_measured`` for a benchmark run, once per device and process: a failure to measure
    never costs the point. What the user must hear (it failed; a busy measurement did not replace
    the quiet one) is returned in one line and kept on the device's roof as its notice, which the
    runner carries to the CLI or the window with the roof."""
    if device in _checked and not force:
        return RoofNotice()
    _checked.add(device)
    failed = True
    try:
        saved = ensure_measured(device, force=force)
        # what a run must say: a measurement turned away (busy, or not steady: the quiet one is
        # kept); one stored while busy says so on its own, in every label of its roof
        said = saved.message if saved is not None and not saved.replaced else ""
        failed = False
    except OSError as exc:  # measured, but a full or read-only disk kept it from being stored
        said = (
            f"the ceilings of {device} could not be kept in {store.store_path()} "
            f"({exc.strerror or exc}); they are measured again next time"
        )[:300]
    except Exception as exc:
        said = f"the ceilings of {device} could not be measured: {type(exc).__name__}: {exc}"[:300]
    if said:
        roof = worker_roof(device)
        roof.notice = f"{roof.notice} {said}".strip()
    return RoofNotice(said, failed and bool(said))


# --- peaks a workload draws its points against ---------------------------------------------------


def peak_ceiling(roof: Roof, quantity: str) -> Ceiling | None:
    """The ceiling a point's "% of peak" is taken against. Compute: the measured FP32 ceiling (an
    FMA loop on every core) where it was measured, its basis naming the theoretical peak beside it
    (and why they differ, where they do by more than a quarter); else the theoretical (or
    spec-sheet) one; else the highest measured. Memory: the theoretical one, else the fastest."""
    if quantity == "compute":
        chosen = roof.compute_roof()
        peak = roof.theoretical()
        if chosen is None or peak is None or chosen is peak:
            return chosen
        from dataclasses import replace

        from explorer.roofs.texts import peak_gap_text

        beside = f"; the {peak.kind} peak is {number_text(peak.value, peak.unit)} ({peak.basis})"
        gap = peak_gap_text(roof)
        return replace(
            chosen, basis=f"measured FP32 ceiling, {chosen.basis}{beside}" + (f". {gap}" if gap else "")
        )
    theoretical = [c for c in roof.ceilings if c.quantity == quantity and c.kind != "measured"]
    return theoretical[0] if theoretical else roof.top("memory")


def fp32_peak_gflops(device: str) -> float | None:
    """The FP32 peak of ``device``'s roof (on the measured clock where it was measured)."""
    chosen = peak_ceiling(worker_roof(device), "compute")
    return chosen.value if chosen else None


def memory_bandwidth_gbps(device: str) -> float | None:
    """``device``'s DRAM bandwidth (the strided copy's model multiplies it), ``None`` where unknown."""
    dram = worker_roof(device).main_memory()
    return dram.value if dram else None


@dataclass(frozen=True)
class PeakBasis:
    """Where a peak figure comes from, in words; whether it is an estimate; its kind."""

    text: str
    is_estimate: bool
    kind: str = ""


def compute_peak_basis(device: str) -> PeakBasis:
    chosen = peak_ceiling(worker_roof(device), "compute")
    if chosen is None:
        return PeakBasis("", False)
    return PeakBasis(chosen.basis, chosen.estimate, chosen.kind)


PCIE_BASIS = PeakBasis("PCIe link maximum (generation x lanes)", False, "theoretical")


def place_point(
    point: BenchPoint, flops: float, bytes_moved: float, working_set: float | None, *, bus_bound: bool = False
) -> BenchPoint:
    """The point judged against its device's roof in this worker (``explorer.bench.judge``)."""
    from explorer.bench.judge import judge

    return judge(point, flops, bytes_moved, working_set, worker_roof(point.device), bus_bound=bus_bound)
