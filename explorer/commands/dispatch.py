"""``device-explorer dispatch``: a launch in time, its blocks starting as slots free
(``explorer.launch.dispatch``); with ``--measure`` this machine's GPU records each block's SM and
times instead (``explorer.launch_runs.measured``), or says in one line why it cannot. Bad input is one
UserError line (exit status 2), as for ``launch``; ``latency`` has its own module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.shared import find_gpu, print_measured
from explorer.devices.model import Device, Gpu
from explorer.inputs import MAX_WHOLE, parse_whole
from explorer.launch.config import parse_launch
from explorer.launch.dispatch import (
    MODEL_NOTE,
    DispatchResult,
    check_blocks,
    parse_policy,
    simulate_dispatch,
)
from explorer.launch.durations import DurationSpec, parse_durations, read_file_values
from explorer.launch.schedule import LaunchPlan, plan_launch


@dataclass(frozen=True)
class DispatchRequest:
    device: Gpu
    plan: LaunchPlan
    durations: DurationSpec
    policy: str
    seed: int
    as_json: bool
    measure: bool = False


def parse_dispatch(args: Any) -> DispatchRequest:
    """Parse and validate ``dispatch``'s arguments and plan the launch (no simulation yet)."""
    device = find_gpu(args.device)
    config = parse_launch(args.grid, args.block, args.smem, args.regs)
    plan = plan_launch(config, device)
    check_blocks(plan)
    # a file's numbers are read here, once, and no further than the grid's block count needs
    durations = read_file_values(parse_durations(args.durations), plan.total_blocks)
    policy = parse_policy(args.policy)
    seed = parse_whole(args.seed, "--seed", minimum=0, maximum=MAX_WHOLE)
    measure = bool(getattr(args, "measure", False))
    return DispatchRequest(device, plan, durations, policy, seed, bool(args.json), measure)


def run_dispatch(args: Any) -> int:
    req = parse_dispatch(args)
    if req.measure:
        from explorer.launch_runs.measured import measure_dispatch_here

        return print_measured(measure_dispatch_here(req.plan, req.device), req.as_json)
    result = simulate_dispatch(req.plan, req.durations, req.policy, req.seed)
    if req.as_json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    print(format_dispatch(result, req.device))
    return 0


def format_dispatch(result: DispatchResult, device: Device | None = None) -> str:
    p, f = result.plan, result.figures
    name = device.display_name if device is not None else p.device_name
    c = p.config
    lines = [
        f"{name}: {p.sm_count} SMs",
        f"launch: grid {c.grid} x block {c.block}, {c.shared_mem_bytes:,} bytes shared memory, "
        f"{c.regs_per_thread} registers per thread",
        *result.summary_lines(),
    ]
    busy = f.sm_busy
    if busy:
        lo, hi = min(busy), max(busy)
        lines.append(
            f"per-SM busy time: {lo:.3f} to {hi:.3f} mean blocks ({f.sms_used} of {p.sm_count} SMs got a block; "
            "--json lists each)"
        )
    lines.append(f"model: {MODEL_NOTE}")
    return "\n".join(lines)
