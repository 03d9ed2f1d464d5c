"""Stand-ins for torch and numba as the CUDA probes use them, for machines without a GPU.

torch = make_fake_torch([FakeCudaGpu(...), ...])     # a CUDA build seeing these GPUs
torch = make_fake_torch(None)                          # a CPU-only build ("2.13.0+cpu")
numba = make_fake_numba([...])  /  make_fake_numba(None)   # no CUDA driver
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any


@dataclass
class FakeCudaGpu:
    name: str
    uuid: str  # bare hex, as torch prints it (no "GPU-")
    pci_domain: int
    pci_bus: int
    pci_device: int = 0
    cc: tuple[int, int] = (7, 5)
    sm_count: int = 16
    total_memory: int = 4 * 1024**3
    max_threads_per_sm: int = 1024
    regs_per_sm: int = 65536
    smem_per_block: int = 48 * 1024
    smem_per_block_optin: int = 64 * 1024
    smem_per_sm: int = 64 * 1024
    l2_bytes: int = 1024 * 1024
    clock_khz: int = 1560000


def make_fake_torch(
    gpus: list[FakeCudaGpu] | None, *, version: str = "2.13.0+cu126", cuda: str = "12.6"
) -> Any:
    """``None`` gives a CPU-only build: ``cuda.is_available()`` False and ``version.cuda`` None."""
    torch = types.ModuleType("fake_torch")
    if gpus is None:
        torch.__version__ = "2.13.0+cpu"
        torch.version = types.SimpleNamespace(cuda=None, hip=None)
        torch.cuda = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0)
        return torch
    torch.__version__ = version
    torch.version = types.SimpleNamespace(cuda=cuda, hip=None)

    def props(i: int) -> Any:
        g = gpus[i]
        return types.SimpleNamespace(
            name=g.name,
            major=g.cc[0],
            minor=g.cc[1],
            multi_processor_count=g.sm_count,
            total_memory=g.total_memory,
            uuid=g.uuid,
            pci_bus_id=g.pci_bus,
            pci_device_id=g.pci_device,
            pci_domain_id=g.pci_domain,
            max_threads_per_multi_processor=g.max_threads_per_sm,
            regs_per_multiprocessor=g.regs_per_sm,
            shared_memory_per_block=g.smem_per_block,
            shared_memory_per_block_optin=g.smem_per_block_optin,
            shared_memory_per_multiprocessor=g.smem_per_sm,
            warp_size=32,
            L2_cache_size=g.l2_bytes,
        )

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: len(gpus), get_device_properties=props
    )
    return torch


class CudaSupportError(ImportError):
    pass


def make_fake_numba(gpus: list[FakeCudaGpu] | None) -> Any:
    """``None``: numba without a CUDA driver (is_available False; touching gpus raises numba's error)."""
    numba = types.ModuleType("fake_numba")
    numba.__version__ = "0.68.1"
    if gpus is None:

        class _NoGpus:
            def __iter__(self):
                raise CudaSupportError(
                    "Error at driver init: \n\nCUDA driver library cannot be found.\nIf you are sure that a CUDA "
                    "driver is installed,\ntry setting environment variable NUMBA_CUDA_DRIVER\n"
                )

        numba.cuda = types.SimpleNamespace(is_available=lambda: False, gpus=_NoGpus())
        return numba

    def device(i: int, g: FakeCudaGpu) -> Any:
        return types.SimpleNamespace(
            id=i,
            name=g.name.encode(),  # numba's ctypes binding gives bytes
            compute_capability=g.cc,
            uuid="GPU-" + g.uuid,
            PCI_BUS_ID=g.pci_bus,
            PCI_DEVICE_ID=g.pci_device,
            PCI_DOMAIN_ID=g.pci_domain,
            MULTIPROCESSOR_COUNT=g.sm_count,
            MAX_THREADS_PER_BLOCK=1024,
            MAX_BLOCK_DIM_X=1024,
            MAX_BLOCK_DIM_Y=1024,
            MAX_BLOCK_DIM_Z=64,
            MAX_GRID_DIM_X=2147483647,
            MAX_GRID_DIM_Y=65535,
            MAX_GRID_DIM_Z=65535,
            MAX_THREADS_PER_MULTI_PROCESSOR=g.max_threads_per_sm,
            WARP_SIZE=32,
            MAX_SHARED_MEMORY_PER_BLOCK=g.smem_per_block,
            MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=g.smem_per_block_optin,
            MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=g.smem_per_sm,
            MAX_REGISTERS_PER_BLOCK=65536,
            MAX_REGISTERS_PER_MULTIPROCESSOR=g.regs_per_sm,
            L2_CACHE_SIZE=g.l2_bytes,
            GLOBAL_MEMORY_BUS_WIDTH=128,
            MEMORY_CLOCK_RATE=4001000,  # kHz
            CLOCK_RATE=g.clock_khz,
        )

    numba.cuda = types.SimpleNamespace(
        is_available=lambda: True, gpus=[device(i, g) for i, g in enumerate(gpus)]
    )
    return numba


# The two GPUs of fake_nvml.default_gpus(), as CUDA sees them: fastest first, so the A100
# (NVML index 1, bus 0x41) is cuda:0 and the GTX 1650 (NVML index 0, bus 0x01) is cuda:1.
A100 = FakeCudaGpu(
    name="NVIDIA A100-SXM4-40GB",
    uuid="aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
    pci_domain=0,
    pci_bus=0x41,
    cc=(8, 0),
    sm_count=108,
    total_memory=40 * 1024**3,
    max_threads_per_sm=2048,
    smem_per_block_optin=163 * 1024,
    smem_per_sm=164 * 1024,
    l2_bytes=40 * 1024**2,
    clock_khz=1410000,
)
GTX1650 = FakeCudaGpu(
    name="NVIDIA GeForce GTX 1650", uuid="11111111-2222-3333-4444-555555555555", pci_domain=0, pci_bus=0x01
)
