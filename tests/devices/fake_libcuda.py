"""A stand-in for ``libcuda.so.1`` as ``ctypes.CDLL`` gives it, for tests on machines without a GPU.

Each function takes what the real one takes through ctypes (a ``ctypes.pointer`` to write the
answer into, a string buffer for the name, plain ints for ordinals and attribute codes) and
returns a ``CUresult`` int, as cuda.h defines them. So code tested against it makes the very
calls it makes against the real driver:

    lib = make_fake_libcuda([A100, GTX1650])          # the GPUs of fake_cuda, CUDA's order
    lib = make_fake_libcuda([])                       # a driver that sees no GPU (CUDA_ERROR_NO_DEVICE)
    lib = make_fake_libcuda([A100], init_error=803)   # cuInit fails with this CUresult
    lib.missing_attributes.add(106)                   # an older driver: CUDA_ERROR_INVALID_VALUE
    lib.calls                                         # names of the functions called, in order

Like the real driver, every call but ``cuInit``, ``cuDriverGetVersion`` and ``cuGetErrorName``
answers ``CUDA_ERROR_NOT_INITIALIZED`` before ``cuInit``, and ``CUDA_VISIBLE_DEVICES`` (ordinals
or UUID prefixes) decides which GPUs it shows and in which order.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

from tests.devices.fake_cuda import FakeCudaGpu

ERROR_NAMES = {
    1: "CUDA_ERROR_INVALID_VALUE",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
}


def attributes_of(g: FakeCudaGpu) -> dict[int, int]:
    """The device attributes of ``g`` by ``CU_DEVICE_ATTRIBUTE_*`` code (cuda.h numbering)."""
    return {
        1: 1024,  # MAX_THREADS_PER_BLOCK
        2: 1024,
        3: 1024,
        4: 64,  # MAX_BLOCK_DIM_X/Y/Z
        5: 2147483647,
        6: 65535,
        7: 65535,  # MAX_GRID_DIM_X/Y/Z
        8: g.smem_per_block,
        10: 32,  # WARP_SIZE
        12: 65536,  # MAX_REGISTERS_PER_BLOCK
        13: g.clock_khz,
        16: g.sm_count,
        33: g.pci_bus,
        34: g.pci_device,
        36: 4001000,  # MEMORY_CLOCK_RATE, kHz
        37: 128,  # GLOBAL_MEMORY_BUS_WIDTH
        38: g.l2_bytes,
        39: g.max_threads_per_sm,
        50: g.pci_domain,
        75: g.cc[0],
        76: g.cc[1],
        81: g.smem_per_sm,
        82: g.regs_per_sm,
        97: g.smem_per_block_optin,
        106: 32 if g.cc >= (8, 0) else 16,  # MAX_BLOCKS_PER_MULTIPROCESSOR
        111: 1024 if g.cc >= (8, 0) else 0,  # RESERVED_SHARED_MEMORY_PER_BLOCK
    }


class FakeLibCuda:
    """The driver API functions the device probe calls, answering for ``gpus``."""

    def __init__(
        self, gpus: list[FakeCudaGpu], *, init_error: int = 0, version: int = 12040, hang_s: float = 0.0
    ) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.version = version
        self.hang_s = hang_s
        self.initialised = False
        self.missing_attributes: set[int] = set()
        self.calls: list[str] = []

    def _visible(self) -> list[FakeCudaGpu]:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is None:
            return list(self.gpus)
        shown: list[FakeCudaGpu] = []
        for item in (p.strip() for p in visible.split(",")):
            if item.isdigit() and int(item) < len(self.gpus):
                shown.append(self.gpus[int(item)])
            elif item.lower().startswith("gpu-"):
                match = [g for g in self.gpus if g.uuid.startswith(item[4:].lower())]
                if len(match) != 1:
                    break
                shown.append(match[0])
            else:
                break  # the driver stops at the first entry it cannot use
        return shown

    def _ready(self, name: str) -> int:
        self.calls.append(name)
        return 0 if self.initialised else 3

    def cuInit(self, flags: int) -> int:
        self.calls.append("cuInit")
        if self.hang_s:
            time.sleep(self.hang_s)
        if self.init_error:
            return self.init_error
        if not self._visible():
            return 100
        self.initialised = True
        return 0

    def cuDriverGetVersion(self, out: Any) -> int:
        self.calls.append("cuDriverGetVersion")
        out.contents.value = self.version
        return 0

    def cuGetErrorName(self, code: int, out: Any) -> int:
        if code not in ERROR_NAMES:
            return 1
        out.contents.value = ERROR_NAMES[code].encode()
        return 0

    def cuDeviceGetCount(self, out: Any) -> int:
        rc = self._ready("cuDeviceGetCount")
        if rc == 0:
            out.contents.value = len(self._visible())
        return rc

    def _gpu(self, device: int) -> FakeCudaGpu | None:
        shown = self._visible()
        return shown[device] if 0 <= device < len(shown) else None

    def cuDeviceGet(self, out: Any, ordinal: int) -> int:
        rc = self._ready("cuDeviceGet")
        if rc:
            return rc
        if self._gpu(ordinal) is None:
            return 101
        out.contents.value = ordinal
        return 0

    def cuDeviceGetName(self, buf: Any, size: int, device: int) -> int:
        rc = self._ready("cuDeviceGetName")
        g = self._gpu(device)
        if rc or g is None:
            return rc or 101
        buf.value = g.name.encode()[: size - 1]
        return 0

    def cuDeviceGetAttribute(self, out: Any, code: int, device: int) -> int:
        rc = self._ready("cuDeviceGetAttribute")
        g = self._gpu(device)
        if rc or g is None:
            return rc or 101
        attrs = attributes_of(g)
        if code in self.missing_attributes or code not in attrs:
            return 1
        out.contents.value = attrs[code]
        return 0

    def cuDeviceTotalMem_v2(self, out: Any, device: int) -> int:
        rc = self._ready("cuDeviceTotalMem_v2")
        g = self._gpu(device)
        if rc or g is None:
            return rc or 101
        out.contents.value = g.total_memory
        return 0

    def cuDeviceGetUuid_v2(self, out: Any, device: int) -> int:
        rc = self._ready("cuDeviceGetUuid_v2")
        g = self._gpu(device)
        if rc or g is None:
            return rc or 101
        raw = bytes.fromhex(g.uuid.replace("-", ""))
        ctypes.memmove(out, raw, 16)
        return 0


def make_fake_libcuda(gpus: list[FakeCudaGpu], **kwargs: Any) -> FakeLibCuda:
    return FakeLibCuda(gpus, **kwargs)
