"""``device-explorer launch --compare``: two launches side by side, as the window's A/B compare.

Apart from ``launch`` so that a single launch never loads the comparison; any bad input ends
as one UserError line (exit status 2), never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.launch import B_OPTIONS
from explorer.commands.shared import find_gpu
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.launch.compare import Comparison, compare
from explorer.launch.config import LaunchValidationError, parse_launch
from explorer.launch.schedule import SCHEDULER_NOTE
from explorer.launch.texts import launch_summary, plain, problem_text


@dataclass(frozen=True)
class CompareRequest:
    """A checked ``launch --compare`` request: both sides planned (either may be unable to run)."""

    devices: tuple[Device, Device]
    comparison: Comparison
    as_json: bool


def parse_compare_request(args: Any) -> CompareRequest:
    """Side A from the plain options, side B from A's with each --b-* option put in its place.

    Text that does not parse, or a device not found, is bad input (one line, exit 2); a launch
    a device refuses is an answer (that side's column says why), as in the window."""
    if args.thread is not None:
        raise UserError("--thread describes one thread of one launch; leave out --compare to use it")
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


def run_compare(args: Any) -> int:
    req = parse_compare_request(args)
    if req.as_json:
        print(json.dumps(req.comparison.to_dict(), indent=2))
    else:
        print(format_comparison(req.comparison, req.devices))
    return 0


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
            f"{c.regs_per_thread} registers per thread" + problem_text(c)
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
