"""``device-explorer launch``: how a whole launch is dispatched, from a terminal.

Prints what the launch core computed, as text for people or JSON for scripts; any bad input
ends as one UserError line (exit status 2), never a traceback. ``--compare`` is
``explorer.commands.launch_compare``'s, and ``occupancy`` has a module of its own: a plain
launch loads neither (it should answer at once).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.commands.shared import find_gpu
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.launch.config import parse_launch, parse_thread_ref
from explorer.launch.schedule import SCHEDULER_NOTE, LaunchPlan, plan_launch
from explorer.launch.texts import (
    launch_summary,
    occupancy_headline,
    plain,
    problem_text,
    readings,
    thread_lines,
)

if TYPE_CHECKING:  # one thread's record is built only for --thread
    from explorer.launch.plan_records import ThreadInfo


@dataclass(frozen=True)
class LaunchRequest:
    """A checked ``launch`` request: the device, and the dispatch its limits allow."""

    device: Device
    plan: LaunchPlan
    thread: ThreadInfo | None  # --thread: one thread to describe instead of the whole launch
    as_json: bool


#: what a ``--b-*`` option of ``--compare`` may set of launch B (A's value where it is not given)
B_OPTIONS = ("device", "grid", "block", "smem", "regs", "n")


def parse_launch_request(args: Any) -> LaunchRequest:
    """Parse and validate ``launch``'s arguments and plan the dispatch (closed form, no output)."""
    named_b = [f"--b-{k}" for k in B_OPTIONS if getattr(args, f"b_{k}", None) is not None]
    if named_b:
        raise UserError(f"{named_b[0]} describes launch B; add --compare to set B beside A")
    device = find_gpu(args.device)
    config = parse_launch(args.grid, args.block, args.smem, args.regs, args.n)
    plan = plan_launch(config, device)
    thread = _thread(plan, args.thread) if args.thread is not None else None
    return LaunchRequest(device, plan, thread, bool(args.json))


def run_launch(args: Any) -> int:
    req = parse_launch_request(args)
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
        f"{c.regs_per_thread} registers per thread" + problem_text(c),
        plain(launch_summary(plan)),
        plain(occupancy_headline(plan.occupancy)),
    ]
    lines += [plain(line) for line in readings(plan)]
    for line in plan.notes:
        lines.append(f"note: {line}")
    lines.append(f"model: {SCHEDULER_NOTE}")
    return "\n".join(lines)
