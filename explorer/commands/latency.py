"""``device-explorer latency``: one SM's warp schedulers hiding a load's latency, simulated cycle by
cycle (``explorer.launch.latency``), or with ``--measure`` this machine's GPU measured. Bad input is
one UserError line (exit status 2)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.shared import print_measured
from explorer.inputs import parse_whole
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
        from explorer.launch_runs.measured import measure_bandwidth_here

        return print_measured(measure_bandwidth_here(req.config.warps), req.as_json)
    run = simulate_latency(req.config)
    if req.as_json:
        print(json.dumps(run.to_dict(), indent=2))
        return 0
    print("\n".join(run.summary_lines()))
    return 0
