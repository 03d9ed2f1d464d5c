"""Each device record's roof: its theoretical ceilings and the ones measured on this machine.

One function builds it for every reader (``record_roof``): the Devices page, ``devices`` and
``devices --json``, the benchmark worker that places points, a remote machine's agent. It reads
the per-machine store (``explorer.roofs.store``) and the record, nothing else, and measures
nothing, so a view may call it.

* A CPU: the FP32 peak (cores x FLOP per cycle x the clock *measured* here, else the reported
  clock, then labelled an estimate), the measured sgemm, and one measured bandwidth per memory
  level (L1, L2, L3, DRAM: ``explorer.bench.ceilings`` sweeps the working set).
* A GPU in this machine: its FP32 peak and DRAM bandwidth from clocks and tables (estimates),
  and the measured sgemm, L2 and DRAM bandwidths once measured.
* A catalog GPU: its spec sheet's FP32 peak and DRAM bandwidth, labelled "spec sheet".

``RoofBook`` keeps one roof per device of a machine, built once by ``record_roof`` and replaced
only by a new measurement: the benchmark worker places every point of a device under its book's
roof (``explorer.bench.peaks``) and the window's pages show the roof of its book
(``AppContext.roofs``), so neither reads the store again for each point or each redraw.
"""

from __future__ import annotations

import threading

from explorer.devices.cpu import ADVERTISED_CLOCK_NOTE, core_flops_per_cycle
from explorer.devices.isa import cpu_fp32_peak_basis, cpu_fp32_peak_gflops
from explorer.devices.model import CatalogGpu, CpuDevice, Device
from explorer.roofs import store
from explorer.roofs.model import FMA_NAME, INVALID_WORDS, Ceiling, Roof
from explorer.roofs.placement import beyond_hardware, boost_peak
from explorer.roofs.store import MeasuredRoof
from explorer.roofs.texts import when_text
from explorer.units import number_text


def fingerprint(rec: Device) -> str | None:
    """This machine's fingerprint for ``rec``'s stored measurements; ``None`` for a catalog sheet."""
    if rec.kind == "cpu":
        return store.cpu_fingerprint(rec.name, rec.physical_cores, rec.logical_cores, rec.memory_total_bytes)
    if rec.kind == "cuda":
        return store.gpu_fingerprint(rec.name, rec.uuid, rec.driver_version)
    return None


def stored(rec: Device) -> tuple[store.StoreStatus, MeasuredRoof | None]:
    """The stored measurement of ``rec`` and whether it is this machine's."""
    fp = fingerprint(rec)
    if fp is None:
        return "absent", None
    return store.load(rec.key, fp)


def record_roof(rec: Device) -> Roof:
    """``rec``'s roof: its theoretical ceilings and this machine's stored measured ones."""
    if rec.kind == "catalog":
        return catalog_roof(rec)
    status, measured = stored(rec)
    usable = measured if status == "stored" else None
    roof = Roof(rec.key, rec.name)
    if rec.kind == "cpu":
        roof.ceilings.extend(_cpu_peak(rec, usable))
    else:
        if rec.fp32_peak_gflops:
            roof.ceilings.append(_reported_peak(rec.fp32_peak_gflops, rec.fp32_peak_basis))
        if rec.memory_bandwidth_gbps:
            roof.ceilings.append(
                Ceiling(
                    "memory",
                    rec.memory_bandwidth_gbps,
                    "theoretical",
                    "DRAM bandwidth",
                    rec.memory_bandwidth_basis or "memory clock x bus width",
                    estimate=True,  # the memory clock the driver reports x the bus width
                    level="DRAM",
                )
            )
    _set_hardware_limits(roof, rec)
    if usable is not None:
        kept, dropped = within_hardware(roof, usable.usable_ceilings())
        roof.ceilings.extend(kept)
        roof.clock_ghz, roof.clock_method = usable.clock_ghz, usable.clock_method
        roof.measured_at, roof.quiet, roof.took_s = usable.measured_at, usable.quiet, usable.took_s
        roof.latency = usable.latency
        roof.note = measured_note(usable)
    elif status == "other machine" and measured is not None:
        roof.note = other_machine_note(measured.fingerprint, fingerprint(rec) or "")
    else:
        roof.note = "not measured yet on this machine"
    if usable is not None and dropped:
        roof.note = f"{roof.note}; {dropped}"
    return roof


def _set_hardware_limits(roof: Roof, rec: CpuDevice | Device) -> None:
    """The limits no point may beat (``Roof.boost_peak_gflops``, ``Roof.llc_bytes``): a CPU's FP32
    peak at its maximum clock (not an advertised one, which may be the base clock) and all of its
    last-level cache; a GPU's FP32 peak (at its boost clock) and its L2."""
    if rec.kind == "cpu" and isinstance(rec, CpuDevice):
        mhz, cores = rec.frequency_max_mhz, rec.physical_cores
        advertised = any(n.startswith(ADVERTISED_CLOCK_NOTE) for n in rec.notes)
        if mhz and cores and not advertised:
            per_cycle = core_flops_per_cycle(rec)
            roof.boost_peak_gflops = round(cpu_fp32_peak_gflops(mhz / 1000.0, cores, per_cycle), 1)
            roof.boost_peak_basis = cpu_fp32_peak_basis(f"maximum clock {mhz:.0f} MHz", cores, per_cycle)
        if rec.caches:
            roof.llc_bytes = rec.caches[-1].total_bytes
    elif rec.kind == "cuda":
        if rec.fp32_peak_gflops:
            roof.boost_peak_gflops = rec.fp32_peak_gflops
            roof.boost_peak_basis = rec.fp32_peak_basis or "boost clock x the compute-capability tables"
        limits = getattr(rec, "limits", None)
        l2 = getattr(limits, "l2_cache_bytes", None)
        roof.llc_bytes = l2 if isinstance(l2, int) and l2 > 0 else None


def within_hardware(roof: Roof, ceilings: list[Ceiling]) -> tuple[list[Ceiling], str]:
    """The measured ceilings no faster than the hardware can go, and one line naming any left out:
    a measured compute ceiling above ``ABOVE_HARDWARE`` of the FP32 peak at boost, or a measured
    DRAM one above that share of the theoretical DRAM bandwidth, missed work while it was timed and
    is no roof (every point would look slow under it)."""
    peak, dram = boost_peak(roof), roof.dram_peak()
    kept: list[Ceiling] = []
    left: list[str] = []
    for c in ceilings:
        bound = (
            peak[0]
            if c.quantity == "compute" and peak is not None
            else dram.value
            if c.quantity == "memory" and c.level == "DRAM" and dram is not None
            else None
        )
        if c.kind == "measured" and bound is not None and beyond_hardware(c.value, bound):
            left.append(f"{c.name} {number_text(c.value, c.unit)} (above {number_text(bound, c.unit)})")
        else:
            kept.append(c)
    if not left:
        return kept, ""
    return kept, f"not used, {INVALID_WORDS}: {', '.join(left)}"


def other_machine_note(stored: str, current: str) -> str:
    """Why the stored measurements are not used, naming what differs: "the stored measurements are
    from other software on this machine (measured with torch 2.13.0; this is 2.14.1); not used
    (measure again)"."""
    differs, software_only = store.what_differs(stored, current)
    where = "from other software on this machine" if software_only else "from another machine"
    return f"the stored measurements are {where} ({differs}); not used (measure again)"


def measured_note(m: MeasuredRoof) -> str:
    """ "measured 3 days ago (2026-11-20 14:02 UTC), quiet, in 11 s" or, busy, why."""
    took = f", in {m.took_s:.0f} s" if m.took_s else ""
    if m.quiet:
        return f"{when_text(m.measured_at)} on a quiet machine{took}"
    return (
        f"{when_text(m.measured_at)} while other programs were busy ({m.busy_reason}){took}: "
        "lower than this machine can do; kept only until a quiet measurement replaces it"
    )


def _cpu_peak(rec: CpuDevice, usable: MeasuredRoof | None) -> list[Ceiling]:
    """The CPU's FP32 peak: on the measured clock where there is one, else the record's estimate."""
    if usable is not None and usable.clock_ghz and rec.physical_cores:
        per_cycle = core_flops_per_cycle(rec)  # its flags on its vendor's core (AMD Zen 4: 32)
        peak = cpu_fp32_peak_gflops(usable.clock_ghz, rec.physical_cores, per_cycle)
        return [
            Ceiling(
                "compute",
                round(peak, 1),
                "theoretical",
                "FP32 peak",
                cpu_fp32_peak_basis(
                    f"measured clock {usable.clock_ghz:.2f} GHz", rec.physical_cores, per_cycle
                ),
                usable.measured_at,
                disturbed=not usable.quiet,
            )
        ]
    if rec.fp32_peak_gflops:  # cores x a reported clock x FLOP per cycle: an estimate
        return [_reported_peak(rec.fp32_peak_gflops, rec.fp32_peak_basis)]
    return []


def _reported_peak(value: float, basis: str) -> Ceiling:
    """A record's own FP32 peak: a formula over the clock it reports (a CPU's advertised or
    maximum clock, a GPU's boost clock x the compute-capability tables), hence an estimate."""
    return Ceiling("compute", value, "theoretical", "FP32 peak", basis, estimate=bool(basis))


def catalog_roof(rec: CatalogGpu) -> Roof:
    """A catalog GPU's roof from its spec sheet, so a lesson can show an H100's roof on any laptop."""
    roof = Roof(rec.key, f"{rec.name} (catalog)", note=f"spec sheet: {rec.source}")
    roof.boost_peak_gflops = rec.fp32_peak_gflops or None  # a spec sheet's peak is at boost clock
    roof.boost_peak_basis = "spec sheet" if rec.fp32_peak_gflops else ""
    if rec.fp32_peak_gflops:
        roof.ceilings.append(
            Ceiling("compute", rec.fp32_peak_gflops, "spec sheet", "FP32 peak", "spec sheet")
        )
    if rec.memory_bandwidth_gbps:
        roof.ceilings.append(
            Ceiling(
                "memory",
                float(rec.memory_bandwidth_gbps),
                "spec sheet",
                "DRAM bandwidth",
                f"spec sheet ({rec.memory_type or 'DRAM'})",
                level="DRAM",
            )
        )
    return roof


#: the note the CPU probe leaves for its reported-clock estimate (replaced once a clock is measured)
_ESTIMATE_NOTE = "theoretical FP32 peak estimate:"


def apply_measured(device: CpuDevice, roof: Roof) -> None:
    """Where this machine's clock and ceilings have been measured, the CPU's record carries them
    with their basis: the measured clock, the FP32 peak built on it instead of the reported-clock
    estimate, the measured sgemm and the DRAM bandwidth. Nothing is measured here."""
    if roof.clock_ghz is None:
        return
    device.clock_measured_ghz = roof.clock_ghz
    device.clock_measured_basis = f"{roof.clock_method}; {roof.note}"
    device.unavailable.discard("clock_measured_ghz")
    peak = next((c for c in roof.ceilings if c.quantity == "compute" and c.kind == "theoretical"), None)
    if peak is not None and not peak.estimate:
        device.fp32_peak_gflops, device.fp32_peak_basis = peak.value, peak.basis
        device.notes = [n for n in device.notes if not n.startswith(_ESTIMATE_NOTE)]
        device.notes.append(f"theoretical FP32 peak: {peak.basis}")
    # the record's "FP32 sgemm (measured)" is the matmul's, not the FMA loop's (the roof shows both)
    sgemm = next(
        (c for c in roof.ceilings if c.quantity == "compute" and c.kind == "measured" and c.name != FMA_NAME),
        None,
    )
    if sgemm is not None:
        device.fp32_measured_gflops, device.fp32_measured_basis = sgemm.value, f"{sgemm.name}: {sgemm.basis}"
        device.unavailable.discard("fp32_measured_gflops")
    dram = roof.level("DRAM")
    if dram is not None:
        device.memory_bandwidth_gbps = dram.value
        device.memory_bandwidth_basis = f"measured, {dram.name}: {dram.basis}"
        device.unavailable.discard("memory_bandwidth_gbps")


class RoofBook:
    """One roof per device of one machine, built once (``record_roof``) on first ask and kept until
    the device is measured again (``replace``) or its records change (``clear``). Thread-safe: a
    worker's points and its agent's methods may ask from different threads."""

    def __init__(self) -> None:
        self._roofs: dict[str, Roof] = {}
        self._notices: list[str] = []
        self._lock = threading.Lock()

    def roof(self, rec: Device) -> Roof:
        """``rec``'s roof: the one already built, or built now from the record and the store."""
        with self._lock:
            roof = self._roofs.get(rec.key)
            if roof is None:
                roof = self._roofs[rec.key] = record_roof(rec)
                notice = store.take_notice()  # the store was damaged and moved aside: said once
                if notice:
                    self._notices.append(notice)
            return roof

    def get(self, key: str) -> Roof | None:
        """The roof built for the device ``key``, if one was."""
        with self._lock:
            return self._roofs.get(key)

    def replace(self, roof: Roof) -> None:
        """``roof`` (a new measurement of its device) stands for its device from now on."""
        with self._lock:
            self._roofs[roof.device] = roof

    def forget(self, key: str) -> None:
        """The device ``key``'s roof is built again on the next ask (its ceilings were measured)."""
        with self._lock:
            self._roofs.pop(key, None)

    def clear(self) -> None:
        """Every roof is built again on its next ask (the device records were found anew)."""
        with self._lock:
            self._roofs.clear()

    def take_notice(self) -> str:
        """What building the roofs must tell the user, once ("" when nothing)."""
        with self._lock:
            text = " ".join(self._notices)
            self._notices.clear()
        return text
