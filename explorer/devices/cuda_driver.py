"""NVIDIA GPUs as the CUDA driver itself sees them, asked through ctypes (libcuda), in milliseconds.

Listing devices must not import torch or numba (seconds each): every fact they gave the device
list (compute capability, SMs, limits, memory, PCI slot, UUID) is a ``cuDeviceGetAttribute`` or
a sibling call of the driver API, which ``libcuda.so.1`` (``nvcuda.dll``) answers directly. The
CUDA ordinals are the ones torch and numba use: they ask the same driver under the same
``CUDA_VISIBLE_DEVICES``. No context is created: these calls only read the device's attributes.

The library is passed in (``None`` loads the real one): tests give a stand-in answering the same
functions with the same pointer arguments (``tests/devices/fake_libcuda.py``).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

from explorer.devices.discovery import ProbeReport
from explorer.devices.model import CudaGpu, CudaLimits
from explorer.devices.nvml import format_cuda_driver_version
from explorer.words import count

#: ``CU_DEVICE_ATTRIBUTE_<name>`` codes, as cuda.h numbers them (stable across CUDA releases)
ATTRIBUTE_CODES: dict[str, int] = {
    "MAX_THREADS_PER_BLOCK": 1,
    "MAX_BLOCK_DIM_X": 2,
    "MAX_BLOCK_DIM_Y": 3,
    "MAX_BLOCK_DIM_Z": 4,
    "MAX_GRID_DIM_X": 5,
    "MAX_GRID_DIM_Y": 6,
    "MAX_GRID_DIM_Z": 7,
    "MAX_SHARED_MEMORY_PER_BLOCK": 8,
    "WARP_SIZE": 10,
    "MAX_REGISTERS_PER_BLOCK": 12,
    "CLOCK_RATE": 13,
    "MULTIPROCESSOR_COUNT": 16,
    "PCI_BUS_ID": 33,
    "PCI_DEVICE_ID": 34,
    "MEMORY_CLOCK_RATE": 36,
    "GLOBAL_MEMORY_BUS_WIDTH": 37,
    "L2_CACHE_SIZE": 38,
    "MAX_THREADS_PER_MULTIPROCESSOR": 39,
    "PCI_DOMAIN_ID": 50,
    "COMPUTE_CAPABILITY_MAJOR": 75,
    "COMPUTE_CAPABILITY_MINOR": 76,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 82,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
    "MAX_BLOCKS_PER_MULTIPROCESSOR": 106,
    "RESERVED_SHARED_MEMORY_PER_BLOCK": 111,
}

#: ``CudaLimits`` field -> the device attribute that gives it
LIMIT_ATTRIBUTES: dict[str, str] = {
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "warp_size": "WARP_SIZE",
    "max_smem_per_block_bytes": "MAX_SHARED_MEMORY_PER_BLOCK",
    "max_smem_per_block_optin_bytes": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "smem_per_sm_bytes": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "max_regs_per_block": "MAX_REGISTERS_PER_BLOCK",
    "regs_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "l2_cache_bytes": "L2_CACHE_SIZE",
}

#: ``CUresult`` codes the probe explains in words (cuda.h)
CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_DEVICE = 101
CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804

#: How the driver library is named, most specific first
LIBRARY_NAMES = (
    ("nvcuda.dll",) if sys.platform.startswith("win") else ("libcuda.so.1", "libcuda.so", "libcuda.dylib")
)

#: The probe's name in reports, and where it says a fact came from
SOURCE = "CUDA driver"


class DriverUnavailable(Exception):
    """The driver library cannot be loaded; ``str()`` says so in words."""


class DriverError(RuntimeError):
    """A driver call returned an error: ``code`` is its ``CUresult``, ``str()`` names the call."""

    def __init__(self, call: str, code: int, name: str) -> None:
        self.call, self.code, self.name = call, code, name
        super().__init__(f"{call} failed: {name}")


_loaded: list[Any] = []


def load_library() -> Any:
    """The CUDA driver library (``ctypes.CDLL``), or ``DriverUnavailable`` saying why not.

    Loaded once per process: the same object each time, so a ``cuInit`` still stuck from an
    earlier discovery is recognised by the deadline (``deadline.call_with_deadline``'s key)
    instead of being asked again behind it."""
    if _loaded:
        return _loaded[0]
    for name in LIBRARY_NAMES:
        try:
            _loaded.append(ctypes.CDLL(name))
            return _loaded[0]
        except OSError:
            continue
    raise DriverUnavailable(
        f"the CUDA driver library ({LIBRARY_NAMES[0]}) cannot be loaded: no NVIDIA driver is installed."
    )


def library_loadable() -> bool:
    """Whether the CUDA driver library can be loaded (no driver call is made)."""
    try:
        load_library()
    except DriverUnavailable:
        return False
    return True


class CudaDriver:
    """The driver API calls device listing needs, each checked: a failure is a ``DriverError``."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib

    def _call(self, name: str, *args: Any) -> None:
        fn = getattr(self.lib, name, None)
        if fn is None:
            raise DriverError(name, -1, "this driver has no such function")
        code = int(fn(*args))
        if code != CUDA_SUCCESS:
            raise DriverError(name, code, self.error_name(code))

    def error_name(self, code: int) -> str:
        """``CUDA_ERROR_NO_DEVICE`` and the like, from the driver itself where it can say."""
        text = ctypes.c_char_p()
        fn = getattr(self.lib, "cuGetErrorName", None)
        try:
            if fn is not None and int(fn(code, ctypes.pointer(text))) == CUDA_SUCCESS and text.value:
                return text.value.decode(errors="replace")
        except Exception:  # the code alone still names the error
            pass
        return f"CUresult {code}"

    def init(self) -> None:
        self._call("cuInit", 0)

    def version(self) -> int:
        """The CUDA version this driver supports, as cuda.h encodes it (12040 is 12.4)."""
        out = ctypes.c_int()
        self._call("cuDriverGetVersion", ctypes.pointer(out))
        return out.value

    def device_count(self) -> int:
        out = ctypes.c_int()
        self._call("cuDeviceGetCount", ctypes.pointer(out))
        return out.value

    def device(self, ordinal: int) -> int:
        out = ctypes.c_int()
        self._call("cuDeviceGet", ctypes.pointer(out), ordinal)
        return out.value

    def name(self, device: int) -> str:
        buf = ctypes.create_string_buffer(256)
        self._call("cuDeviceGetName", buf, len(buf), device)
        return buf.value.decode(errors="replace")

    def attribute(self, name: str, device: int) -> int | None:
        """The attribute's value, or ``None`` where this driver does not know it (older drivers)."""
        out = ctypes.c_int()
        try:
            self._call("cuDeviceGetAttribute", ctypes.pointer(out), ATTRIBUTE_CODES[name], device)
        except DriverError as exc:
            if exc.code == CUDA_ERROR_INVALID_VALUE:
                return None
            raise
        return out.value

    def total_memory(self, device: int) -> int:
        out = ctypes.c_size_t()
        self._call("cuDeviceTotalMem_v2", ctypes.pointer(out), device)
        return out.value

    def uuid(self, device: int) -> str | None:
        """'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' as NVML and nvidia-smi write it."""
        raw = (ctypes.c_ubyte * 16)()
        for call in ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"):
            try:
                self._call(call, ctypes.pointer(raw), device)
            except DriverError:
                continue
            h = bytes(raw).hex()
            return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return None


def device_attributes(driver: CudaDriver, ordinal: int) -> dict[str, int | None]:
    """Every attribute of ``ATTRIBUTE_CODES`` for CUDA device ``ordinal`` (None where unknown)."""
    device = driver.device(ordinal)
    return {name: driver.attribute(name, device) for name in ATTRIBUTE_CODES}


def set_theoretical_bandwidth(dev: CudaGpu) -> None:
    """The DRAM bandwidth CUDA's memory clock and bus width imply, labelled as such."""
    if dev.memory_bus_width_bits and dev.clock_memory_max_mhz:
        # CUDA reports the memory clock such that bytes/s = 2 x clock x bus width / 8 (double data rate).
        dev.memory_bandwidth_gbps = round(
            2 * dev.clock_memory_max_mhz * 1e6 * dev.memory_bus_width_bits / 8 / 1e9, 1
        )
        dev.memory_bandwidth_basis = "theoretical, from memory clock and bus width"
        dev.notes.append(
            "Memory bandwidth is the theoretical peak from CUDA's memory clock and bus width "
            "(2 x clock x width / 8), not a measurement."
        )


def _gpu(driver: CudaDriver, ordinal: int, version: str | None) -> CudaGpu:
    device = driver.device(ordinal)
    attrs = {name: driver.attribute(name, device) for name in ATTRIBUTE_CODES}
    dev = CudaGpu(
        name=driver.name(device), index=ordinal, key=f"cuda:{ordinal}", vendor="NVIDIA", source=SOURCE
    )
    major, minor = attrs["COMPUTE_CAPABILITY_MAJOR"], attrs["COMPUTE_CAPABILITY_MINOR"]
    if major is not None and minor is not None:
        dev.compute_capability = (major, minor)
    dev.sm_count = attrs["MULTIPROCESSOR_COUNT"]
    dev.memory_total_bytes = driver.total_memory(device)
    dev.uuid = driver.uuid(device)
    if attrs["PCI_BUS_ID"] is not None:
        domain, slot = attrs["PCI_DOMAIN_ID"] or 0, attrs["PCI_DEVICE_ID"] or 0
        dev.pci_bus_id = f"{domain:04x}:{attrs['PCI_BUS_ID']:02x}:{slot:02x}.0"
    dev.memory_bus_width_bits = attrs["GLOBAL_MEMORY_BUS_WIDTH"] or None
    mem_khz, sm_khz = attrs["MEMORY_CLOCK_RATE"], attrs["CLOCK_RATE"]
    dev.clock_memory_max_mhz = mem_khz // 1000 if mem_khz else None
    dev.clock_sm_max_mhz = sm_khz // 1000 if sm_khz else None
    dev.cuda_driver_version = version
    limits = CudaLimits(**{field: attrs[attr] for field, attr in LIMIT_ATTRIBUTES.items()})  # type: ignore[arg-type]
    block = (attrs["MAX_BLOCK_DIM_X"], attrs["MAX_BLOCK_DIM_Y"], attrs["MAX_BLOCK_DIM_Z"])
    grid = (attrs["MAX_GRID_DIM_X"], attrs["MAX_GRID_DIM_Y"], attrs["MAX_GRID_DIM_Z"])
    limits.max_block_dim = block if None not in block else None  # type: ignore[assignment]
    limits.max_grid_dim = grid if None not in grid else None  # type: ignore[assignment]
    dev.limits = limits
    set_theoretical_bandwidth(dev)
    return dev


def no_gpu_reason(exc: DriverError) -> str:
    """Why the driver lists no GPU, in a student's words."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if exc.code == CUDA_ERROR_NO_DEVICE:
        if visible is not None and visible.strip() in ("", "-1"):
            return f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from CUDA."
        return "The CUDA driver is installed but reports no NVIDIA GPU (CUDA_ERROR_NO_DEVICE)."
    if exc.code == CUDA_ERROR_INSUFFICIENT_DRIVER:
        return "The NVIDIA driver is too old for this CUDA driver library (CUDA_ERROR_INSUFFICIENT_DRIVER)."
    if exc.code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        return (
            "The CUDA driver library and the NVIDIA kernel module are of different versions "
            "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH): reboot, or reinstall the driver."
        )
    return f"The CUDA driver could not list GPUs: {exc}."


def probe_driver(lib: Any = None) -> tuple[list[CudaGpu], ProbeReport]:
    """The GPUs the CUDA driver sees, by CUDA ordinal (``None`` loads libcuda). Never raises."""
    if lib is None:
        try:
            lib = load_library()
        except DriverUnavailable as exc:
            text = str(exc)
            return [], ProbeReport("driver", False, f"{text[0].upper()}{text[1:]}")
    driver = CudaDriver(lib)
    try:
        driver.init()
        found = driver.device_count()
    except DriverError as exc:
        return [], ProbeReport("driver", False, no_gpu_reason(exc))
    except Exception as exc:  # a broken library is reported, never raised
        return [], ProbeReport(
            "driver", False, f"The CUDA driver could not be asked: {type(exc).__name__}: {exc}"
        )
    try:
        version: str | None = format_cuda_driver_version(driver.version())
    except DriverError:
        version = None
    devices: list[CudaGpu] = []
    problems: list[str] = []
    for i in range(found):
        try:
            devices.append(_gpu(driver, i, version))
        except Exception as exc:  # one unreadable GPU costs its row, not the list
            problems.append(f"cuda:{i}: {exc}")
    supports = f" (CUDA {version})" if version else ""
    message = f"The CUDA driver{supports} sees {count(len(devices), 'GPU')}."
    if problems:
        message += " Could not read " + "; ".join(problems) + "."
    return devices, ProbeReport("driver", bool(devices), message, len(devices))
