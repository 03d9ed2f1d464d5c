"""The CPU probe with stand-in psutil answers and py-cpuinfo results."""

from __future__ import annotations

import types

import pytest

from explorer.devices.cpu import parse_proc_cpuinfo, probe_cpu, speed_flags


def _psutil(physical=8, logical=16, freq=(3600.0, 5000.0), total=32 * 1024**3, available=20 * 1024**3):
    def cpu_count(logical_cores=True, **kwargs):
        return logical if kwargs.get("logical", logical_cores) else physical

    def cpu_freq():
        return None if freq is None else types.SimpleNamespace(current=freq[0], min=0.0, max=freq[1])

    return types.SimpleNamespace(
        cpu_count=cpu_count,
        cpu_freq=cpu_freq,
        virtual_memory=lambda: types.SimpleNamespace(total=total, available=available),
    )


INTEL = {
    "brand_raw": "Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz",
    "vendor_id_raw": "GenuineIntel",
    "arch_string_raw": "x86_64",
    "flags": ["fpu", "sse", "sse2", "sse4_2", "avx", "avx2", "fma", "f16c", "aes", "popcnt"],
    "hz_advertised": [3600000000, 0],
}


def test_cpu_facts_and_speed_flags():
    cpu = probe_cpu(psutil_module=_psutil(), cpuinfo_info=INTEL)
    assert (cpu.kind, cpu.key, cpu.present) == ("cpu", "cpu", True)
    assert cpu.name.startswith("Intel(R) Core(TM) i9-9900K") and cpu.vendor == "Intel"
    assert (cpu.physical_cores, cpu.logical_cores) == (8, 16)
    assert cpu.isa_flags == ["sse4_2", "avx", "avx2", "fma", "f16c"]  # aes, popcnt are not about FLOPs
    assert cpu.memory_total_bytes == 32 * 1024**3 and cpu.memory_available_bytes == 20 * 1024**3
    assert (cpu.frequency_mhz, cpu.frequency_max_mhz) == (3600.0, 5000.0)
    assert cpu.unexplained() == []  # every field it could not fill says why


def test_fp32_estimate_is_derived_and_labelled():
    cpu = probe_cpu(psutil_module=_psutil(), cpuinfo_info=INTEL)
    # 8 cores x 5.0 GHz x (8 AVX lanes x 2 FLOP per FMA x 2 FMA pipes) = 1280 GFLOP/s
    assert cpu.fp32_peak_gflops == pytest.approx(1280.0)
    assert any("theoretical FP32 peak estimate" in n and "not a measurement" in n for n in cpu.notes)
    assert cpu.fp32_peak_basis == "estimate from maximum clock"  # the OS reported the maximum


def test_avx512_counts_sixteen_lanes():
    info = dict(INTEL, flags=INTEL["flags"] + ["avx512f"])
    cpu = probe_cpu(psutil_module=_psutil(physical=4, freq=(2000.0, 2000.0)), cpuinfo_info=info)
    assert cpu.fp32_peak_gflops == pytest.approx(4 * 2.0 * 64)


def test_missing_clock_leaves_peak_unknown_with_reasons():
    info = dict(INTEL, hz_advertised=[0, 0])
    cpu = probe_cpu(psutil_module=_psutil(freq=None), cpuinfo_info=info)
    assert cpu.fp32_peak_gflops is None and cpu.fp32_peak_basis == ""
    assert {"frequency_mhz", "frequency_max_mhz", "fp32_peak_gflops"} <= set(cpu.unavailable)


def test_max_clock_falls_back_to_advertised():
    cpu = probe_cpu(psutil_module=_psutil(freq=(2245.0, 0.0)), cpuinfo_info=INTEL)
    assert cpu.frequency_max_mhz == 3600.0
    assert any("advertised" in n for n in cpu.notes)
    assert cpu.fp32_peak_basis == "estimate from advertised clock"


def test_arm_without_reported_flags_still_has_neon():
    info = {"brand_raw": "Apple M2", "arch_string_raw": "arm64", "flags": []}
    cpu = probe_cpu(psutil_module=_psutil(physical=8, logical=8, freq=(3500.0, 3500.0)), cpuinfo_info=info)
    assert cpu.isa_flags == ["neon"] and "isa_flags" not in cpu.unavailable


def test_speed_flags_order_and_case():
    assert speed_flags({"AVX2", "sse4_2", "asimd", "xyz"}) == ["sse4_2", "avx2", "asimd"]


LINUX_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz
cpu MHz\t\t: 2100.000
flags\t\t: fpu sse sse2 sse4_2 avx avx2 fma

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz
cpu MHz\t\t: 800.000
flags\t\t: fpu sse sse2 sse4_2 avx avx2 fma
"""

ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm
CPU implementer\t: 0x41
"""


def test_proc_cpuinfo_gives_what_py_cpuinfo_gave_without_its_second_of_start_up():
    info = parse_proc_cpuinfo(LINUX_CPUINFO, "x86_64")
    assert info["brand_raw"] == "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz"
    assert info["vendor_id_raw"] == "GenuineIntel" and info["arch_string_raw"] == "x86_64"
    assert speed_flags(info["flags"]) == ["sse4_2", "avx", "avx2", "fma"]
    assert info["hz_advertised"][0] == 1_900_000_000  # the model name's clock, not the first core's "cpu MHz"


def test_proc_cpuinfo_without_a_clock_in_the_name_uses_cpu_mhz_and_arm_features():
    info = parse_proc_cpuinfo(LINUX_CPUINFO.replace(" @ 1.90GHz", ""), "x86_64")
    assert info["hz_advertised"][0] == 2_100_000_000
    arm = parse_proc_cpuinfo(ARM_CPUINFO, "aarch64")
    assert "brand_raw" not in arm and "asimd" in arm["flags"] and "hz_advertised" not in arm


def test_the_real_cpu_probe_reads_proc_cpuinfo_on_linux():
    """On Linux the window's CPU row must not wait a second for py-cpuinfo's subprocess."""
    import sys

    from explorer.devices import cpu as cpu_module

    cpu_module._cpuinfo_cached.cache_clear()
    cpu = probe_cpu()
    assert cpu.name and cpu.unexplained() == []
    if sys.platform.startswith("linux"):
        assert cpu.source == "psutil + /proc/cpuinfo"
