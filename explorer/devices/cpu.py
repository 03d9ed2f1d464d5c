"""The CPU as a compute device: model, cores, clocks, vector instruction sets, memory.

psutil answers in microseconds. py-cpuinfo takes about a second (it starts a subprocess),
which would hold the CPU's row back from the window's first second; on Linux the same facts
(model, vendor, flags, clock) are read from ``/proc/cpuinfo`` in a millisecond instead, and
py-cpuinfo is asked only where that file does not exist (macOS, Windows). Either answer is
cached for the life of the process.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from typing import Any

from explorer.devices.isa import FlopsPerCycle, cpu_fp32_peak_basis, cpu_fp32_peak_gflops, flops_per_cycle
from explorer.devices.model import CpuDevice

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


PROC_CPUINFO = "/proc/cpuinfo"
#: how the probe's note begins where the maximum clock is only the advertised one (maybe the base
#: clock): no peak at boost is built on it
ADVERTISED_CLOCK_NOTE = "Maximum clock is the advertised clock"


def parse_proc_cpuinfo(text: str, machine: str = "") -> dict[str, Any]:
    """The py-cpuinfo keys this module reads, taken from Linux's ``/proc/cpuinfo`` text.

    As py-cpuinfo does on Linux: the advertised clock is the "@ 2.30GHz" of the model name
    where it has one, else the kernel's "cpu MHz"; x86 lists ``flags``, Arm ``Features``.
    """
    first: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            first.setdefault(key.strip().lower(), value.strip())
    info: dict[str, Any] = {}
    brand = first.get("model name") or first.get("hardware") or first.get("cpu model")
    if brand:
        info["brand_raw"] = brand
    if first.get("vendor_id"):
        info["vendor_id_raw"] = first["vendor_id"]
    for key, name in (("cpu family", "family"), ("model", "model")):
        if first.get(key, "").isdigit():
            info[name] = int(first[key])
    flags = first.get("flags") or first.get("features") or ""
    if flags:
        info["flags"] = sorted(set(flags.split()))
    if machine:
        info["arch_string_raw"] = machine
    hz = 0.0
    if brand and "hz" in brand.lower():
        import re

        match = re.search(r"([0-9]+(?:\.[0-9]+)?)\s*([GM])Hz", brand, re.IGNORECASE)
        if match:
            hz = float(match.group(1)) * (1e9 if match.group(2).upper() == "G" else 1e6)
    if not hz:
        try:
            hz = float(first.get("cpu mhz", "0")) * 1e6
        except ValueError:
            hz = 0.0
    if hz > 0:
        info["hz_advertised"] = [int(hz), 0]
    return info


@lru_cache(maxsize=1)
def _cpuinfo_cached() -> dict[str, Any]:
    try:
        with open(PROC_CPUINFO, encoding="utf-8", errors="replace") as fh:
            info = parse_proc_cpuinfo(fh.read(1 << 20), platform.machine())
        if info.get("brand_raw"):
            info["source"] = PROC_CPUINFO
            return info
    except OSError:
        pass
    import cpuinfo  # py-cpuinfo: slow (a subprocess), so only where /proc/cpuinfo is not

    return {**cpuinfo.get_cpu_info(), "source": "py-cpuinfo"}


def speed_flags(all_flags: list[str] | set[str]) -> list[str]:
    """The speed-relevant subset of a CPU's feature flags, in ``SPEED_FLAGS`` order."""
    present = {f.lower() for f in all_flags}
    return [f for f in SPEED_FLAGS if f in present]


def core_flops_per_cycle(device: CpuDevice) -> FlopsPerCycle:
    """FP32 FLOP per cycle per core of ``device``: its ISA flags, on its vendor's core."""
    return flops_per_cycle(device.isa_flags, device.vendor, device.cpu_family, device.cpu_model)


def probe_cpu(*, psutil_module: Any = None, cpuinfo_info: dict[str, Any] | None = None) -> CpuDevice:
    """Describe the host CPU. Every field it cannot read stays empty with a reason."""
    if psutil_module is None:
        import psutil

        psutil_module = psutil
    info: dict[str, Any] = {}
    device = CpuDevice(name="CPU", key="cpu", source="psutil + py-cpuinfo")
    if cpuinfo_info is not None:
        info = cpuinfo_info
    else:
        try:
            info = _cpuinfo_cached()
        except Exception as exc:  # a broken /proc or a sandbox: keep what psutil knows
            device.notes.append(f"The CPU model and flags could not be read: {exc}")
    told_by = str(info.get("source") or "py-cpuinfo")
    device.source = f"psutil + {told_by}"

    device.name = str(info.get("brand_raw") or platform.processor() or platform.machine() or "CPU").strip()
    vendor = info.get("vendor_id_raw")
    device.vendor = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(vendor, vendor) if vendor else None
    if device.vendor is None:
        device.mark_unavailable("vendor", "the operating system does not name the CPU's vendor")
    device.architecture = info.get("arch_string_raw") or platform.machine() or None
    x86 = (device.architecture or "").lower() in ("x86_64", "amd64", "i386", "i686", "x86")
    for name, key in (("cpu_family", "family"), ("cpu_model", "model")):
        if isinstance(info.get(key), int) and not isinstance(info.get(key), bool):
            setattr(device, name, info[key])
        elif x86:
            device.mark_unavailable(name, f"{told_by} did not give the x86 {key} number")
        else:
            device.mark_unavailable(name, "only x86 CPUs have family and model numbers")
    if device.architecture is None:
        device.mark_unavailable("architecture", "the operating system does not name the CPU's architecture")
    device.isa_flags = speed_flags(info.get("flags", []))
    if not info.get("flags"):
        if (device.architecture or "").lower() in ("arm64", "aarch64"):
            # Advanced SIMD (NEON) is mandatory in 64-bit Arm, so it is known even unreported (macOS).
            device.isa_flags = ["neon"]
            device.notes.append(
                "NEON is listed because every 64-bit Arm CPU has it; the OS reported no flags."
            )
        else:
            device.mark_unavailable("isa_flags", f"{told_by} reported no feature flags")

    try:
        device.logical_cores = psutil_module.cpu_count(logical=True)
        device.physical_cores = psutil_module.cpu_count(logical=False)
    except Exception as exc:
        device.mark_unavailable("physical_cores", f"psutil could not count cores: {exc}")
        device.mark_unavailable("logical_cores", f"psutil could not count cores: {exc}")
    if device.physical_cores is None:
        device.mark_unavailable("physical_cores", "the operating system does not report physical cores")
    if device.logical_cores is None:
        device.mark_unavailable("logical_cores", "the operating system does not report logical cores")

    try:
        freq = psutil_module.cpu_freq()
    except Exception:
        freq = None
    if freq is not None and freq.current:
        device.frequency_mhz = float(freq.current)
    if freq is not None and freq.max:
        device.frequency_max_mhz = float(freq.max)
    advertised = (info.get("hz_advertised") or [0])[0]
    clock_advertised = device.frequency_max_mhz is None and bool(advertised)
    if clock_advertised:
        device.frequency_max_mhz = advertised / 1e6
        device.notes.append(f"{ADVERTISED_CLOCK_NOTE} from {told_by}; the OS does not report a boost clock.")
    if device.frequency_mhz is None:
        device.mark_unavailable("frequency_mhz", "the operating system does not report the CPU clock")
    if device.frequency_max_mhz is None:
        device.mark_unavailable("frequency_max_mhz", f"neither the OS nor {told_by} reports a maximum clock")

    try:
        mem = psutil_module.virtual_memory()
        device.memory_total_bytes = int(mem.total)
        device.memory_available_bytes = int(mem.available)
    except Exception as exc:
        device.mark_unavailable("memory_total_bytes", f"psutil could not read memory: {exc}")
        device.mark_unavailable("memory_available_bytes", f"psutil could not read memory: {exc}")
    device.mark_unavailable(
        "memory_bandwidth_gbps", "no probe reads a CPU's memory bandwidth; the benchmarks measure it"
    )

    cores, mhz = device.physical_cores, device.frequency_max_mhz
    if cores and cores > 0 and mhz and mhz > 0:
        # a textbook upper bound on the clock the OS reports; the benchmarks measure the clock the
        # cores really run at and the FP32 ceiling an FMA loop reaches (``devices.roofs``)
        per_cycle = core_flops_per_cycle(device)
        device.fp32_peak_gflops = round(cpu_fp32_peak_gflops(mhz / 1000.0, cores, per_cycle), 1)
        device.fp32_peak_basis = (
            "estimate from advertised clock" if clock_advertised else "estimate from maximum clock"
        )
        device.notes.append(
            "theoretical FP32 peak estimate: "
            f"{cpu_fp32_peak_basis(f'{mhz:.0f} MHz', cores, per_cycle)}; not a measurement"
        )
    else:
        device.mark_unavailable("fp32_peak_gflops", "needs the core count and the maximum clock")
    # filled from the stored measurements by discovery (``explorer.devices.roofs.apply_measured``)
    why = "not measured on this machine yet: run a benchmark or 'device-explorer devices --measure'"
    device.mark_unavailable("clock_measured_ghz", why)
    device.mark_unavailable("fp32_measured_gflops", why)
    _fill_caches(device, info)
    return device


def _fill_caches(device: CpuDevice, info: dict[str, Any]) -> None:
    """The data caches from sysfs (Linux), else py-cpuinfo's sizes, else why none are known."""
    from explorer.devices.caches import caches_from_cpuinfo, read_sysfs_caches

    device.caches = read_sysfs_caches() or caches_from_cpuinfo(info, device.physical_cores)
    if not device.caches:
        device.mark_unavailable(
            "caches",
            "neither the OS (sysfs) nor py-cpuinfo reports the cache sizes; the roofline's levels stay unnamed",
        )
