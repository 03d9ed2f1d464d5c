"""The machine the layout and render tests show: a lab laptop's CPU with every row the Devices
page has, no NVIDIA GPU, and every catalog GPU (the longest names a device box and list hold)."""

from __future__ import annotations

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice


def lab_cpu() -> CpuDevice:
    """The CPU with every row the details show, as a machine that has run a benchmark reports
    it (a bare CPU left the details narrow and hid that they scrolled sideways at 1024x768)."""
    return CpuDevice(
        name="Intel(R) Xeon(R) Processor",
        key="cpu",
        source="psutil + /proc/cpuinfo",
        architecture="x86_64",
        physical_cores=2,
        logical_cores=2,
        frequency_mhz=2596.0,
        frequency_max_mhz=2596.0,
        isa_flags=["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"],
        memory_total_bytes=25_228_800_000,
        memory_available_bytes=21_474_836_480,
        clock_measured_ghz=3.69,
        fp32_peak_gflops=472.6,
        fp32_measured_gflops=195.5,
        memory_bandwidth_gbps=57.4,
        notes=[
            "Maximum clock is the advertised clock from /proc/cpuinfo; the OS does not report a boost clock.",
            "theoretical FP32 peak: measured clock 3.69 GHz x 2 cores x 64 FLOP/cycle (AVX-512: 16 FP32 "
            "lanes x 2 FLOP per FMA x 2 FMA pipes assumed)",
        ],
    )


def lab_discovery() -> Discovery:
    """The CPU and every catalog GPU: the longest names a user's device box and list will hold."""
    return Discovery(
        devices=[
            lab_cpu(),
            *load_catalog(),
        ],
        reports=[
            ProbeReport("cpu", True, "Test CPU 9000", 1),
            ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed."),
            ProbeReport("catalog", True, "spec sheets", 17),
        ],
    )


def measured_matmul_points():
    """A CPU matmul run as the engine records it (made by hand: the layout, not the timing, is
    under test), with the peak's long basis the caption under the table says once."""
    from tests.points import cpu_matmul_point

    basis = "measured clock 3.69 GHz x 2 cores x 64 FLOP/cycle (AVX-512: 16 FP32 lanes x 2 FLOP per FMA x 2 FMA pipes assumed)"
    return [
        cpu_matmul_point(
            n,
            gflops,
            spread_s=1e-6,
            repeats=5,
            peak=473.0,
            peak_basis=basis,
            peak_kind="theoretical",
            peak_is_estimate=True,
            noisy=True,
            noise_reason="other programs used 80% of the CPU while this point ran",
        )
        for n, gflops in ((64, 27.4), (128, 48.5), (256, 45.4), (512, 38.7))
    ]


def measured_gpu_matmul_points():
    """A GPU's matmul run, as ``measured_matmul_points`` is a CPU's: the names a GPU's rows
    put in the table (its device, a variant named after it) are wider than the CPU's."""
    from tests.points import cpu_matmul_point

    basis = "NVIDIA H200 spec sheet: 67 TFLOP/s FP32 (132 SMs at 1.98 GHz)"
    return [
        cpu_matmul_point(
            n,
            gflops,
            variant="cuda:0 tf32",
            device="cuda:0",
            spread_s=1e-6,
            repeats=5,
            peak=66900.0,
            peak_basis=basis,
            peak_kind="theoretical",
        )
        for n, gflops in ((64, 41.0), (128, 322.0), (256, 2580.0), (512, 17800.0))
    ]
