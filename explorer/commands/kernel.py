"""``device-explorer kernel FILE.py``: a student's own numba kernel, line by line, on the simulator.

The script runs as ``python FILE.py`` would, in a child with numba's CUDA simulator on; for each
launch each source line of the kernel gets Nsight Compute's figures: global sectors per request
against the ideal, shared-memory wavefronts against the ideal, warp executions, active lanes and
divergent warps. The script's own output comes first, as it printed it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from explorer.errors import UserError
from explorer.inputs import parse_decimal, parse_whole
from explorer.kernels.run import (
    DEFAULT_MAX_THREADS,
    DEFAULT_TIMEOUT_S,
    MAX_MAX_THREADS,
    KernelLaunch,
    KernelReport,
    LineFigures,
    check_script,
    trace_script,
)

MAX_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class KernelRequest:
    path: str
    max_threads: int
    timeout_s: float
    as_json: bool


def parse_kernel(args: Any) -> KernelRequest:
    """Check ``kernel``'s arguments and the script's file (nothing runs yet)."""
    check_script(str(args.file))
    max_threads = (
        DEFAULT_MAX_THREADS
        if args.max_threads is None
        else parse_whole(args.max_threads, "--max-threads", minimum=1, maximum=MAX_MAX_THREADS)
    )
    timeout_s = (
        DEFAULT_TIMEOUT_S
        if args.timeout is None
        else parse_decimal(args.timeout, "--timeout", minimum=1.0, maximum=MAX_TIMEOUT_S)
    )
    return KernelRequest(str(args.file), max_threads, float(timeout_s), bool(args.json))


def run_kernel(args: Any) -> int:
    req = parse_kernel(args)
    report = trace_script(req.path, max_threads=req.max_threads, timeout_s=req.timeout_s)
    if req.as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(report_lines(report)))
    if report.error is not None:
        print(f"device-explorer: {report.error}", file=sys.stderr)
        return 1
    if not report.launches:
        raise UserError(
            f"{report.script} launched no kernel under the simulator (is its launch under __main__?)"
        )
    return 0


COLUMNS = (
    "line",
    "ld req",
    "ld sect",
    "ideal",
    "st req",
    "st sect",
    "ideal",
    "sh wf",
    "ideal",
    "warps",
    "lanes",
    "div",
)


def _row(ln: LineFigures) -> list[str]:
    shared = ln.shared_load_wavefronts + ln.shared_store_wavefronts
    shared_ideal = ln.shared_load_wavefronts_ideal + ln.shared_store_wavefronts_ideal
    return [
        str(ln.line),
        str(ln.global_load_requests or ""),
        str(ln.global_load_sectors or ""),
        str(ln.global_load_sectors_ideal or ""),
        str(ln.global_store_requests or ""),
        str(ln.global_store_sectors or ""),
        str(ln.global_store_sectors_ideal or ""),
        str(shared or ""),
        str(shared_ideal or ""),
        str(ln.warp_executions or ""),
        "" if ln.active_lanes_mean is None else f"{ln.active_lanes_mean:.1f}",
        "" if ln.divergent_warps is None else str(ln.divergent_warps),
    ]


def launch_lines(launch: KernelLaunch) -> list[str]:
    rows = [list(COLUMNS)] + [_row(ln) for ln in launch.lines]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    out = [
        f"kernel {launch.kernel}: grid {launch.grid}, block {launch.block}, "
        f"{launch.shared_bytes:,} B of shared memory per block"
    ]
    for r, ln in zip(rows, [None, *launch.lines], strict=True):
        cells = "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True))
        out.append(f"  {cells}  {ln.source if ln is not None else 'source'}")
    worst = [ln for ln in launch.lines if ln.excess_sectors > 0 or ln.excess_wavefronts > 0]
    for ln in worst:
        if ln.excess_sectors > 0:
            out.append(
                f"  line {ln.line}: {ln.excess_sectors:,} sectors more than its bytes need (uncoalesced)"
            )
        if ln.excess_wavefronts > 0:
            out.append(
                f"  line {ln.line}: {ln.excess_wavefronts:,} extra shared-memory wavefronts (bank conflicts)"
            )
    for ln in launch.lines:
        if ln.divergent_warps:
            out.append(f"  line {ln.line}: {ln.divergent_warps:,} warp executions diverge here")
    return out


def report_lines(report: KernelReport) -> list[str]:
    lines: list[str] = []
    if report.output:
        lines.append(report.output.rstrip("\n"))
        lines.append("")
    for launch in report.launches:
        lines.extend(launch_lines(launch))
        lines.append("")
    lines.append(
        "ld/st: global load/store requests and 32-byte sectors (ideal: the fewest the bytes fit in); "
        "sh wf: shared-memory wavefronts (ideal: no bank conflict); warps: warp executions; lanes: mean "
        "active lanes; div: divergent warp executions on a line with a branch"
    )
    return lines
