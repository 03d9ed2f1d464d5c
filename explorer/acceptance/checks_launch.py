"""The launch visualizer's real run on the GPU (who wrote each element, and which SM ran each
block, from ``%smid``), and the remote paths over ssh: listing the GPU, a benchmark point, a real
run and a live reading on the same machine through a loopback sshd.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from explorer.acceptance.context import CannotRun, CheckContext
from explorer.acceptance.judge import record_figure, status_of
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
        record_figure("kernel time", one.kernel_s * 1e3, "ms", one.kernel_method or "launch + synchronize"),
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
