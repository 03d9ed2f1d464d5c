"""The launch visualizer's real run on the GPU (who wrote each element, and which SM ran each
block, from ``%smid``), and the remote paths over ssh: listing the GPU, a benchmark point, a real
run and a live reading on the same machine through a loopback sshd.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import asdict
from typing import Any

from explorer.acceptance.context import CannotRun, CheckContext
from explorer.acceptance.judge import REALRUN_KERNEL_LIMIT_MS, record_figure, status_of, under_figure
from explorer.acceptance.records import CheckResult, Figure
from explorer.words import count

REALRUN_TIMEOUT_S = 180.0


def sm_count(ctx: CheckContext) -> int | None:
    """The GPU's SMs as CUDA reports them (torch, else numba); None under the simulator."""
    try:
        import torch

        if torch.cuda.is_available():
            return int(torch.cuda.get_device_properties(ctx.index).multi_processor_count)
    except Exception:  # numba may still know
        pass
    try:
        from explorer.numbacuda import cuda

        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # the simulator's device has no attributes
        return None


def sm_map_figures(sm_of_block: Any, sms: int, model_sm_of_block: list[int]) -> list[Figure]:
    """The hardware's block -> SM map against the visualizer's model (blocks dealt round-robin):
    how many SMs got blocks (the model: min(blocks, SMs)), how evenly, and how many blocks landed
    where the model puts them (NVIDIA does not publish its scheduler: recorded, no target)."""
    placed = [int(s) for s in sm_of_block if int(s) >= 0]
    per_sm = Counter(placed)
    busy_model = min(len(model_sm_of_block), sms)
    agree = sum(1 for got, want in zip(sm_of_block, model_sm_of_block, strict=False) if int(got) == want)
    return [
        Figure(
            "SMs that ran blocks (%smid)",
            float(len(per_sm)),
            "SMs",
            "as many as the model's busy SMs",
            float(busy_model),
            "the model's busy SMs",
            len(per_sm) / busy_model if busy_model else None,
            len(per_sm) == busy_model,
        ),
        record_figure(
            "blocks per SM (fewest to most)",
            float(max(per_sm.values())) if per_sm else None,
            "blocks",
            f"{min(per_sm.values()) if per_sm else 0} to {max(per_sm.values()) if per_sm else 0}; the model deals "
            f"{len(model_sm_of_block) / busy_model if busy_model else 0:.2g} each",
        ),
        record_figure(
            "blocks on the SM the model names",
            float(agree),
            f"of {len(model_sm_of_block)}",
            "the model is round-robin in block order; the hardware's scheduler is not published",
        ),
        record_figure(
            "highest SM number seen", float(max(placed)) if placed else None, "", f"the GPU has {sms} SMs"
        ),
    ]


def check_real_run(ctx: CheckContext) -> CheckResult:
    """A 1-D launch of a few blocks per SM and a 2-D image launch, through the visualizer's own path
    (an agent child process), each element's writer against the model, and the SM map."""
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import TIMING_METHODS, run_real

    sms = sm_count(ctx)
    simulator = sms is None
    per_sm, threads = ctx.sizes.realrun_blocks_per_sm, ctx.sizes.realrun_threads
    blocks = per_sm * (sms or 2)
    n = blocks * threads - 7  # the last block has idle threads, as in the lessons
    one = run_real(
        LaunchConfig(Dim3(blocks), Dim3(threads), n=n),
        simulator=simulator,
        timeout_s=REALRUN_TIMEOUT_S,
        device_index=None if simulator else ctx.index,
    )
    width = (sms or 2) * 16 - 5
    two = run_real(
        LaunchConfig(Dim3(sms or 2, 2), Dim3(16, 16), extent=Dim3(width, 30)),
        simulator=simulator,
        timeout_s=REALRUN_TIMEOUT_S,
        device_index=None if simulator else ctx.index,
    )
    problems = []
    for name, result, tpb in (("1-D", one, threads), ("2-D", two, 256)):
        wrong = result.mismatches(tpb)
        if result.untouched or result.written_twice or not result.sum_correct or wrong:
            problems.append(
                f"{name}: {result.summary()} {count(wrong, 'element')} written by another thread than the model says"
            )
        if not simulator and result.backend != "gpu":
            problems.append(f"{name} ran {result.backend}, not on the GPU")
        if not simulator and not result.kernel_method.startswith(TIMING_METHODS["gpu"]):
            problems.append(f"{name}'s kernel time was not taken with CUDA events: {result.kernel_method!r}")
    figures: list[Figure] = [
        record_figure(
            "1-D launch", float(one.n), "elements", f"{blocks} blocks of {threads}: {one.summary()}"
        ),
        # on a GPU the kernel time has a target; under the simulator it is the host's, kept for the record
        record_figure("kernel time", one.kernel_s * 1e3, "ms", one.kernel_method or "launch + synchronize")
        if simulator
        else under_figure(
            "kernel time",
            one.kernel_s * 1e3,
            "ms",
            REALRUN_KERNEL_LIMIT_MS,
            f"{REALRUN_KERNEL_LIMIT_MS:g} ms",
            one.kernel_method or "launch + synchronize",
        ),
    ]
    if one.sm_of_block is not None and sms:
        model = [b % sms for b in range(blocks)]  # the visualizer's first wave deals blocks round-robin
        figures += sm_map_figures(one.sm_of_block, sms, model)
    elif not simulator:
        problems.append(f"no SM map on the GPU: {one.sm_note}")
    summary = one.summary() + (" " + "; ".join(problems) if problems else "")
    details: dict[str, Any] = {
        "one_d": {
            "grid": one.grid,
            "block": one.block,
            "n": one.n,
            "summary": one.summary(),
            "sm_note": one.sm_note,
            "blocks_per_sm": one.blocks_per_sm(),
        },
        "two_d": {"grid": two.grid, "block": two.block, "extent": two.extent, "summary": two.summary()},
    }
    correct = not problems
    return CheckResult("real_run", status_of(correct, figures), summary, figures, details)


def check_remote(ctx: CheckContext) -> CheckResult:
    """The same GPU reached over ssh (a loopback sshd the runner started): listed with the same
    UUID, a benchmark point on it, a real run with its SM map, a live reading with PCIe traffic."""
    from explorer.bench.runner import BenchPlan, BenchRun
    from explorer.devices.nvml import probe_nvml
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import run_real
    from explorer.remote import list_devices, open_agent, parse_remote, read_live

    if ctx.remote is None:
        raise CannotRun(ctx.remote_missing or "no sshd to reach this machine through")
    remote = parse_remote(
        ctx.remote["destination"],
        ctx.remote.get("prefix"),
        ctx.remote.get("python"),
        ssh_config=ctx.remote["ssh_config"],
    )
    local = next((d for d in probe_nvml(ctx.nvml).devices if d.key == ctx.device), None)
    found = list_devices(remote)
    there = next((d for d in found.discovery.devices if d.key == ctx.device), None)
    problems = []
    if there is None or local is None or getattr(there, "uuid", None) != local.uuid:
        problems.append(
            f"listed over ssh: {getattr(there, 'name', None)!r} (uuid {getattr(there, 'uuid', None)}), here {getattr(local, 'uuid', None)}"
        )
    points = BenchRun(
        BenchPlan("matmul", [ctx.device], sizes=[1024], time_budget_s=0.5, remote=remote)
    ).run_all()
    point = points[0] if points else None
    if point is None or point.error or point.host != remote.host:
        problems.append(f"remote matmul point: {point.error if point else 'none'}")
    run = run_real(
        LaunchConfig(Dim3(4), Dim3(64), n=250),
        remote=remote,
        device_index=ctx.index,
        timeout_s=REALRUN_TIMEOUT_S,
    )
    if run.backend != "gpu" or run.mismatches(64) or run.untouched or run.sm_of_block is None:
        problems.append(f"remote real run: {run.summary()} ({run.sm_note or 'SM map present'})")
    agent = open_agent(remote)
    try:
        live = read_live(agent, [int(local.nvml_index)] if local and local.nvml_index is not None else [0])[0]
    finally:
        agent.close()
    pcie = live.pcie_rx_bytes_per_s is not None or "pcie_rx_bytes_per_s" in live.unavailable
    if not pcie:
        problems.append("the remote live reading has no PCIe traffic and no reason")
    figures = [
        record_figure(
            "remote matmul n=1024", point.throughput if point else None, "GFLOP/s", f"on {remote.host}"
        ),
        record_figure("remote real run", run.kernel_s * 1e3, "ms", run.summary()),
    ]
    summary = f"over ssh to {remote.label}: " + (
        "listing, a benchmark point, a real run and a live reading agree"
        if not problems
        else "; ".join(problems)
    )
    return CheckResult("remote", status_of(not problems, figures), summary, figures, {"live": live.to_dict()})


#: launches of known occupancy for the GPM check: (name, threads per block, dynamic shared memory
#: per block). On Hopper the per-SM block limit (32) gives 1-warp blocks 50 % and 2-warp blocks
#: 100 %; 12 KiB of shared memory per 1-warp block leaves room for fewer blocks still. The
#: predictions are the app's own (``plan_launch`` with the spin kernel's registers), never these words.
OCCUPANCY_TRUTH_LAUNCHES = (
    ("2-warp blocks", 64, 0),
    ("1-warp blocks", 32, 0),
    ("1-warp blocks, 12 KiB shared", 32, 12 * 1024),
)
#: each block spins this long, and the launch runs this many waves: 2 s, so GPM's window (from
#: GPM_SETTLE_S after the launch, GPM_WINDOW_S long) lies inside the kernel
OCCUPANCY_SPIN_NS = 200_000_000
OCCUPANCY_WAVES = 10
GPM_SETTLE_S = 0.3
GPM_WINDOW_S = 1.0
#: GPM's SM occupancy may sit this many points from the prediction
OCCUPANCY_TRUTH_POINTS = 10.0


def check_occupancy_truth(ctx: CheckContext) -> CheckResult:
    """Three launches of known occupancy (the spin kernel, every block resident for 200 ms, ten
    waves): GPM's SM occupancy over a one-second window inside each kernel against the occupancy
    the app predicts for that launch, within 10 points."""
    import time

    import numpy as np

    from explorer.acceptance.judge import GpmOccupancyCase, occupancy_truth_figures
    from explorer.bench import peaks
    from explorer.devices.gpm import GpmReader
    from explorer.devices.model import CudaGpu
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch.schedule import plan_launch
    from explorer.launch_runs import measured_kernels as mk
    from explorer.numbacuda import cuda

    rec = peaks.device_record(ctx.device)
    if not isinstance(rec, CudaGpu) or not rec.sm_count:
        raise CannotRun(f"{ctx.device} was not found by discovery, so its SM count and limits are unknown")
    nvml, handle = _nvml_handle(ctx.device)
    cuda.select_device(ctx.index)
    cases = []
    for name, threads, smem in OCCUPANCY_TRUTH_LAUNCHES:
        probe = LaunchConfig(Dim3(1), Dim3(threads), smem)
        sm_d = cuda.device_array(1, dtype=np.int32)
        t_d = cuda.device_array(1, dtype=np.uint64)
        mk.spin_blocks[1, threads, 0, smem](np.uint64(1000), sm_d, t_d, t_d)  # compiles
        cuda.synchronize()
        regs = mk.kernel_registers(mk.spin_blocks)
        plan = plan_launch(LaunchConfig(Dim3(1), Dim3(threads), smem, max(1, regs)), rec)
        blocks = OCCUPANCY_WAVES * rec.sm_count * plan.occupancy.active_blocks_per_sm
        plan = plan_launch(LaunchConfig(Dim3(blocks), probe.block, smem, max(1, regs)), rec)
        predicted = 100.0 * plan.occupancy.occupancy
        sm_d = cuda.device_array(blocks, dtype=np.int32)
        start_d = cuda.device_array(blocks, dtype=np.uint64)
        end_d = cuda.device_array(blocks, dtype=np.uint64)
        reader = GpmReader(nvml, handle)
        done = cuda.event()
        mk.spin_blocks[blocks, threads, 0, smem](np.uint64(OCCUPANCY_SPIN_NS), sm_d, start_d, end_d)
        done.record()
        time.sleep(GPM_SETTLE_S)
        reader.read()  # the window's first sample
        time.sleep(GPM_WINDOW_S)
        result = reader.read()
        covered = not done.query()  # the kernel still ran at the window's end
        cuda.synchronize()
        reader.close()
        measured = result.values.get("sm_occupancy_pct")
        why = result.reasons.get("sm_occupancy_pct", "")
        if measured is not None and not covered:
            measured, why = None, "the kernel ended inside GPM's window, which then averaged idle time in"
        ctx.log(f"{name}: predicted {predicted:.1f} %, GPM {measured if measured is not None else why}")
        cases.append(GpmOccupancyCase(f"{name}: GPM SM occupancy", predicted, measured, why))
    with contextlib.suppress(Exception):  # the process ends next; a refusal here changes nothing
        nvml.nvmlShutdown()
    figures = occupancy_truth_figures(cases, OCCUPANCY_TRUTH_POINTS)
    summary = "; ".join(
        f"{c.name.split(':')[0]} predicted {c.predicted_pct:.0f} %, GPM "
        + (f"{c.measured_pct:.0f} %" if c.measured_pct is not None else c.why)
        for c in cases
    )
    return CheckResult(
        "occupancy_truth",
        status_of(True, figures),
        summary,
        figures,
        {"cases": [asdict(c) for c in cases]},
    )


def _nvml_handle(device: str) -> tuple[Any, Any]:
    """NVML, initialised, and ``device``'s handle; CannotRun in one line when NVML cannot say."""
    from explorer.devices.nvml import import_nvml
    from explorer.gpuqueue.share import gpu_identity

    try:
        nvml = import_nvml()
        nvml.nvmlInit()
    except Exception as exc:
        raise CannotRun(f"NVML cannot be read here ({str(exc).strip() or type(exc).__name__})") from exc
    index = gpu_identity(device, nvml)[1]
    if index is None:
        raise CannotRun(f"NVML does not list {device}, so GPM cannot be read for it")
    return nvml, nvml.nvmlDeviceGetHandleByIndex(index)
