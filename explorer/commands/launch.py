"""``device-explorer occupancy`` and ``device-explorer launch``: the execution model from a terminal.

Both print what the launch core computed, as text for people or JSON for scripts; any bad
input ends as one UserError line (exit status 2), never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.commands.shared import find_gpu, launch_target
from explorer.devices.limits import ArchLimits
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
    parse_thread_ref,
)
from explorer.launch.occupancy import UNLIMITED, Occupancy, occupancy
from explorer.launch.schedule import SCHEDULER_NOTE, LaunchPlan, ThreadInfo, plan_launch
from explorer.launch.texts import launch_summary, occupancy_headline, plain, readings, shape, thread_lines

if TYPE_CHECKING:  # A/B compare is imported only when asked for (--compare): launch stays instant
    from explorer.launch.compare import Comparison


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


@dataclass(frozen=True)
class LaunchRequest:
    """A checked ``launch`` request: the device, and the dispatch its limits allow."""

    device: Device
    plan: LaunchPlan
    thread: ThreadInfo | None  # --thread: one thread to describe instead of the whole launch
    as_json: bool


@dataclass(frozen=True)
class CompareRequest:
    """A checked ``launch --compare`` request: both sides planned (either may be unable to run)."""

    devices: tuple[Device, Device]
    comparison: Comparison
    as_json: bool


B_OPTIONS = ("device", "grid", "block", "smem", "regs", "n")


def parse_launch_request(args: Any) -> LaunchRequest | CompareRequest:
    """Parse and validate ``launch``'s arguments and plan the dispatch (closed form, no output)."""
    named_b = [f"--b-{k}" for k in B_OPTIONS if getattr(args, f"b_{k}", None) is not None]
    if getattr(args, "compare", False):
        return _parse_compare(args)
    if named_b:
        raise UserError(f"{named_b[0]} describes launch B; add --compare to set B beside A")
    device = find_gpu(args.device)
    config = parse_launch(args.grid, args.block, args.smem, args.regs, args.n)
    plan = plan_launch(config, device)
    thread = _thread(plan, args.thread) if args.thread is not None else None
    return LaunchRequest(device, plan, thread, bool(args.json))


def _parse_compare(args: Any) -> CompareRequest:
    """Side A from the plain options, side B from A's with each --b-* option put in its place.

    Text that does not parse, or a device not found, is bad input (one line, exit 2); a launch
    a device refuses is an answer (that side's column says why), as in the window."""
    if args.thread is not None:
        raise UserError("--thread describes one thread of one launch; leave out --compare to use it")
    from explorer.launch.compare import compare

    b_args = {k: getattr(args, f"b_{k}") for k in B_OPTIONS}
    b = {k: (v if v is not None else getattr(args, k)) for k, v in b_args.items()}
    device_a = find_gpu(args.device)
    device_b = device_a if b_args["device"] is None else find_gpu(b["device"])
    config_a = parse_launch(args.grid, args.block, args.smem, args.regs, args.n)
    try:
        config_b = parse_launch(b["grid"], b["block"], b["smem"], b["regs"], b["n"])
    except LaunchValidationError as exc:
        raise LaunchValidationError([f"launch B: {p}" for p in exc.problems]) from None
    comparison = compare(device_a, config_a, device_b, config_b)
    return CompareRequest((device_a, device_b), comparison, bool(args.json))


def run_launch(args: Any) -> int:
    req = parse_launch_request(args)
    if isinstance(req, CompareRequest):
        if req.as_json:
            print(json.dumps(req.comparison.to_dict(), indent=2))
        else:
            print(format_comparison(req.comparison, req.devices))
        return 0
    plan, thread = req.plan, req.thread
    if req.as_json:
        data = plan.to_dict()
        if thread is not None:
            data["thread"] = thread.to_dict()
        print(json.dumps(data, indent=2))
        return 0
    if thread is not None:
        print("\n".join(thread_lines(thread)))
        return 0
    print(format_plan(req.plan, req.device))
    return 0


def _thread(plan: LaunchPlan, text: str) -> ThreadInfo:
    """``BX,BY,BZ:TX,TY,TZ`` -> the core's account of that thread; a bad one is one line."""
    block_idx, thread_idx = parse_thread_ref(text)
    return plan.thread(plan.block_linear(block_idx), plan.thread_linear(thread_idx))


def format_plan(plan: LaunchPlan, device: Device | None = None) -> str:
    """The launch as the window describes it (the same summary and readings), then the details."""
    c = plan.config
    name = device.display_name if device is not None else plan.device_name
    lines = [
        f"{name}: {plan.sm_count} SMs",
        f"launch: grid {c.grid} x block {c.block}, {c.shared_mem_bytes:,} bytes shared memory, "
        f"{c.regs_per_thread} registers per thread" + _problem_text(c),
        plain(launch_summary(plan)),
        plain(occupancy_headline(plan.occupancy)),
    ]
    lines += [plain(line) for line in readings(plan)]
    for line in plan.notes:
        lines.append(f"note: {line}")
    lines.append(f"model: {SCHEDULER_NOTE}")
    return "\n".join(lines)


def format_comparison(comparison: Comparison, devices: tuple[Device, Device] | None = None) -> str:
    """Each side's launch in a line, the table, the verdict, and each side's notes."""
    lines = []
    for i, s in enumerate(comparison.sides):
        name = devices[i].display_name if devices is not None else s.device_name
        c = s.config
        if c is None:  # the CLI parses both sides before comparing; the window's typed text may not
            lines.append(f"{s.label}: {name}: the launch typed for this side does not parse")
            continue
        lines.append(
            f"{s.label}: {name}: grid {c.grid} x block {c.block}, {c.shared_mem_bytes:,} bytes shared memory, "
            f"{c.regs_per_thread} registers per thread" + _problem_text(c)
        )
    lines.append("")
    lines += comparison.table_lines()
    lines.append("")
    lines.append(comparison.verdict())
    for s in comparison.sides:
        if s.plan is not None:
            lines += [f"{s.label}: {plain(launch_summary(s.plan))}"]
            lines += [f"note ({s.label}): {line}" for line in s.plan.notes]
    lines.append(f"model: {SCHEDULER_NOTE}")
    return "\n".join(lines)


def _problem_text(c: LaunchConfig) -> str:
    if c.extent is not None:
        return f", problem {shape(c.extent)} = {c.extent.count:,} elements"
    return f", n = {c.n:,}" if c.n is not None else ""
