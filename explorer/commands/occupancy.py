"""``device-explorer occupancy``: one block configuration's occupancy and what limits it.

Prints what the launch core computed, as text for people or JSON for scripts; any bad input
ends as one UserError line (exit status 2), never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.shared import launch_target
from explorer.devices.limits import ArchLimits
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, check, notes, parse_int
from explorer.launch.occupancy import UNLIMITED, Occupancy, occupancy
from explorer.launch.texts import occupancy_headline, plain


@dataclass(frozen=True)
class OccupancyRequest:
    """A checked ``occupancy`` request: the block fits the target's limits."""

    limits: ArchLimits
    name: str
    device: Device | None
    config: LaunchConfig
    as_json: bool


def parse_occupancy(args: Any) -> OccupancyRequest:
    """Parse and validate ``occupancy``'s arguments (no output); one-line UserError when bad."""
    limits, name, device = launch_target(args)
    problems: list[str] = []
    values: dict[str, int] = {}
    for key, text, what in (
        ("threads", args.threads, "threads per block"),
        ("regs", args.regs, "registers per thread"),
        ("smem", args.smem, "shared memory per block"),
    ):
        try:
            values[key] = parse_int(text, what)
        except LaunchValidationError as exc:
            problems.extend(exc.problems)
    if problems:
        raise LaunchValidationError(problems)
    if values["threads"] < 1:  # (the block's x, but this command has no block x to name)
        raise UserError(f"--threads {values['threads']}: a block needs at least 1 thread")
    config = LaunchConfig(Dim3(1), Dim3(values["threads"]), values["smem"], values["regs"])
    check(config, limits, name)
    return OccupancyRequest(limits, name, device, config, bool(args.json))


def run_occupancy(args: Any) -> int:
    req = parse_occupancy(args)
    limits, name, device, config = req.limits, req.name, req.device, req.config
    occ = occupancy(limits, config.block.x, config.regs_per_thread, config.shared_mem_bytes)
    advisories = notes(config, limits)
    if req.as_json:
        data: dict[str, Any] = {
            "device": name,
            "compute_capability": limits.cc_string,
            "arch_name": limits.arch_name,
        }
        if device is not None:
            data["device_kind"] = device.kind
        data.update(occ.to_dict())
        data["explanation"] = occ.explain()
        data["notes"] = advisories
        print(json.dumps(data, indent=2))
        return 0
    print(format_occupancy(occ, limits, name, device))
    for line in advisories:
        print(f"note: {line}")
    return 0


def _limit_text(value: int) -> str:
    return "no limit" if value == UNLIMITED else str(value)


def format_occupancy(occ: Occupancy, limits: ArchLimits, name: str, device: Device | None = None) -> str:
    where = name if device is None else device.display_name
    head = where if device is None else f"{where}, compute capability {limits.cc_string} ({limits.arch_name})"
    smem_note = (
        f" + {occ.reserved_smem_per_block_bytes} reserved" if occ.reserved_smem_per_block_bytes else ""
    )
    rows = [
        (
            "warps",
            occ.blocks_limit_warps,
            f"{occ.max_warps_per_sm} warp slots per SM / {occ.warps_per_block} per block",
        ),
        ("blocks", occ.blocks_limit_blocks, "the SM's limit on resident blocks"),
        (
            "registers",
            occ.blocks_limit_regs,
            f"{occ.regs_per_sm} per SM; {occ.regs_per_block_allocated} allocated per block",
        ),
        (
            "shared memory",
            occ.blocks_limit_smem,
            f"{occ.smem_carveout_bytes} bytes on the SM; {occ.smem_per_block_allocated_bytes} allocated per block"
            f" ({occ.smem_per_block_bytes} asked{smem_note})",
        ),
    ]
    lines = [
        head,
        f"block: {occ.threads_per_block} threads = {occ.warps_per_block} warps, "
        f"{occ.regs_per_thread} registers per thread, {occ.smem_per_block_bytes} bytes of shared memory",
        "blocks per SM allowed by:",
    ]
    for label, value, why in rows:
        lines.append(f"  {label:<14}{_limit_text(value):>9}   ({why})")
    lines.append(plain(occupancy_headline(occ)))
    lines.append(f"limited by: {occ.limiter_text}")
    lines.append(occ.explain())
    return "\n".join(lines)
