"""``device-explorer devices [--json] [--catalog]``: what compute devices this machine has.

Text for people (a table, then why no GPU was found when none was), JSON for scripts
(``Discovery.to_dict()``: keys ``devices`` and ``probes``, stable and snake_case).
Catalog sheets appear only with ``--catalog``, and always marked as not present.
The GPUs' facts come from NVML and the CUDA driver (``explorer.devices.cuda_driver``): listing
never imports torch or numba; ``--measure`` imports them when it runs its benchmarks.
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from typing import Any

from explorer.commands.remote import RemoteUnreachable
from explorer.devices.discover import discover
from explorer.devices.discovery import Discovery
from explorer.devices.model import CudaGpu, Device
from explorer.devices.roofs import apply_measured, record_roof
from explorer.errors import UserError
from explorer.remote.target import Remote
from explorer.roofs import store
from explorer.roofs.model import Roof
from explorer.roofs.texts import roof_lines
from explorer.units import binary_bytes, byte_rate
from explorer.words import count, from_percent, on_host, percent


def _size(n: int | None) -> str:
    return binary_bytes(n, missing="?") if n else "?"


def _row(d: Device) -> list[str]:
    if d.kind == "cpu":
        cores = f"{d.physical_cores or '?'} cores / {d.logical_cores or '?'} threads"
        flags = ", ".join(d.isa_flags) if d.isa_flags else "-"
        clock = f"{d.frequency_max_mhz:.0f} MHz" if d.frequency_max_mhz else "?"
        return ["cpu", d.name, "-", cores, _size(d.memory_total_bytes), clock, flags]
    sms = f"{d.sm_count} SMs" if d.sm_count else "? SMs"
    clock = f"{d.clock_sm_max_mhz} MHz" if d.clock_sm_max_mhz else "?"
    if d.kind == "cuda":
        where = d.key if d.usable else f"{d.key} (hidden)"
        extra = d.hidden or (f"driver {d.driver_version}" if d.driver_version else "")
    else:
        where = "catalog (not present)"
        extra = d.form_factor or ""
    return [where, d.name, d.cc_string or "?", sms, _size(d.memory_total_bytes), clock, extra]


def format_live(d: CudaGpu) -> str:
    """One line of NVML readings, each missing one named with its reason."""
    live = d.live
    assert live is not None
    parts = []

    def value(name: str, text: str | None, label: str = "") -> None:
        if text is not None:
            parts.append(text)
        elif name in live.unavailable:
            what = label or name.rsplit("_", 1)[0].replace("_", " ")
            parts.append(f"{what} n/a ({live.unavailable[name]})")

    util = live.utilization_gpu_pct
    value(
        "utilization_gpu_pct",
        None
        if util is None
        else f"a kernel ran {percent(from_percent(util), decimals=0)} of the time (not SM load)",
    )
    activity, occupancy = live.sm_activity_pct, live.sm_occupancy_pct
    if activity is not None or occupancy is not None:
        gpm = [percent(from_percent(v), decimals=0, fine=True, spaced=True) for v in (activity, occupancy)]
        parts.append(f"SM activity {gpm[0]}, SM occupancy {gpm[1]} (NVML GPM)")
    elif "sm_activity_pct" in live.unavailable:
        value("sm_activity_pct", None, "SM activity")
    rx, tx = live.pcie_rx_bytes_per_s, live.pcie_tx_bytes_per_s
    if rx is not None or tx is not None:
        parts.append(f"PCIe in {byte_rate(rx)}, out {byte_rate(tx)}")
    else:
        value("pcie_rx_bytes_per_s", None, "PCIe traffic")
    used, total = live.memory_used_bytes, live.memory_total_bytes
    value("memory_used_bytes", None if used is None else f"{_size(used)} of {_size(total)} used")
    temp = live.temperature_c
    value("temperature_c", None if temp is None else f"{temp:.0f} C")
    power, limit = live.power_draw_w, live.power_limit_w
    value(
        "power_draw_w", None if power is None else f"{power:.0f} W" + (f" of {limit:.0f} W" if limit else "")
    )
    if d.processes:
        parts.append(f"{count(len(d.processes), 'process', 'processes')}")
    return ", ".join(parts)


def format_table(discovery: Discovery) -> str:
    header = ["device", "name", "CC", "compute units", "memory", "max clock", "notes"]
    rows = [header] + [_row(d) for d in discovery.devices]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def filtered(discovery: Discovery, include_catalog: bool) -> Discovery:
    if include_catalog:
        return discovery
    devices: list[Device] = [d for d in discovery.devices if d.kind != "catalog"]
    reports = [r for r in discovery.reports if r.probe != "catalog"]
    return Discovery(devices=devices, reports=reports)


def device_roofs(discovery: Discovery) -> list[Roof]:
    """Each device's roof, as the Devices page and the roofline show it: theoretical ceilings and
    this machine's stored measured ones (present devices), or the spec sheet's (catalog GPUs)."""
    return [record_roof(d) for d in discovery.devices]


def devices_json(discovery: Discovery) -> dict[str, Any]:
    data = discovery.to_dict()
    data["why_no_gpu"] = discovery.why_no_gpu()
    data["roofs"] = [r.to_dict() for r in device_roofs(discovery)]
    return data


def format_roofs(roofs: list[Roof]) -> str:
    """The ceilings of each device, one line each, with its kind, its working sets and its basis."""
    lines = ["Roofline ceilings:"]
    for roof in roofs:
        head, *rest = roof_lines(roof) or [""]
        lines.append(f"  {roof.device}: {head}" if head else f"  {roof.device}:")
        lines += [f"    {line}" for line in rest]
    return "\n".join(lines)


class _ProgressLines:
    """A measurement's progress on stderr: a line when its stage changes or each quarter passes."""

    def __init__(self, device: str) -> None:
        self.device, self.stage, self.quarter = device, "", -1

    def __call__(self, fraction: float, text: str) -> None:
        stage = text.split(":", 1)[0]
        quarter = int(fraction * 4)
        if stage != self.stage or quarter != self.quarter:
            self.stage, self.quarter = stage, quarter
            print(f"  {self.device}: {100 * fraction:3.0f}% {text}", file=sys.stderr, flush=True)


def measure_roofs(discovery: Discovery) -> None:
    """Measure again the clock and ceilings of the CPU and every present GPU, and store them: a
    measurement disturbed by other programs does not replace a quiet one (it says so)."""
    from explorer.bench import peaks

    for d in discovery.devices:
        if d.kind == "catalog" or (d.kind == "cuda" and d.index is None):
            continue
        print(
            f"measuring the ceilings of {d.key} (seconds; every core is kept busy)...",
            file=sys.stderr,
            flush=True,
        )
        try:
            saved = peaks.ensure_measured(d.key, force=True, record=d, progress=_ProgressLines(d.key))
        except OSError as exc:  # measured, but a full or read-only disk kept it from being stored
            raise UserError(
                f"the ceilings of {d.key} were measured but could not be kept in {store.store_path()}: "
                f"{exc.strerror or exc}; free some space and measure again"
            ) from None
        if saved is not None:
            print(saved.message, file=sys.stderr, flush=True)
        if d.kind == "cpu":
            apply_measured(d, record_roof(d))  # the record shows what is stored now


def run_devices(args: Namespace) -> int:
    from explorer.commands.remote import parse_host

    remote = parse_host(args)
    if remote is not None:
        return run_remote_devices(args, remote)
    include_catalog = bool(getattr(args, "catalog", False))
    discovery = filtered(discover(include_catalog=include_catalog, runtimes=False), include_catalog)
    if getattr(args, "measure", False):
        measure_roofs(discovery)
    if getattr(args, "json", False):
        print(json.dumps(devices_json(discovery), indent=2))
        _say_notice()
        return 0
    print(format_table(discovery))
    print()
    print(format_roofs(device_roofs(discovery)))
    why = discovery.why_no_gpu()
    if why:
        print()
        print(why)
    for d in discovery.installed_gpus:
        if d.live is not None:
            print(f"  {d.key} now: {format_live(d)}")
        for field_name, reason in sorted(d.unavailable.items()):
            print(f"  {d.key}: {field_name} unavailable: {reason}")
    if not include_catalog:
        print()
        print("Add --catalog to list spec sheets of well-known GPUs (not present here) for the lessons.")
    _say_notice()
    return 0


def _say_notice() -> None:
    """A damaged ceilings file was moved aside while reading: said once, on stderr."""
    notice = store.take_notice()
    if notice:
        print(notice, file=sys.stderr)


def run_remote_devices(args: Namespace, remote: Remote) -> int:
    """``devices --host``: the remote's devices, each marked with the machine it is on."""
    from explorer.agent.protocol import AgentError
    from explorer.remote.session import list_devices

    include_catalog = bool(getattr(args, "catalog", False))
    if getattr(args, "measure", False):
        raise UserError(
            "--measure runs on this machine only; measure on the remote with its own devices --measure"
        )
    try:
        found = list_devices(remote, catalog=include_catalog)
    except AgentError as exc:
        raise RemoteUnreachable(str(exc)) from None
    discovery = filtered(found.discovery, include_catalog)
    if getattr(args, "json", False):
        print(json.dumps(found.to_dict(discovery), indent=2))
        return 0
    print(f"{on_host('Devices', remote.host)} ({found.hostname}; listed in {found.seconds:.1f} s):")
    print(format_table(discovery))
    if found.why_no_gpu:
        print()
        print(found.why_no_gpu)
    for d in discovery.installed_gpus:
        if d.live is not None:
            print(f"  {d.key} now: {format_live(d)}")
    return 0
