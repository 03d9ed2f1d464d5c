"""Occupancy against the driver: the app's port of NVIDIA's calculator (``explorer.launch.occupancy``)
and the CUDA driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` on the same compiled kernels,
for hundreds of random launch configurations.

The kernel needs many registers (``Sizes.occupancy_accumulators`` values live through a loop), so
numba's ``max_registers`` really forces its register count down as the cap falls (spilling the
rest to local memory): one kernel compiled under several caps gives configurations across the
register limit. Each configuration draws a cap, a block size up to what the compiled kernel may
launch with, and an amount of dynamic shared memory up to the opt-in maximum; the kernel is opted
in to exactly that much, as the app's model assumes.
"""

from __future__ import annotations

import random
from typing import Any

from explorer.acceptance.context import CheckContext
from explorer.acceptance.judge import OccupancyCase, occupancy_figure, record_figure
from explorer.acceptance.records import CheckResult, Status

#: the default dynamic shared memory a kernel may use without opting in
DEFAULT_DYNAMIC_SMEM = 48 * 1024
SEED = 20261201


def kernel_source(accumulators: int) -> str:
    """A kernel keeping ``accumulators`` float32 values live through a loop (each step needs its
    neighbour's value, so none can be dropped or merged), that also uses dynamic shared memory."""
    lines = ["def pressure(out, steps):", "    dyn = cuda.shared.array(0, float32)", "    i = cuda.grid(1)"]
    lines += [f"    a{j} = float32(i * {j + 1}) * float32(0.5)" for j in range(accumulators)]
    lines.append("    for _ in range(steps):")
    lines += [
        f"        a{j} = a{j} * a{(j + 1) % accumulators} + float32({j + 1})" for j in range(accumulators)
    ]
    lines.append("    total = float32(0.0)")
    lines += [f"    total += a{j}" for j in range(accumulators)]
    lines += ["    if i < out.shape[0]:", "        dyn[0] = total", "        out[i] = total + dyn[0]"]
    return "\n".join(lines) + "\n"


def make_kernel(accumulators: int) -> Any:
    """The kernel's Python function (compiled by numba under each cap)."""
    from numba import float32

    from explorer.numbacuda import cuda

    namespace: dict[str, Any] = {"cuda": cuda, "float32": float32}
    exec(compile(kernel_source(accumulators), "<occupancy kernel>", "exec"), namespace)  # our own source
    return namespace["pressure"]


def draw_configs(
    rng: random.Random, kernels: dict[int, tuple[int, int]], count: int, max_dynamic_smem: int
) -> list[tuple[int, int, int]]:
    """``count`` random (cap, threads, dynamic smem): the cap from ``kernels`` (cap -> (max
    threads, static smem)), threads 1..the kernel's max, smem 0 a quarter of the time, else any
    byte count up to what a block may opt in to."""
    caps = sorted(kernels)
    out = []
    for _ in range(count):
        cap = rng.choice(caps)
        max_threads, static = kernels[cap]
        threads = rng.randint(1, max_threads)
        smem = 0 if rng.random() < 0.25 else rng.randint(1, max(1, max_dynamic_smem - static))
        out.append((cap, threads, smem))
    return out


def check_occupancy(ctx: CheckContext) -> CheckResult:
    from explorer.acceptance.cudadriver import KernelHandle, device_attributes
    from explorer.devices.limits import limits_for_cc
    from explorer.launch.occupancy import occupancy
    from explorer.numbacuda import cuda

    sizes = ctx.sizes
    cuda.select_device(ctx.index)
    attrs = device_attributes(ctx.index)
    cc = (int(attrs["COMPUTE_CAPABILITY_MAJOR"] or 0), int(attrs["COMPUTE_CAPABILITY_MINOR"] or 0))
    limits = limits_for_cc(cc)
    fn = make_kernel(sizes.occupancy_accumulators)
    signature = "void(float32[::1], int32)"
    handles: dict[int, KernelHandle] = {}
    for cap in sizes.occupancy_register_caps:
        options = {"max_registers": cap} if cap else {}
        dispatcher = cuda.jit(signature, **options)(fn)
        overload = next(iter(dispatcher.overloads.values()))
        handles[cap] = KernelHandle(overload)
        ctx.log(f"compiled with max_registers={cap or 'none'}: {handles[cap].regs} registers")
    optin = int(attrs["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"] or DEFAULT_DYNAMIC_SMEM)
    opt_in_works = True
    try:
        first = next(iter(handles.values()))
        first.allow_dynamic_smem(optin - first.static_smem)
    except Exception as exc:  # then only configurations without opting in are drawn
        opt_in_works = False
        ctx.log(f"opting in to more than 48 KiB failed: {exc}")
    max_dynamic = optin if opt_in_works else DEFAULT_DYNAMIC_SMEM
    configs = draw_configs(
        random.Random(SEED),
        {cap: (h.max_threads, h.static_smem) for cap, h in handles.items()},
        sizes.occupancy_configs,
        max_dynamic,
    )
    cases: list[OccupancyCase] = []
    errors: list[str] = []
    for cap, threads, smem in configs:
        h = handles[cap]
        try:
            if opt_in_works:
                # opted in to exactly what it asks for past the default (the model's assumption)
                h.allow_dynamic_smem(
                    smem if smem > DEFAULT_DYNAMIC_SMEM else DEFAULT_DYNAMIC_SMEM - h.static_smem
                )
            driver = h.active_blocks(threads, smem)
        except Exception as exc:  # a refused configuration is a finding, listed
            errors.append(f"cap {cap}, {threads} threads, {smem} B: {exc}")
            continue
        model = occupancy(limits, threads, h.regs, h.static_smem + smem).active_blocks_per_sm
        cases.append(OccupancyCase(threads, cap, h.regs, h.static_smem, smem, driver, model))
    figure = occupancy_figure(cases, sizes.occupancy_configs)
    regs = sorted({h.regs for h in handles.values()})
    figures = [
        figure,
        record_figure(
            "registers per thread compiled",
            float(len(regs)),
            "distinct counts",
            f"{', '.join(map(str, regs))} under caps {', '.join(str(c or 'none') for c in handles)}",
        ),
    ]
    wrong = [c for c in cases if not c.equal]
    shown = "; ".join(
        f"{c.threads} threads, {c.regs} regs, {c.smem_dynamic} B: driver {c.driver_blocks}, app {c.model_blocks}"
        for c in wrong[:3]
    )
    summary = (
        f"{figure.value:.0f} of {len(cases)} random configurations equal to the driver "
        f"(CC {cc[0]}.{cc[1]}, {len(regs)} register counts, dynamic shared memory up to {max_dynamic:,} B)"
        + (f"; differ: {shown}" if wrong else "")
        + (f"; {len(errors)} refused by the driver: {errors[0]}" if errors else "")
    )
    status: Status = "fail" if wrong or errors or figure.met is False else "pass"
    details = {
        "cases": [c.__dict__ | {"equal": c.equal} for c in cases],
        "driver_errors": errors,
        "opt_in_works": opt_in_works,
        "limits_table": limits.to_dict(),
    }
    return CheckResult("occupancy", status, summary, figures, details)
