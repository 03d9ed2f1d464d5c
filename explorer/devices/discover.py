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
from explorer.devices.model import Device, Discovery, ProbeReport
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


def _fill_missing(target: Device, other: Device) -> None:
    """Copy into ``target`` every field it lacks and ``other`` has; reasons follow the values."""
    for f in fields(Device):
        name = f.name
        if name in ("kind", "key", "index", "unavailable", "notes", "processes", "source"):
            continue
        mine, theirs = getattr(target, name), getattr(other, name)
        if mine in (None, "", [], {}) and theirs not in (None, "", [], {}):
            setattr(target, name, theirs)
    if not target.processes and other.processes:
        target.processes = list(other.processes)
    for k, v in other.unavailable.items():
        if getattr(target, k, None) in (None, "", [], {}):
            target.mark_unavailable(k, v)
    for k in list(target.unavailable):
        if getattr(target, k, None) not in (None, "", [], {}):
            del target.unavailable[k]
    target.notes.extend(n for n in other.notes if n not in target.notes)
    sources = [s for s in (target.source, other.source) if s]
    target.source = " + ".join(dict.fromkeys(" + ".join(sources).split(" + ")))


def _same_gpu(a: Device, b: Device) -> bool:
    """Same board: equal UUIDs, or else the same PCI slot (a MIG instance has its own UUID
    but sits in its parent's slot, and its sensors are the parent's)."""
    ua, ub = normalize_uuid(a.uuid), normalize_uuid(b.uuid)
    if ua and ub and ua == ub:
        return True
    pa, pb = normalize_bus_id(a.pci_bus_id), normalize_bus_id(b.pci_bus_id)
    return bool(pa and pb and pa == pb)


def merge_gpu_views(
    runtime: list[Device], nvml: list[Device], numba: list[Device] | None = None
) -> list[Device]:
    """One ``Device`` per CUDA-visible GPU, ordered by CUDA index.

    ``runtime`` is torch's view (CUDA ordinals); ``numba`` fills limits torch lacks (same
    ordinals: both ask the same CUDA driver under the same environment); ``nvml`` devices are
    matched by UUID or PCI bus id. When no runtime view exists (torch without CUDA, numba
    without a driver), the NVML devices stand alone, numbered by ``CUDA_VISIBLE_DEVICES``.
    """
    numba = numba or []
    merged: list[Device] = []
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
    if not runtime:
        for dev in nvml:
            if dev.index is None:
                continue  # hidden by CUDA_VISIBLE_DEVICES
            merged.append(dev)
    merged.sort(key=lambda d: (d.index is None, d.index if d.index is not None else 0))
    for dev in merged:
        dev.kind = "cuda"
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


def _probe_gpus(
    nvml: Any, torch: Any, numba: Any, quick: bool = False
) -> tuple[list[Device], list[ProbeReport]]:
    reports: list[ProbeReport] = []
    nvml_devices: list[Device] = []
    torch_devices: list[Device] = []
    numba_devices: list[Device] = []
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
            cores = (
                f"{cpu.cpu.physical_cores or '?'} cores, {cpu.cpu.logical_cores or '?'} threads"
                if cpu.cpu
                else ""
            )
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
