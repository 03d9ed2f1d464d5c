"""``device-explorer dispatch`` and ``device-explorer latency``: the execution model in time.

``dispatch`` simulates a launch whose blocks start as slots free (``explorer.launch.dispatch``);
``latency`` simulates one SM's warp schedulers hiding a load's latency (``explorer.launch.latency``).
With ``--measure`` each runs its measurement on this machine's GPU instead
(``explorer.launch.measured``), or says in one line why it cannot. Bad input is one UserError
line (exit status 2), as for ``launch``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.launch import _find_device
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
from explorer.launch.latency import (
    MAX_ALU,
    MAX_LATENCY,
    MAX_SCHEDULERS,
    MAX_WARPS,
    MIN_CYCLES,
    MOST_CYCLES,
    LatencyConfig,
    simulate_latency,
    steady_window,
)
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
    device = _find_device(args.device)
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
        from explorer.launch.measured import measure_dispatch_here

        return _print_measured(measure_dispatch_here(req.plan, req.device), req.as_json)
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


def _print_measured(measured: Any, as_json: bool) -> int:
    if as_json:
        print(json.dumps(measured.to_dict(), indent=2))
    else:
        print("\n".join(measured.summary_lines()))
    return 0


@dataclass(frozen=True)
class LatencyRequest:
    config: LatencyConfig
    as_json: bool
    measure: bool = False


def parse_latency(args: Any) -> LatencyRequest:
    """Parse and validate ``latency``'s arguments (no simulation yet)."""
    warps = parse_whole(args.warps, "--warps", minimum=1, maximum=MAX_WARPS)
    latency = parse_whole(args.mem_latency, "--mem-latency", minimum=0, maximum=MAX_LATENCY, unit=" cycles")
    alu = parse_whole(args.alu, "--alu", minimum=0, maximum=MAX_ALU)
    schedulers = parse_whole(args.schedulers, "--schedulers", minimum=1, maximum=MAX_SCHEDULERS)
    cycles = 0
    if args.cycles is not None:
        # the limit for these warps and this loop is the config's (``LatencyConfig.cycles_limit``)
        cycles = parse_whole(args.cycles, "--cycles", minimum=MIN_CYCLES, maximum=MOST_CYCLES)
    config = LatencyConfig(warps, latency, alu, schedulers, str(args.policy).strip().lower(), cycles)
    steady_window(config)  # too few cycles to measure a steady state is bad input, said before the run
    return LatencyRequest(config, bool(args.json), bool(getattr(args, "measure", False)))


def run_latency(args: Any) -> int:
    req = parse_latency(args)
    if req.measure:
        from explorer.launch.measured import measure_bandwidth_here

        return _print_measured(measure_bandwidth_here(req.config.warps), req.as_json)
    run = simulate_latency(req.config)
    if req.as_json:
        print(json.dumps(run.to_dict(), indent=2))
        return 0
    print("\n".join(run.summary_lines()))
    return 0
