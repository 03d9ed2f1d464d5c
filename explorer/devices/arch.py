"""Facts that follow from a GPU's compute capability, for GPUs whose driver does not say them.

The CUDA runtime reports SMs and clocks but not how many FP32 cores an SM has, nor the
architecture's name; without those a present GPU would show no FP32 peak, and the benchmark
plot would have no peak line to compare against. The catalog's spec sheets carry them already.
"""

from __future__ import annotations

from explorer.devices.limits import limits_for_cc
from explorer.devices.model import Gpu

#: FP32 multiply-add results per clock per SM: CUDA C++ Programming Guide, "Arithmetic
#: Instructions", throughput table (32-bit floating-point add, multiply, multiply-add).
FP32_CORES_PER_SM: dict[tuple[int, int], int] = {
    (5, 0): 128, (5, 2): 128, (5, 3): 128,
    (6, 0): 64, (6, 1): 128, (6, 2): 128,
    (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
    (9, 0): 128,
    (10, 0): 128, (10, 3): 128, (11, 0): 128,
    (12, 0): 128, (12, 1): 128,
}  # fmt: skip

FP32_SOURCE = "CUDA C++ Programming Guide, Arithmetic Instructions throughput table"


def fill_from_compute_capability(device: Gpu) -> None:
    """Fill architecture, FP32 cores per SM and the theoretical FP32 peak where still missing."""
    cc = device.compute_capability
    if cc is None:
        return
    if device.architecture is None:
        try:
            device.architecture = limits_for_cc(cc).arch_name
        except Exception as exc:  # an unknown (newer) CC: say so rather than guess
            device.mark_unavailable(
                "architecture", f"compute capability {cc[0]}.{cc[1]} is not in the table: {exc}"
            )
    if device.cuda_cores_per_sm is None:
        cores = FP32_CORES_PER_SM.get(cc)
        if cores is None:
            device.mark_unavailable(
                "cuda_cores_per_sm", f"compute capability {cc[0]}.{cc[1]} is not in the FP32 throughput table"
            )
        else:
            device.cuda_cores_per_sm = cores
    if device.fp32_peak_gflops is None:
        from explorer.devices.catalog import theoretical_fp32_gflops

        peak = theoretical_fp32_gflops(device)
        if peak is None:
            device.mark_unavailable(
                "fp32_peak_gflops", "needs SM count, FP32 cores per SM and the maximum SM clock"
            )
        else:
            device.fp32_peak_gflops = peak
            device.fp32_peak_basis = "theoretical, from compute-capability tables"
            device.notes.append(
                f"FP32 peak {peak:,.0f} GFLOP/s is theoretical: {device.sm_count} SMs x {device.cuda_cores_per_sm} "
                f"FP32 cores x 2 FLOP per FMA x {device.clock_sm_max_mhz} MHz ({FP32_SOURCE})."
            )
