"""What several commands share: which GPU a typed name means, the target a launch is checked
against, and a measurement's output. Kept here, public, so no command reaches into another's
private helpers."""

from __future__ import annotations

import json
from typing import Any

from explorer.devices.limits import ArchLimits, limits_for_cc, limits_for_device, parse_cc
from explorer.devices.model import CpuDevice, Device, Gpu
from explorer.errors import UserError


def find_gpu(query: str) -> Gpu:
    """The GPU (present or on a spec sheet) ``query`` names; a CPU is bad input, not a launch target."""
    from explorer.devices.find import find_device

    device = find_device(query)
    if isinstance(device, CpuDevice):
        raise UserError(
            f"{device.name} is not an NVIDIA GPU; CUDA launches need a GPU or a catalog GPU (try --cc X.Y)"
        )
    return device


def launch_target(args: Any) -> tuple[ArchLimits, str, Device | None]:
    """The limits a launch is checked against: ``--cc X.Y``'s, or the named device's."""
    if args.cc is not None:  # --cc '' is an empty capability, not "no device named"
        limits = limits_for_cc(parse_cc(args.cc))
        return limits, limits.label, None
    device = find_gpu(args.device)
    return limits_for_device(device), device.name, device


def print_measured(measured: Any, as_json: bool) -> int:
    """A measurement on this machine's GPU (``explorer.launch_runs.measured``), as JSON or its lines."""
    if as_json:
        print(json.dumps(measured.to_dict(), indent=2))
    else:
        print("\n".join(measured.summary_lines()))
    return 0
