"""Run every probe, merge what they say about each physical GPU, and never raise.

Views of one NVIDIA GPU: NVML (the driver's management library: identity, sensors,
processes), the CUDA driver API asked through ctypes (``cuda_driver``: compute capability,
SMs, limits, in milliseconds), and, when asked for, the CUDA runtime through torch and numba
(seconds to import; they tell whether the app can run GPU work through them). They number
GPUs differently: NVML in PCI bus order over *all* GPUs, CUDA "fastest first" over only the
GPUs ``CUDA_VISIBLE_DEVICES`` lets through. So views are joined on UUID, then PCI bus id,
never on list position. Listing devices never needs torch or numba: the driver gives every
fact they gave.

Order of ``Discovery.devices``: the CPU, present GPUs by CUDA index, then catalog GPUs.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from explorer.devices.arch import fill_from_compute_capability
from explorer.devices.deadline import DEADLINES_S, PROBE_NAMES, ProbeTimedOut, call_with_deadline
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice, CudaGpu, Device

_cache_lock = threading.Lock()
_cached: Discovery | None = None


def _failed(probe: str, exc: BaseException) -> ProbeReport:
    return ProbeReport(
        probe=probe, ok=False, message=f"The {probe} probe failed unexpectedly: {type(exc).__name__}: {exc}"
    )


def normalize_bus_id(bus_id: str | None) -> str | None:
    """'00000000:01:00.0', '0000:01:00.0' and '01:00.0' all name the same slot: compare as 'dddd:bb:dd.f'."""
    if not bus_id:
        return None
    text = str(bus_id).strip().lower()
    parts = text.split(":")
    try:
        if len(parts) == 3:
            domain, bus, rest = parts
        elif len(parts) == 2:
            domain, (bus, rest) = "0", parts
        else:
            return text
        dev, _, func = rest.partition(".")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(dev, 16):02x}.{int(func or '0', 16):x}"
    except ValueError:
        return text


def normalize_uuid(uuid: str | None) -> str | None:
    """NVML says 'GPU-1234abcd-...'; torch gives the bare hex UUID. Compare without prefix or case."""
    if not uuid:
        return None
    text = str(uuid).strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text


def _fill_missing(target: CudaGpu, other: CudaGpu) -> None:
    """Copy into ``target`` every field it lacks and ``other`` has; reasons follow the values."""
    for f in fields(CudaGpu):
        name = f.name
        if name in ("kind", "key", "index", "hidden", "unavailable", "notes", "processes", "source"):
            continue
        mine, theirs = getattr(target, name), getattr(other, name)
        if mine in (None, "", [], {}) and theirs not in (None, "", [], {}):
            setattr(target, name, theirs)
    if not target.processes and other.processes:
        target.processes = list(other.processes)
    for k, v in other.unavailable.items():
        if target.value(k) in (None, "", [], {}):
            target.mark_unavailable(k, v)
    for k in list(target.unavailable):
        if target.value(k) not in (None, "", [], {}):
            target.unavailable.discard(k)
    target.notes.extend(n for n in other.notes if n not in target.notes)
    sources = [s for s in (target.source, other.source) if s]
    target.source = " + ".join(dict.fromkeys(" + ".join(sources).split(" + ")))


def _same_gpu(a: CudaGpu, b: CudaGpu) -> bool:
    """Same board: equal UUIDs, or else the same PCI slot (a MIG instance has its own UUID
    but sits in its parent's slot, and its sensors are the parent's)."""
    ua, ub = normalize_uuid(a.uuid), normalize_uuid(b.uuid)
    if ua and ub and ua == ub:
        return True
    pa, pb = normalize_bus_id(a.pci_bus_id), normalize_bus_id(b.pci_bus_id)
    return bool(pa and pb and pa == pb)


def _source_name(dev: CudaGpu) -> str:
    return dev.source or "a CUDA runtime"


def combine_cuda_views(views: list[list[CudaGpu]]) -> list[CudaGpu]:
    """One record per CUDA ordinal from several views numbered the same way (the CUDA driver,
    torch, numba: all ask the same driver under the same ``CUDA_VISIBLE_DEVICES``).

    The first non-empty view is the base; each later one fills the fields and limits it lacks,
    unless its GPU at that ordinal sits in another PCI slot (then a note says the views disagree).
    """
    present = [v for v in views if v]
    if not present:
        return []
    base, *others = present
    for dev in base:
        for view in others:
            partner = next((n for n in view if n.index == dev.index), None)
            if partner is None:
                continue
            if partner.pci_bus_id and dev.pci_bus_id and not _same_gpu(dev, partner):
                dev.notes.append(
                    f"{_source_name(partner)} and {_source_name(dev)} disagree on which GPU has this index; "
                    f"{_source_name(partner)}'s view was not merged."
                )
                continue
            _fill_missing(dev, partner)
            if dev.limits is None and partner.limits is not None:
                dev.limits = copy.copy(partner.limits)
            elif dev.limits is not None and partner.limits is not None:
                for f in fields(type(dev.limits)):
                    if getattr(dev.limits, f.name) is None:
                        setattr(dev.limits, f.name, getattr(partner.limits, f.name))
    return base


def merge_gpu_views(
    runtime: list[CudaGpu],
    nvml: list[CudaGpu],
    numba: list[CudaGpu] | None = None,
    *,
    nvml_reason: str = "NVML, the driver's monitoring library, is not available",
) -> list[CudaGpu]:
    """One ``CudaGpu`` per GPU, ordered by CUDA index; GPUs hidden from CUDA come last.

    ``runtime`` is a CUDA view (CUDA ordinals: the driver's, or torch's); ``numba`` fills what
    it lacks (``combine_cuda_views``); ``nvml`` devices are matched by UUID or PCI bus id.
    When no CUDA view exists (no driver library, torch without CUDA), the NVML devices stand
    alone, numbered by ``CUDA_VISIBLE_DEVICES``. GPUs NVML lists but ``CUDA_VISIBLE_DEVICES``
    hides are kept (``hidden`` says why): they are in the machine, and their live readings are real.
    """
    merged: list[CudaGpu] = []
    runtime = combine_cuda_views([runtime, numba or []])
    for dev in runtime:
        match = next((n for n in nvml if _same_gpu(dev, n)), None)
        if match is not None:
            _fill_missing(dev, match)
            # The card's memory as nvidia-smi shows it: the CUDA total leaves out what the driver
            # keeps for itself (on an H100, 79.2 GiB of NVML's 79.6 GiB).
            if match.memory_total_bytes:
                dev.memory_total_bytes = match.memory_total_bytes
            dev.nvml_index = match.nvml_index
            dev.live = match.live
        elif not nvml:
            dev.mark_unavailable("live", f"no live readings: {nvml_reason}")
        else:
            dev.mark_unavailable("live", "NVML has no device with this GPU's UUID or PCI bus id")
        merged.append(dev)
    for dev in nvml:
        if dev.hidden or (not runtime and dev.index is not None):
            merged.append(dev)
    merged.sort(key=lambda d: (d.index is None, d.index if d.index is not None else d.nvml_index or 0))
    for dev in merged:
        if dev.index is not None:
            dev.key = f"cuda:{dev.index}"
    return merged


def cuda_driver_loadable() -> bool:
    """Whether the CUDA driver library (libcuda / nvcuda.dll) can be loaded: a cheap hint that a GPU may be there."""
    from explorer.devices.cuda_driver import library_loadable

    return library_loadable()


#: Which probe reports each field of a present GPU: "nvml", "runtime" (the CUDA driver, or torch and
#: numba), "either".
#: A field left empty after the merge takes the reason of the probe that should have filled it.
#: (``architecture``, ``cuda_cores_per_sm`` and ``fp32_peak_gflops`` come from the compute-capability
#: tables, which give their own reasons; ``index``, ``hidden`` and ``processes`` may rightly be empty.)
GPU_FIELD_SOURCES: dict[str, str] = {
    "name": "either",
    "vendor": "either",
    "memory_total_bytes": "either",
    "memory_bandwidth_gbps": "runtime",
    "compute_capability": "either",
    "sm_count": "runtime",
    "clock_sm_max_mhz": "either",
    "memory_bus_width_bits": "either",
    "limits": "runtime",
    "nvml_index": "nvml",
    "uuid": "either",
    "pci_bus_id": "either",
    "driver_version": "nvml",
    "cuda_driver_version": "nvml",
    "clock_sm_mhz": "nvml",
    "clock_memory_mhz": "nvml",
    "clock_memory_max_mhz": "either",
    "pcie_generation": "nvml",
    "pcie_width": "nvml",
    "pcie_generation_max": "nvml",
    "pcie_width_max": "nvml",
    "mig_mode": "nvml",
    "live": "nvml",
}


def explain_missing(gpu: CudaGpu, nvml_reason: str, runtime_reason: str) -> None:
    """Give every field the probes left empty the reason of the probe that should have filled it.

    ``nvml_reason`` says why NVML told nothing about this GPU ("" when it did), ``runtime_reason``
    the same for the CUDA driver (and torch and numba, when asked). A field both were asked for
    and neither reported says so.
    """
    neither = "neither NVML nor the CUDA driver reported it for this GPU"
    nvml_reason = nvml_reason or gpu.unavailable.get("live", "")
    for name, source in GPU_FIELD_SOURCES.items():
        if gpu.reason(name) is not None or gpu.value(name) not in (None, "", [], {}):
            continue
        if source == "nvml":
            gpu.mark_unavailable(name, nvml_reason or "NVML did not report it for this GPU")
        elif source == "runtime":
            gpu.mark_unavailable(name, runtime_reason or "the CUDA driver did not report it")
        else:
            gpu.mark_unavailable(name, " ".join(r for r in (nvml_reason, runtime_reason) if r) or neither)
    if gpu.limits is not None:
        for f in fields(gpu.limits):
            if getattr(gpu.limits, f.name) is None:
                gpu.mark_unavailable(f"limits.{f.name}", "the CUDA driver did not report this limit")


@dataclass
class _NvmlView:
    devices: list[CudaGpu] = field(default_factory=list)
    mapping_note: str | None = None


def _timed_out_or_failed(probe: str, exc: BaseException) -> ProbeReport:
    if isinstance(exc, ProbeTimedOut):
        return ProbeReport(probe, False, str(exc), timed_out=True)
    return _failed(probe, exc)


def _ask_nvml(nvml: Any, deadline_s: float) -> tuple[_NvmlView, ProbeReport]:
    """NVML's GPUs, asked under a deadline: a hung ``nvmlInit`` costs ``deadline_s``, not a minute."""
    from explorer.devices.nvml import NvmlUnavailable, import_nvml, probe_nvml

    if nvml is None:
        try:
            nvml = import_nvml()
        except NvmlUnavailable as exc:
            return _NvmlView(), ProbeReport("nvml", False, str(exc))
    try:
        result = call_with_deadline("nvml", lambda: probe_nvml(nvml), deadline_s, key=id(nvml))
    except Exception as exc:
        return _NvmlView(), _timed_out_or_failed("nvml", exc)
    note = result.mapping.note if result.mapping else None
    return _NvmlView(result.devices, note), result.report


def _ask_driver(lib: Any, deadline_s: float) -> tuple[list[CudaGpu], ProbeReport]:
    """The CUDA driver's GPUs, asked under a deadline: a hung ``cuInit`` costs ``deadline_s``."""
    from explorer.devices.cuda_driver import DriverUnavailable, load_library, probe_driver

    if lib is None:
        try:
            lib = load_library()
        except DriverUnavailable as exc:
            text = str(exc)
            return [], ProbeReport("driver", False, text[0].upper() + text[1:])
    try:
        return call_with_deadline("driver", lambda: probe_driver(lib), deadline_s, key=id(lib))
    except Exception as exc:
        return [], _timed_out_or_failed("driver", exc)


def _ask_runtimes(
    torch: Any, numba: Any, deadlines: dict[str, float]
) -> dict[str, tuple[list[CudaGpu], ProbeReport]]:
    """torch's and numba's GPUs. Both modules are imported first (seconds, but no driver call),
    then both are asked at once, each under its own deadline, so a hung ``cuInit`` costs one
    deadline, not two."""
    from explorer.devices.cuda import import_numba, import_torch, probe_numba, probe_torch

    found: dict[str, tuple[list[CudaGpu], ProbeReport]] = {}
    asks: dict[str, tuple[Any, Any]] = {}
    for probe, module, importer, prober in (
        ("torch", torch, import_torch, probe_torch),
        ("numba", numba, import_numba, probe_numba),
    ):
        if module is None:
            try:
                module, report = importer()
            except Exception as exc:
                module, report = None, _failed(probe, exc)
            if report is not None:
                found[probe] = ([], report)
                continue
        asks[probe] = (module, prober)

    def ask(probe: str) -> None:
        module, prober = asks[probe]
        try:
            found[probe] = call_with_deadline(probe, lambda: prober(module), deadlines[probe], key=id(module))
        except Exception as exc:
            found[probe] = ([], _timed_out_or_failed(probe, exc))

    threads = [threading.Thread(target=ask, args=(p,), name=f"ask-{p}", daemon=True) for p in asks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()  # each returns by its deadline: call_with_deadline never waits longer
    return found


def _runtimes_without_import(
    nvml_report: ProbeReport,
    driver_report: ProbeReport | None,
    no_gpu_seen: bool,
    torch: Any,
    numba: Any,
    driver: Any,
) -> dict[str, tuple[list[CudaGpu], ProbeReport]] | None:
    """torch's and numba's reports read from their installed files, when importing them (seconds)
    could tell nothing more: NVML and the CUDA driver answered, neither sees a GPU, and the real
    modules would be asked (no stand-ins). ``None`` otherwise: then they are imported and asked."""
    if not no_gpu_seen or torch is not None or numba is not None or driver is not None:
        return None
    if nvml_report.timed_out or (driver_report is not None and driver_report.timed_out):
        return None  # a hung driver may hide a GPU: let the runtimes try under their deadlines
    from explorer.devices.cuda import installed_facts

    stand_in_nvml = driver_report is None  # the real driver was not asked (a test's NVML)
    facts = installed_facts(driver_found=not stand_in_nvml and cuda_driver_loadable())
    if facts is None:
        return None
    return {probe: ([], report) for probe, report in facts.items()}


def _assemble_gpus(
    nvml: _NvmlView,
    nvml_report: ProbeReport,
    driver: tuple[list[CudaGpu], ProbeReport | None],
    runtimes: dict[str, tuple[list[CudaGpu], ProbeReport]] | None,
) -> list[CudaGpu]:
    """Merge what the probes said into one record per GPU, every missing field with its reason.

    ``driver`` is the CUDA driver's view (no report when it was not asked); ``runtimes`` torch's and numba's: ``{}`` when they were
    not asked (listing devices needs neither), ``None`` while they are still being asked (the
    records are then copies, so the final merge starts from clean ones).
    """
    pending = runtimes is None
    driver_devices, driver_report = driver
    torch_devices, torch_report = (runtimes or {}).get("torch", ([], None))
    numba_devices, numba_report = (runtimes or {}).get("numba", ([], None))
    nvml_devices = copy.deepcopy(nvml.devices) if pending else nvml.devices
    if pending:
        driver_devices = copy.deepcopy(driver_devices)
    cuda_view = combine_cuda_views([driver_devices, torch_devices, numba_devices])
    gpus = merge_gpu_views(cuda_view, nvml_devices, nvml_reason=nvml_report.message)
    for gpu in gpus:
        try:
            fill_from_compute_capability(gpu)
        except Exception as exc:
            gpu.notes.append(f"Could not derive facts from the compute capability: {exc}")
    if gpus and not pending and not cuda_view:
        for gpu in gpus:
            if gpu.hidden:
                continue
            who = (
                "Neither the CUDA driver nor a CUDA runtime (torch, numba) sees"
                if runtimes
                else ("The CUDA driver does not see")
            )
            gpu.notes.append(
                f"{who} this GPU, so only NVML's view is shown: no CUDA limits, and it cannot run the "
                "app's GPU benchmarks."
            )
            if nvml.mapping_note:
                gpu.notes.append(nvml.mapping_note)
    elif driver_devices and not pending and runtimes:
        # The driver sees the GPU; say which runtime the app's GPU work cannot go through, and why.
        cannot = [
            r for r, devs in ((torch_report, torch_devices), (numba_report, numba_devices)) if r and not devs
        ]
        for gpu in gpus:
            if gpu.index is None:
                continue
            for report in cannot:
                note = f"{PROBE_NAMES.get(report.probe, report.probe)} cannot use this GPU: {report.message}"
                if note not in gpu.notes:
                    gpu.notes.append(note)
    nvml_reason = "" if nvml.devices else f"NVML: {nvml_report.message}"
    if cuda_view:
        runtime_reason = ""
    elif pending:
        runtime_reason = "torch and numba are still being asked about this GPU"
    else:
        said = [r.message for r in (driver_report, torch_report, numba_report) if r is not None]
        runtime_reason = "The CUDA driver does not see this GPU: " + " ".join(said)
    for gpu in gpus:
        reason = f"CUDA cannot see this GPU here: it is {gpu.hidden}" if gpu.hidden else runtime_reason
        explain_missing(gpu, nvml_reason, reason)
    return gpus


def discover(
    *,
    include_catalog: bool = True,
    nvml: Any = None,
    driver: Any = None,
    torch: Any = None,
    numba: Any = None,
    probe_cpu: bool = True,
    probe_gpus: bool = True,
    runtimes: bool = True,
    quick: bool = False,
    deadlines: dict[str, float] | None = None,
    on_update: Callable[[Discovery], None] | None = None,
) -> Discovery:
    """Everything the app can know about this machine's compute devices. Never raises.

    The GPUs come from NVML and the CUDA driver (``cuda_driver``, through ctypes): milliseconds,
    no torch, no numba. ``runtimes=True`` then also asks torch and numba (seconds to import):
    their answers fill what the driver left out and say, per GPU, when the app's GPU work cannot
    go through one of them ("torch was built without CUDA"). ``runtimes=False`` lists devices
    without importing either (``device-explorer devices``).

    ``nvml``, ``driver`` (a libcuda), ``torch`` and ``numba`` are what to ask (tests pass
    stand-ins); ``None`` loads the real one lazily, except that the real driver is not asked
    when a stand-in NVML, torch or numba is given without a stand-in driver: a test's GPUs are
    never mixed with this machine's. ``probe_gpus=False`` skips them all (CPU + catalog only).
    ``quick=True`` skips torch and numba when neither NVML nor the CUDA driver sees a GPU, so
    they could not find one anyway; NVML's and the driver's reports say why.

    Each driver probe has a deadline (``deadline.DEADLINES_S``: NVML 3 s, the CUDA driver,
    torch.cuda and numba.cuda 6 s each once imported; ``deadlines`` overrides them): past it the
    probe's report says "NVML did not answer within 3 s: the driver or a GPU may be hung" and
    discovery carries on without it.

    ``on_update`` (the window's progressive list) is called once with what is known when the
    CPU, the catalog, NVML and the CUDA driver have answered (milliseconds) while torch and
    numba, which take seconds to import, are still asked; its ``pending`` names them. The final
    answer is the return value.
    """
    limits = {**DEADLINES_S, **(deadlines or {})}
    first: list[Device] = []
    reports: list[ProbeReport] = []
    if probe_cpu:
        try:
            from explorer.devices.cpu import probe_cpu as _probe_cpu

            cpu = _probe_cpu()
            _apply_stored_measurements(cpu)
            first.append(cpu)
            cores = f"{cpu.physical_cores or '?'} cores, {cpu.logical_cores or '?'} threads"
            reports.append(ProbeReport("cpu", True, f"{cpu.name}: {cores}", 1))
        except Exception as exc:
            reports.append(_failed("cpu", exc))
    catalog: list[Device] = []
    catalog_reports: list[ProbeReport] = []
    if include_catalog:
        try:
            from explorer.devices.catalog import load_catalog

            catalog = list(load_catalog())
            catalog_reports.append(
                ProbeReport("catalog", True, f"{len(catalog)} spec sheets (not present)", len(catalog))
            )
        except Exception as exc:
            catalog_reports.append(_failed("catalog", exc))
    if not probe_gpus:
        return Discovery(devices=first + catalog, reports=reports + catalog_reports)

    try:
        nvml_view, nvml_report = _ask_nvml(nvml, limits["nvml"])
    except Exception as exc:  # belt and braces: _ask_nvml already reports its failures
        nvml_view, nvml_report = _NvmlView(), _failed("nvml", exc)
    reports.append(nvml_report)
    stand_ins = driver is None and any(m is not None for m in (nvml, torch, numba))
    if stand_ins:
        driver_view: tuple[list[CudaGpu], ProbeReport | None] = ([], None)
    else:
        try:
            driver_view = _ask_driver(driver, limits["driver"])
        except Exception as exc:  # belt and braces: _ask_driver already reports its failures
            driver_view = ([], _failed("driver", exc))
        reports.append(driver_view[1])
    asked: dict[str, tuple[list[CudaGpu], ProbeReport]]
    no_gpu_seen = not nvml_view.devices and not driver_view[0]
    if not (runtimes or torch is not None or numba is not None):
        asked = {}
    elif quick and no_gpu_seen and torch is None and numba is None:
        asked = {}  # they could not find a GPU either: NVML's and the driver's reports say why
    elif (
        read := _runtimes_without_import(nvml_report, driver_view[1], no_gpu_seen, torch, numba, driver)
    ) is not None:
        asked = read
    else:
        if on_update is not None:
            try:
                partial_gpus: list[Device] = list(_assemble_gpus(nvml_view, nvml_report, driver_view, None))
            except Exception as exc:
                partial_gpus, reports = [], reports + [_failed("merge", exc)]
            on_update(
                Discovery(
                    devices=first + partial_gpus + catalog,
                    reports=reports + catalog_reports,
                    pending=["torch", "numba"],
                )
            )
        try:
            asked = _ask_runtimes(torch, numba, limits)
        except Exception as exc:
            asked = {"torch": ([], _failed("torch", exc)), "numba": ([], _failed("numba", exc))}
    reports += [asked[p][1] for p in ("torch", "numba") if p in asked]
    try:
        gpus: list[Device] = list(_assemble_gpus(nvml_view, nvml_report, driver_view, asked))
    except Exception as exc:
        reports.append(_failed("merge", exc))
        gpus = []
    return Discovery(devices=first + gpus + catalog, reports=reports + catalog_reports)


def _apply_stored_measurements(cpu: CpuDevice) -> None:
    """The CPU's record carries this machine's measured clock, peak and bandwidth where they are
    stored (``explorer.devices.roofs``); a store that cannot be read never costs the CPU's row."""
    from explorer.devices.roofs import apply_measured, record_roof

    try:
        apply_measured(cpu, record_roof(cpu))
    except Exception as exc:  # the row matters more than the measured figures
        cpu.notes.append(f"The measured figures could not be read: {exc}")


def default_discovery() -> Discovery:
    """The discovery ``devices.find.find_device`` uses when given none: computed once per process, from NVML
    and the CUDA driver alone (a name resolves in milliseconds; a benchmark imports torch when it runs)."""
    global _cached
    with _cache_lock:
        if _cached is None:
            _cached = discover(quick=True, runtimes=False)
        return _cached
