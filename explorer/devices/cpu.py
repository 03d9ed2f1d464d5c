"""The CPU as a compute device: model, cores, clocks, vector instruction sets, memory.

psutil answers in microseconds; py-cpuinfo takes about a second (it may start a
subprocess), so its answer is cached for the life of the process and this module is only
called from discovery, which the window runs in a background thread.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from typing import Any

from explorer.devices.model import CpuDetails, Device

#: ISA extensions that change how fast numeric code runs, in the order a student meets them.
SPEED_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_bf16",
    "neon",
    "asimd",
    "asimdhp",
    "sve",
    "sve2",
)

# FP32 lanes of the widest vector unit each extension gives.
_FP32_LANES = (("avx512f", 16), ("avx", 8), ("sse", 4), ("asimd", 4), ("neon", 4))


@lru_cache(maxsize=1)
def _cpuinfo_cached() -> dict[str, Any]:
    import cpuinfo  # py-cpuinfo: slow, so imported and run once

    return dict(cpuinfo.get_cpu_info())


def speed_flags(all_flags: list[str] | set[str]) -> list[str]:
    """The speed-relevant subset of a CPU's feature flags, in ``SPEED_FLAGS`` order."""
    present = {f.lower() for f in all_flags}
    return [f for f in SPEED_FLAGS if f in present]


def theoretical_fp32_gflops(
    physical_cores: int, clock_mhz: float, flags: list[str]
) -> tuple[float, str] | None:
    """A textbook upper bound: cores x clock x FP32 FLOP per cycle, with the assumption spelt out.

    FLOP per cycle = vector lanes x 2 (a fused multiply-add is 2 FLOP) x 2 FMA pipes per core
    where FMA exists. Real cores differ (some have one 512-bit FMA pipe; clocks drop under AVX
    load), which is why the result is labelled an estimate, not a measurement.
    """
    if physical_cores <= 0 or clock_mhz <= 0:
        return None
    have = set(flags)
    lanes = next((n for flag, n in _FP32_LANES if flag in have or (flag == "sse" and "sse4_2" in have)), 1)
    has_fma = "fma" in have or "asimd" in have or "neon" in have
    per_cycle = lanes * (2 * 2 if has_fma else 1)
    gflops = physical_cores * clock_mhz / 1000.0 * per_cycle
    how = (
        f"theoretical FP32 peak estimate: {physical_cores} cores x {clock_mhz:.0f} MHz x {per_cycle} FLOP/cycle "
        f"({lanes} FP32 lanes{' x 2 FLOP per FMA x 2 FMA pipes assumed' if has_fma else ', no FMA'}); "
        "not a measurement"
    )
    return gflops, how


def probe_cpu(*, psutil_module: Any = None, cpuinfo_info: dict[str, Any] | None = None) -> Device:
    """Describe the host CPU. Fields a library cannot read stay ``None`` with a reason."""
    if psutil_module is None:
        import psutil

        psutil_module = psutil
    info: dict[str, Any] = {}
    device = Device(kind="cpu", name="CPU", key="cpu", source="psutil + py-cpuinfo")
    if cpuinfo_info is not None:
        info = cpuinfo_info
    else:
        try:
            info = _cpuinfo_cached()
        except Exception as exc:  # a broken /proc or a sandbox: keep what psutil knows
            device.mark_unavailable("name", f"py-cpuinfo failed: {exc}")
    details = CpuDetails()
    device.cpu = details

    device.name = str(info.get("brand_raw") or platform.processor() or platform.machine() or "CPU").strip()
    vendor = info.get("vendor_id_raw")
    device.vendor = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(vendor, vendor) if vendor else None
    details.architecture = info.get("arch_string_raw") or platform.machine() or None
    details.isa_flags = speed_flags(info.get("flags", []))
    if not info.get("flags"):
        if (details.architecture or "").lower() in ("arm64", "aarch64"):
            # Advanced SIMD (NEON) is mandatory in 64-bit Arm, so it is known even unreported (macOS).
            details.isa_flags = ["neon"]
            device.notes.append(
                "NEON is listed because every 64-bit Arm CPU has it; the OS reported no flags."
            )
        else:
            device.mark_unavailable("isa_flags", "py-cpuinfo reported no feature flags")

    try:
        details.logical_cores = psutil_module.cpu_count(logical=True)
        details.physical_cores = psutil_module.cpu_count(logical=False)
    except Exception as exc:
        device.mark_unavailable("physical_cores", f"psutil could not count cores: {exc}")
    if details.physical_cores is None:
        device.mark_unavailable("physical_cores", "the operating system does not report physical cores")

    try:
        freq = psutil_module.cpu_freq()
    except Exception:
        freq = None
    if freq is not None and freq.current:
        details.frequency_mhz = float(freq.current)
    if freq is not None and freq.max:
        details.frequency_max_mhz = float(freq.max)
    advertised = (info.get("hz_advertised") or [0])[0]
    clock_advertised = details.frequency_max_mhz is None and bool(advertised)
    if clock_advertised:
        details.frequency_max_mhz = advertised / 1e6
        device.notes.append(
            "Maximum clock is the advertised clock from py-cpuinfo; the OS does not report a boost clock."
        )
    if details.frequency_mhz is None:
        device.mark_unavailable("frequency_mhz", "the operating system does not report the CPU clock")
    if details.frequency_max_mhz is None:
        device.mark_unavailable("frequency_max_mhz", "neither the OS nor py-cpuinfo reports a maximum clock")

    try:
        mem = psutil_module.virtual_memory()
        device.memory_total_bytes = int(mem.total)
        details.memory_available_bytes = int(mem.available)
    except Exception as exc:
        device.mark_unavailable("memory_total_bytes", f"psutil could not read memory: {exc}")

    device.clock_sm_mhz = int(details.frequency_mhz) if details.frequency_mhz else None
    device.clock_sm_max_mhz = int(details.frequency_max_mhz) if details.frequency_max_mhz else None
    estimate = None
    if details.physical_cores and details.frequency_max_mhz:
        estimate = theoretical_fp32_gflops(
            details.physical_cores, details.frequency_max_mhz, details.isa_flags
        )
    if estimate:
        device.fp32_peak_gflops, how = round(estimate[0], 1), estimate[1]
        device.fp32_peak_basis = (
            "estimate from advertised clock" if clock_advertised else "estimate from maximum clock"
        )
        device.notes.append(how)
    else:
        device.mark_unavailable("fp32_peak_gflops", "needs the core count and the maximum clock")
    return device
