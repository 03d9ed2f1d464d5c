"""Run every probe, merge what they say about each physical GPU, and never raise.

Three views of one NVIDIA GPU exist: NVML (the driver's management library: identity,
sensors, processes), the CUDA runtime through torch, and through numba (limits). They number
GPUs differently: NVML in PCI bus order over *all* GPUs, CUDA "fastest first" over only the
GPUs ``CUDA_VISIBLE_DEVICES`` lets through. So views are joined on UUID, then PCI bus id,
never on list position.

Order of ``Discovery.devices``: the CPU, present GPUs by CUDA index, then catalog GPUs.
"""

from __future__ import annotations

import threading
from dataclasses import fields
from typing import Any

from explorer.devices.arch import fill_from_compute_capability
from explorer.devices.model import CudaGpu, Device, Discovery, ProbeReport
from explorer.errors import UserError

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


def merge_gpu_views(
    runtime: list[CudaGpu], nvml: list[CudaGpu], numba: list[CudaGpu] | None = None
) -> list[CudaGpu]:
    """One ``CudaGpu`` per GPU, ordered by CUDA index; GPUs hidden from CUDA come last.

    ``runtime`` is torch's view (CUDA ordinals); ``numba`` fills limits torch lacks (same
    ordinals: both ask the same CUDA driver under the same environment); ``nvml`` devices are
    matched by UUID or PCI bus id. When no runtime view exists (torch without CUDA, numba
    without a driver), the NVML devices stand alone, numbered by ``CUDA_VISIBLE_DEVICES``.
    GPUs NVML lists but ``CUDA_VISIBLE_DEVICES`` hides are kept (``hidden`` says why): they
    are in the machine, and their live readings are real.
    """
    numba = numba or []
    merged: list[CudaGpu] = []
    if not runtime and numba:
        runtime, numba = numba, []
    for dev in runtime:
        partner = next((n for n in numba if n.index == dev.index), None)
        if partner is not None:
            if partner.pci_bus_id and dev.pci_bus_id and not _same_gpu(dev, partner):
                dev.notes.append(
                    "numba and torch disagree on which GPU has this index; numba's view was not merged."
                )
            else:
                _fill_missing(dev, partner)
                if dev.limits is not None and partner.limits is not None:
                    for f in fields(type(dev.limits)):
                        if getattr(dev.limits, f.name) is None:
                            setattr(dev.limits, f.name, getattr(partner.limits, f.name))
        match = next((n for n in nvml if _same_gpu(dev, n)), None)
        if match is not None:
            _fill_missing(dev, match)
            dev.nvml_index = match.nvml_index
            dev.live = match.live
        elif not nvml:
            dev.mark_unavailable(
                "live", "no live readings: NVML, the driver's monitoring library, is not available"
            )
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
    """Whether the CUDA driver library (libcuda / nvcuda.dll) can be loaded: a cheap hint that torch may see a GPU."""
    import ctypes
    import sys

    names = (
        ["nvcuda.dll"] if sys.platform.startswith("win") else ["libcuda.so.1", "libcuda.so", "libcuda.dylib"]
    )
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


#: Which probe reports each field of a present GPU: "nvml", "runtime" (torch or numba), "either".
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
    the same for torch and numba. A field both were asked for and neither reported says so.
    """
    neither = "neither NVML nor the CUDA runtime (torch, numba) reported it for this GPU"
    nvml_reason = nvml_reason or gpu.unavailable.get("live", "")
    for name, source in GPU_FIELD_SOURCES.items():
        if gpu.reason(name) is not None or gpu.value(name) not in (None, "", [], {}):
            continue
        if source == "nvml":
            gpu.mark_unavailable(name, nvml_reason or "NVML did not report it for this GPU")
        elif source == "runtime":
            gpu.mark_unavailable(name, runtime_reason or "the CUDA runtime (torch, numba) did not report it")
        else:
            gpu.mark_unavailable(name, " ".join(r for r in (nvml_reason, runtime_reason) if r) or neither)
    if gpu.limits is not None:
        for f in fields(gpu.limits):
            if getattr(gpu.limits, f.name) is None:
                gpu.mark_unavailable(f"limits.{f.name}", "neither torch nor numba reported this limit")


def _probe_gpus(
    nvml: Any, torch: Any, numba: Any, quick: bool = False
) -> tuple[list[CudaGpu], list[ProbeReport]]:
    reports: list[ProbeReport] = []
    nvml_devices: list[CudaGpu] = []
    torch_devices: list[CudaGpu] = []
    numba_devices: list[CudaGpu] = []
    mapping_note: str | None = None
    try:
        from explorer.devices.nvml import probe_nvml

        nvml_result = probe_nvml(nvml)
        nvml_devices = nvml_result.devices
        mapping_note = nvml_result.mapping.note if nvml_result.mapping else None
        reports.append(nvml_result.report)
    except Exception as exc:
        reports.append(_failed("nvml", exc))
    if quick and not nvml_devices and torch is None and numba is None and not cuda_driver_loadable():
        skipped = "Not asked: NVML sees no GPU and the CUDA driver library cannot be loaded."
        reports.append(ProbeReport("torch", False, skipped))
        reports.append(ProbeReport("numba", False, skipped))
        return [], reports
    try:
        from explorer.devices.cuda import probe_torch

        torch_devices, report = probe_torch(torch)
        reports.append(report)
    except Exception as exc:
        reports.append(_failed("torch", exc))
    try:
        from explorer.devices.cuda import probe_numba

        numba_devices, report = probe_numba(numba)
        reports.append(report)
    except Exception as exc:
        reports.append(_failed("numba", exc))
    try:
        gpus = merge_gpu_views(torch_devices, nvml_devices, numba_devices)
    except Exception as exc:
        reports.append(_failed("merge", exc))
        gpus = []
    for gpu in gpus:
        try:
            fill_from_compute_capability(gpu)
        except Exception as exc:
            gpu.notes.append(f"Could not derive facts from the compute capability: {exc}")
    if gpus and not (torch_devices or numba_devices):
        for gpu in gpus:
            gpu.notes.append(
                "No CUDA runtime (torch or numba) sees this GPU, so only NVML's view is shown: no CUDA limits, "
                "and it cannot run the app's GPU benchmarks."
            )
            if mapping_note:
                gpu.notes.append(mapping_note)
    by_probe = {r.probe: r for r in reports}
    nvml_report = by_probe.get("nvml")
    nvml_reason = "" if nvml_devices or nvml_report is None else f"NVML: {nvml_report.message}"
    runtime_reason = ""
    if not (torch_devices or numba_devices):
        said = [by_probe[p].message for p in ("torch", "numba") if p in by_probe]
        runtime_reason = "No CUDA runtime (torch or numba) sees this GPU: " + " ".join(said)
    for gpu in gpus:
        gpu_runtime_reason = runtime_reason
        if gpu.hidden:
            gpu_runtime_reason = f"CUDA cannot see this GPU here: it is {gpu.hidden}"
        explain_missing(gpu, nvml_reason, gpu_runtime_reason)
    return gpus, reports


def discover(
    *,
    include_catalog: bool = True,
    nvml: Any = None,
    torch: Any = None,
    numba: Any = None,
    probe_cpu: bool = True,
    probe_gpus: bool = True,
    quick: bool = False,
) -> Discovery:
    """Everything the app can know about this machine's compute devices. Never raises.

    ``nvml``, ``torch`` and ``numba`` are the modules to ask (tests pass stand-ins); ``None``
    imports the real one lazily. ``probe_gpus=False`` skips them all (fast, CPU + catalog only).
    ``quick=True`` skips importing torch and numba (seconds) when neither NVML nor the CUDA
    driver library is there, so they could not find a GPU anyway; the reports then say so.
    """
    devices: list[Device] = []
    reports: list[ProbeReport] = []
    if probe_cpu:
        try:
            from explorer.devices.cpu import probe_cpu as _probe_cpu

            cpu = _probe_cpu()
            devices.append(cpu)
            cores = f"{cpu.physical_cores or '?'} cores, {cpu.logical_cores or '?'} threads"
            reports.append(ProbeReport("cpu", True, f"{cpu.name}: {cores}", 1))
        except Exception as exc:
            reports.append(_failed("cpu", exc))
    if probe_gpus:
        try:
            gpus, gpu_reports = _probe_gpus(nvml, torch, numba, quick)
        except Exception as exc:  # belt and braces: _probe_gpus already catches per probe
            gpus, gpu_reports = [], [_failed("gpu", exc)]
        devices.extend(gpus)
        reports.extend(gpu_reports)
    if include_catalog:
        try:
            from explorer.devices.catalog import load_catalog

            catalog = load_catalog()
            devices.extend(catalog)
            reports.append(
                ProbeReport("catalog", True, f"{len(catalog)} spec sheets (not present)", len(catalog))
            )
        except Exception as exc:
            reports.append(_failed("catalog", exc))
    return Discovery(devices=devices, reports=reports)


def _default_discovery() -> Discovery:
    """The discovery ``find_device`` uses when given none: computed once per process."""
    global _cached
    with _cache_lock:
        if _cached is None:
            _cached = discover(quick=True)
        return _cached


def find_device(query: str, discovery: Discovery | None = None) -> Device:
    """The one device a user means by ``query`` ("1650", "h100", "cuda:0", "cpu", "catalog:t4").

    Rules, in order: an exact key, slug or name (case-insensitive) wins; otherwise the devices
    whose name or key contain the query; if some of those are present they win over catalog
    sheets (so "h100" on an H100 machine means the real GPU); if exactly one is left it is the
    answer, else a ``UserError`` lists the candidates. The catalog keeps one sheet per common
    short name (one H100, one A100) so such names stay unambiguous.
    """
    q = (query or "").strip().lower()
    if not q:
        raise UserError("no device named; give a name or part of one, e.g. 'cpu', 'cuda:0', '1650', 'h100'")
    disc = discovery if discovery is not None else _default_discovery()
    exact = [
        d
        for d in disc.devices
        if q in (d.key.lower(), d.name.lower(), d.key.lower().removeprefix("catalog:"))
    ]
    candidates = exact or [d for d in disc.devices if q in d.name.lower() or q in d.key.lower()]
    present = [d for d in candidates if d.present]
    if present and len(present) < len(candidates):
        candidates = present
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        known = ", ".join(d.key for d in disc.devices)
        raise UserError(f"no device matches {query!r}; known devices: {known}")
    listed = ", ".join(f"{d.key} ({d.name})" for d in candidates)
    raise UserError(f"{query!r} matches {len(candidates)} devices: {listed}; give more of the name or a key")
