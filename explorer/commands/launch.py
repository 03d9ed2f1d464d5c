"""``device-explorer occupancy`` and ``device-explorer launch``: the execution model from a terminal.

Both print what the launch core computed, as text for people or JSON for scripts; any bad
input ends as one UserError line (exit status 2), never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.launch.config import (
    Dim3,
    LaunchConfig,
    LaunchValidationError,
    check,
    notes,
    parse_int,
    parse_launch,
)
from explorer.launch.limits import ArchLimits, limits_for_cc, limits_for_device, parse_cc
from explorer.launch.occupancy import UNLIMITED, Occupancy, occupancy
from explorer.launch.schedule import SCHEDULER_NOTE, LaunchPlan, plan_launch


def _find_device(query: str) -> Device:
    from explorer.devices.discover import find_device

    device = find_device(query)
    if not device.is_gpu:
        raise UserError(
            f"{device.name} is not an NVIDIA GPU; CUDA launches need a GPU or a catalog GPU (try --cc X.Y)"
        )
    return device


def _target(args: Any) -> tuple[ArchLimits, str, Device | None]:
    if getattr(args, "cc", None):
        limits = limits_for_cc(parse_cc(args.cc))
        return limits, limits.label, None
    device = _find_device(args.device)
    return limits_for_device(device), device.name, device


def run_occupancy(args: Any) -> int:
    limits, name, device = _target(args)
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
    config = LaunchConfig(Dim3(1), Dim3(values["threads"]), values["smem"], values["regs"])
    check(config, limits, name)
    occ = occupancy(limits, values["threads"], values["regs"], values["smem"])
    advisories = notes(config, limits)
    if args.json:
        data = {"device": name, "compute_capability": limits.cc_string, "arch_name": limits.arch_name}
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
    lines.append(
        f"active per SM: {occ.active_blocks_per_sm} block{'' if occ.active_blocks_per_sm == 1 else 's'} = "
        f"{occ.active_warps_per_sm} of {occ.max_warps_per_sm} "
        f"warps -> occupancy {occ.occupancy_pct:.1f}%"
    )
    lines.append(f"limited by: {occ.limiter}")
    lines.append(occ.explain())
    return "\n".join(lines)


def run_launch(args: Any) -> int:
    device = _find_device(args.device)
    config = parse_launch(args.grid, args.block, args.smem, args.regs, args.n)
    plan = plan_launch(config, device)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
        return 0
    print(format_plan(plan, device))
    return 0


def format_plan(plan: LaunchPlan, device: Device | None = None) -> str:
    c = plan.config
    occ = plan.occupancy
    name = device.display_name if device is not None else plan.device_name
    lines = [
        f"{name}: {plan.sm_count} SMs",
        f"launch: grid {c.grid} x block {c.block}, {c.shared_mem_bytes} bytes shared memory, "
        f"{c.regs_per_thread} registers per thread" + _problem_text(c),
        f"blocks: {plan.total_blocks}   threads: {plan.total_threads}   warps: {plan.total_warps} "
        f"({plan.warps_per_block} per block)",
    ]
    if plan.last_warp_active_lanes < plan.warp_size:
        idle_lanes = plan.warp_size - plan.last_warp_active_lanes
        lines.append(
            f"last warp of each block: {plan.last_warp_active_lanes} of {plan.warp_size} lanes hold a thread "
            f"({idle_lanes} lanes idle in every block: make the block a multiple of {plan.warp_size})"
        )
    else:
        lines.append(f"every warp is full ({plan.warp_size} lanes)")
    if c.n is not None:
        lines.append(f"idle threads (global index >= n): {plan.idle_threads}")
    elif c.extent is not None:
        lines.append(f"idle threads (outside the problem on some axis): {plan.idle_threads}")
    lines += [
        f"resident blocks per SM: {plan.resident_blocks_per_sm} (limited by {occ.limiter}; "
        f"occupancy {occ.occupancy_pct:.1f}%)",
        f"concurrent blocks: {plan.concurrent_blocks} = {plan.sm_count} SMs x {plan.resident_blocks_per_sm}",
        f"waves: {plan.waves}; the last runs {plan.last_wave_blocks} blocks "
        f"({100 * plan.last_wave_fill:.1f}% of the GPU)",
    ]
    for line in plan.notes:
        lines.append(f"note: {line}")
    lines.append(f"model: {SCHEDULER_NOTE}")
    return "\n".join(lines)


def _problem_text(c: LaunchConfig) -> str:
    if c.extent is not None:
        e = c.extent
        shape = f"{e.x} x {e.y}" if e.z == 1 else f"{e.x} x {e.y} x {e.z}"
        return f", problem {shape} = {e.count} elements"
    return f", n = {c.n}" if c.n is not None else ""
