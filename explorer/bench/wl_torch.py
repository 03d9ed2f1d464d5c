"""torch workloads: matmul, the timing lesson, many small syncs vs one copy, two GPUs.

Imported only inside the benchmark worker process.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Literal

from explorer.bench import peaks
from explorer.bench.execute import (
    Outcome,
    PointError,
    PointSpec,
    time_plain,
    time_torch,
    torch_device,
    torch_sync,
    torch_threads,
)
from explorer.bench.variants import Variant
from explorer.bench.workload import LESSON_MATMULS, SMALL_MATRIX, Workload

if TYPE_CHECKING:  # pragma: no cover
    import torch


def _peak(spec: PointSpec) -> float | None:
    return peaks.fp32_peak_gflops(spec.device)


def _square_operands(n: int, dev: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    import torch

    gen = torch.Generator(device="cpu").manual_seed(n)
    a = torch.rand(n, n, generator=gen).to(dev)
    b = torch.rand(n, n, generator=gen).to(dev)
    c = torch.empty(n, n, device=dev)
    return a, b, c


#: entries of a product checked against float64 after the timing (a row times a column each)
CHECKED_ENTRIES = 64
#: an entry may differ from float64 by this share of sum(|a_ik| |b_kj|): float32's rounding over
#: n terms stays orders below it; a wrong kernel (a missed tile, a stale buffer) does not
PRODUCT_TOLERANCE = 1e-3


def check_product(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, what: str) -> float:
    """Sampled entries of ``c = a @ b`` against float64 on the host; PointError when one is wrong.
    Returns the largest error relative to its bound, so a point can say how close it was."""
    import torch

    n_rows, n_cols = c.shape
    gen = torch.Generator(device="cpu").manual_seed(n_rows * 31 + n_cols)
    rows = torch.randint(0, n_rows, (CHECKED_ENTRIES,), generator=gen)
    cols = torch.randint(0, n_cols, (CHECKED_ENTRIES,), generator=gen)
    left = a[rows.to(a.device), :].double().cpu()
    right = b[:, cols.to(b.device)].double().cpu().T
    expected = (left * right).sum(dim=1)
    bound = (left.abs() * right.abs()).sum(dim=1) + 1e-30
    got = c[rows.to(c.device), cols.to(c.device)].double().cpu()
    relative = ((got - expected).abs() / bound).max().item()
    if not relative <= PRODUCT_TOLERANCE:  # NaN fails too
        raise PointError(
            f"{what} gave a wrong result (an entry off by {relative:.2g} of its magnitude vs float64; "
            f"at most {PRODUCT_TOLERANCE:g})"
        )
    return float(relative)


def _matmul(w: Workload, spec: PointSpec) -> Outcome:
    import torch

    dev = torch_device(spec)
    a, b, c = _square_operands(spec.size, dev)
    timing = time_torch(spec, lambda: torch.mm(a, b, out=c), dev)
    threads = torch.get_num_threads() if dev.type == "cpu" else None
    # "highest" = true FP32; "high"/"medium" would let GPUs use TF32/bf16 and beat the FP32 peak.
    extra: dict[str, float | str] = {"float32_matmul_precision": torch.get_float32_matmul_precision()}
    extra["max_relative_error"] = check_product(a, b, c, "the matmul")
    return Outcome(timing, peak=_peak(spec), threads=threads, extra=extra)


def _timing_lesson(w: Workload, spec: PointSpec, *, naive: bool) -> Outcome:
    import torch

    dev = torch_device(spec)
    a, b, c = _square_operands(spec.size, dev)

    def ten_matmuls() -> None:
        for _ in range(LESSON_MATMULS):
            torch.mm(a, b, out=c)

    if naive:
        # The mistake on purpose: the clock is read as soon as the launches return. (The queue is
        # drained after the clock stops, so each sample starts from an idle device.) Same threads
        # as the synchronized variant gets, chosen the same way, so the two differ only in the clock.
        torch_threads(spec)
        timing = time_plain(spec, ten_matmuls, torch_sync(dev), naive=True)
        extra: dict[str, float | str] = {
            "note": "clock read without synchronizing: measures launches, not work"
        }
    else:
        timing = time_torch(spec, ten_matmuls, dev)
        extra = {"note": "synchronized before the clock is read"}
    extra["max_relative_error"] = check_product(a, b, c, "the matmuls")  # waits for the last one
    threads = torch.get_num_threads() if dev.type == "cpu" else None  # what the timing ran on
    return Outcome(timing, peak=_peak(spec), threads=threads, extra=extra)


def _small_vs_big(w: Workload, spec: PointSpec, *, item_each_step: bool) -> Outcome:
    import torch

    dev = torch_device(spec)
    steps = spec.size
    gen = torch.Generator(device="cpu").manual_seed(steps)
    a = (torch.randn(SMALL_MATRIX, SMALL_MATRIX, generator=gen) / SMALL_MATRIX**0.5).to(dev)
    b = (torch.randn(SMALL_MATRIX, SMALL_MATRIX, generator=gen) / SMALL_MATRIX**0.5).to(dev)
    c = torch.empty(SMALL_MATRIX, SMALL_MATRIX, device=dev)

    if item_each_step:

        def run_all() -> list[float]:
            log: list[float] = []
            for _ in range(steps):
                torch.mm(a, b, out=c)
                log.append(torch.linalg.matrix_norm(c).item())  # waits for the device, copies 4 bytes
            return log

        syncs = steps
    else:

        def run_all() -> list[float]:
            log = torch.empty(steps, device=dev)
            for i in range(steps):
                torch.mm(a, b, out=c)
                log[i] = torch.linalg.matrix_norm(c)  # stays on the device: no wait
            return log.cpu().tolist()  # one copy (and one wait) at the end

        syncs = 1
    first = run_all()
    if len(first) != steps or not all(x == x for x in first):
        raise PointError("the norm log came back incomplete or NaN")
    expected = float(torch.linalg.matrix_norm(a.cpu().double() @ b.cpu().double()))
    if abs(first[-1] - expected) > 1e-4 * expected:
        raise PointError(f"the logged norm is {first[-1]:.6g}; float64 gives {expected:.6g}")
    timing = time_torch(spec, run_all, dev)
    threads = torch.get_num_threads() if dev.type == "cpu" else None
    return Outcome(
        timing,
        peak=_peak(spec),
        threads=threads,
        extra={"syncs_per_run": float(syncs), "us_per_step": timing.median_s / steps * 1e6},
    )


TwoGpuMode = Literal["at_once", "in_sequence", "copy"]


def _two_gpus_on_cpu(w: Workload, spec: PointSpec) -> Outcome:
    """The CPU row of the two-GPU workload: it says what the workload needs instead of measuring."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    raise PointError(f"needs two GPUs; {count} found")


def _two_gpus(w: Workload, spec: PointSpec, *, mode: TwoGpuMode) -> Outcome:
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < 2:
        raise PointError(f"needs two GPUs; {count} found")
    dev0 = torch_device(spec)
    dev1 = torch.device(spec.partner or f"cuda:{(dev0.index + 1) % count}")
    if dev1.index is None or dev1.index >= count or dev1.index == dev0.index:
        raise PointError(f"needs two different GPUs; got {dev0} and {dev1} with {count} present")
    n = spec.size

    def sync_both() -> None:
        torch.cuda.synchronize(dev0)
        torch.cuda.synchronize(dev1)

    extra: dict[str, float | str] = {"second_gpu": str(dev1)}
    if mode == "copy":
        src = torch.rand(n, n, device=dev0)
        dst = torch.empty(n, n, device=dev1)
        extra["peer_access"] = "yes" if torch.cuda.can_device_access_peer(dev0.index, dev1.index) else "no"
        timing = time_plain(spec, lambda: dst.copy_(src), sync_both)
        if not torch.equal(dst.cpu(), src.cpu()):
            raise PointError(f"the copy from {dev0} to {dev1} did not arrive whole")
        return Outcome(timing, unit="GB/s", bytes=4.0 * n * n, extra=extra, bus_bound=True)
    a0, b0, c0 = _square_operands(n, dev0)
    if mode == "at_once":
        a1, b1, c1 = _square_operands(n, dev1)

        def both() -> None:
            torch.mm(a0, b0, out=c0)  # queued on GPU 0; returns at once
            torch.mm(a1, b1, out=c1)  # queued on GPU 1 while GPU 0 works

        timing = time_plain(spec, both, sync_both)
        check_product(a0, b0, c0, f"the matmul on {dev0}")
        check_product(a1, b1, c1, f"the matmul on {dev1}")
        peak0 = peaks.fp32_peak_gflops(str(dev0))
        peak1 = peaks.fp32_peak_gflops(str(dev1))
        peak = peak0 + peak1 if peak0 and peak1 else None
        return Outcome(timing, peak=peak, extra=extra)

    def in_sequence() -> None:
        torch.mm(a0, b0, out=c0)
        torch.mm(a0, b0, out=c0)

    timing = time_plain(spec, in_sequence, torch_sync(dev0))
    check_product(a0, b0, c0, f"the matmul on {dev0}")
    return Outcome(timing, peak=_peak(spec), extra=extra)


# --- the variants, as the registry lists them (order = the order points run and legends list) -----

MATMUL = (Variant("plain", "", _matmul),)
TIMING_LESSON = (
    Variant("naive", "naive (no sync)", partial(_timing_lesson, naive=True)),
    Variant("synchronized", "synchronized", partial(_timing_lesson, naive=False)),
)
SMALL_VS_BIG = (
    Variant("item_each_step", ".item() each step", partial(_small_vs_big, item_each_step=True)),
    Variant("copy_at_end", "one copy at end", partial(_small_vs_big, item_each_step=False)),
)
TWO_GPUS = (
    Variant("cpu", "", _two_gpus_on_cpu, where="cpu"),
    Variant("at_once", "two GPUs at once", partial(_two_gpus, mode="at_once"), where="gpu"),
    Variant("in_sequence", "one GPU in sequence", partial(_two_gpus, mode="in_sequence"), where="gpu"),
    Variant("copy", "copy to next GPU", partial(_two_gpus, mode="copy"), where="gpu"),
)
