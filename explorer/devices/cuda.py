"""NVIDIA GPUs as a CUDA program sees them: through torch and through numba.

These are the numbers the launch lessons need (compute capability, SMs, threads, warps,
shared memory, registers) and the CUDA ordinals programs use. Both libraries are passed in
(``None`` imports them lazily: they take seconds to load, so never at window start-up).

When nothing is found the report says why in words: "torch was built without CUDA (CPU-only
build 2.13.0+cpu)", "torch is not installed", "CUDA driver not found ...".
"""

from __future__ import annotations

import os
from typing import Any

from explorer.devices.cuda_driver import LIMIT_ATTRIBUTES, set_theoretical_bandwidth
from explorer.devices.discovery import ProbeReport
from explorer.devices.model import CudaGpu, CudaLimits, import_failure
from explorer.words import count


def _bus_id(domain: Any, bus: Any, device: Any) -> str | None:
    try:
        return f"{int(domain or 0):04x}:{int(bus):02x}:{int(device):02x}.0"
    except (TypeError, ValueError):
        return None


def _int_or_none(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


TORCH_MISSING = "torch is not installed, so the app cannot run GPU work through it."
NUMBA_MISSING = "numba is not installed, so CUDA kernels cannot be written in Python."
NUMBA_DRIVER_NO_GPU = "The CUDA driver is installed but reports no NVIDIA GPU."

# --------------------------------------------------------------------------- torch


def torch_no_gpu_reason(torch: Any) -> str:
    """Why ``torch.cuda.is_available()`` is False, in a student's words."""
    build = getattr(torch, "version", None)
    return _torch_reason(
        getattr(torch, "__version__", "unknown"), getattr(build, "cuda", None), getattr(build, "hip", None)
    )


def _torch_reason(version: str, built_for: str | None, hip: str | None) -> str:
    """The words of ``torch_no_gpu_reason`` from torch's version, CUDA build and HIP build."""
    if not built_for:
        if hip:
            return f"torch {version} was built for AMD ROCm (HIP {hip}), not for NVIDIA CUDA."
        return (
            f"torch was built without CUDA (CPU-only build {version}): install a CUDA build of torch "
            "to use an NVIDIA GPU from torch."
        )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU from CUDA."
    return (
        f"torch {version} was built for CUDA {built_for} but finds no usable GPU: no NVIDIA GPU, no driver, "
        f"or a driver too old for CUDA {built_for}."
    )


def installed_facts(*, driver_found: bool) -> dict[str, ProbeReport] | None:
    """What torch and numba would report on a machine where NVML and the CUDA driver see no GPU,
    read from their installed files instead of importing them (seconds, on a laptop).

    Neither can find a GPU the driver does not see, so all that is left to say is how each is
    installed: torch's version and the CUDA (or HIP) it was built for, from ``torch/version.py``
    (parsed, never run), and whether numba is there; ``driver_found`` is whether the CUDA driver
    library loaded (then it reports no GPU). ``None`` when torch's version file cannot be read,
    so the caller imports them after all.
    """
    import importlib.util

    reports: dict[str, ProbeReport] = {}
    torch_spec = importlib.util.find_spec("torch")
    if torch_spec is None:
        reports["torch"] = ProbeReport("torch", False, TORCH_MISSING)
    else:
        facts = _version_file_constants(torch_spec.submodule_search_locations)
        version = facts.get("__version__")
        if not isinstance(version, str):
            return None
        cuda, hip = facts.get("cuda"), facts.get("hip")
        reports["torch"] = ProbeReport(
            "torch",
            False,
            _torch_reason(
                version, cuda if isinstance(cuda, str) else None, hip if isinstance(hip, str) else None
            ),
        )
    simulator = numba_simulator_report()
    if simulator is not None:
        reports["numba"] = simulator
    elif importlib.util.find_spec("numba") is None:
        reports["numba"] = ProbeReport("numba", False, NUMBA_MISSING)
    elif driver_found:
        reports["numba"] = ProbeReport("numba", False, NUMBA_DRIVER_NO_GPU)
    else:
        reports["numba"] = ProbeReport(
            "numba",
            False,
            "numba cannot reach a GPU without the CUDA driver (libcuda): no NVIDIA driver is installed.",
        )
    return reports


def _version_file_constants(locations: Any) -> dict[str, object]:
    """The constants ``torch/version.py`` assigns (``__version__ = '2.13.0+cpu'``, ``cuda = None``),
    read with ``ast``: the file is parsed, not executed. Empty when it cannot be read."""
    import ast

    for folder in list(locations or []):
        try:
            with open(os.path.join(folder, "version.py"), encoding="utf-8") as fh:
                tree = ast.parse(fh.read(65536))
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            continue
        found: dict[str, object] = {}
        for node in tree.body:
            target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(target, ast.Name) and value is not None:
                try:
                    found[target.id] = ast.literal_eval(value)
                except ValueError:
                    continue
        return found
    return {}


def _device_from_torch_props(torch: Any, index: int) -> CudaGpu:
    props = torch.cuda.get_device_properties(index)
    dev = CudaGpu(
        name=str(props.name),
        index=index,
        key=f"cuda:{index}",
        vendor="NVIDIA",
        source="torch.cuda",
    )
    dev.compute_capability = (int(props.major), int(props.minor))
    dev.sm_count = _int_or_none(getattr(props, "multi_processor_count", None))
    dev.memory_total_bytes = _int_or_none(getattr(props, "total_memory", None))
    uuid = getattr(props, "uuid", None)
    dev.uuid = str(uuid) if uuid is not None else None
    if getattr(props, "pci_bus_id", None) is not None:
        dev.pci_bus_id = _bus_id(
            getattr(props, "pci_domain_id", 0), props.pci_bus_id, getattr(props, "pci_device_id", 0)
        )
    bus_width = _int_or_none(getattr(props, "memory_bus_width", None))
    if bus_width:
        dev.memory_bus_width_bits = bus_width
    mem_clock_khz = _int_or_none(getattr(props, "memory_clock_rate", None))
    if mem_clock_khz:
        dev.clock_memory_max_mhz = mem_clock_khz // 1000
    sm_clock_khz = _int_or_none(getattr(props, "clock_rate", None))
    if sm_clock_khz:
        dev.clock_sm_max_mhz = sm_clock_khz // 1000
    limits = CudaLimits(
        max_threads_per_sm=_int_or_none(getattr(props, "max_threads_per_multi_processor", None)),
        warp_size=_int_or_none(getattr(props, "warp_size", None)),
        max_smem_per_block_bytes=_int_or_none(getattr(props, "shared_memory_per_block", None)),
        max_smem_per_block_optin_bytes=_int_or_none(getattr(props, "shared_memory_per_block_optin", None)),
        smem_per_sm_bytes=_int_or_none(getattr(props, "shared_memory_per_multiprocessor", None)),
        regs_per_sm=_int_or_none(getattr(props, "regs_per_multiprocessor", None)),
        l2_cache_bytes=_int_or_none(getattr(props, "L2_cache_size", None)),
    )
    dev.limits = limits
    return dev


def import_torch() -> tuple[Any, ProbeReport | None]:
    """The torch module, or ``None`` and a report saying why it cannot be had.

    Importing takes seconds but never talks to the driver, so discovery does it before the
    deadline on the driver calls starts.
    """
    try:
        import torch
    except ImportError:
        return None, ProbeReport("torch", False, TORCH_MISSING)
    except (Exception, SystemExit) as exc:  # a broken install (missing shared library, sys.exit ...)
        return None, ProbeReport("torch", False, import_failure("torch", exc) + ".")
    return torch, None


def probe_torch(torch: Any = None) -> tuple[list[CudaGpu], ProbeReport]:
    """The GPUs torch can use, by CUDA ordinal (``None`` imports torch). Never raises."""
    if torch is None:
        torch, report = import_torch()
        if report is not None:
            return [], report
    try:
        available = bool(torch.cuda.is_available())
    except Exception as exc:
        return [], ProbeReport("torch", False, f"torch could not query CUDA: {exc}")
    if not available:
        return [], ProbeReport("torch", False, torch_no_gpu_reason(torch))
    devices: list[CudaGpu] = []
    problems: list[str] = []
    try:
        found = int(torch.cuda.device_count())
    except Exception as exc:
        return [], ProbeReport("torch", False, f"torch could not count CUDA devices: {exc}")
    for i in range(found):
        try:
            devices.append(_device_from_torch_props(torch, i))
        except Exception as exc:
            problems.append(f"cuda:{i}: {exc}")
    built_for = getattr(getattr(torch, "version", None), "cuda", None)
    message = (
        f"torch {getattr(torch, '__version__', '?')} (CUDA {built_for}) sees {count(len(devices), 'GPU')}."
    )
    if problems:
        message += " Could not read " + "; ".join(problems) + "."
    return devices, ProbeReport("torch", bool(devices), message, len(devices))


# --------------------------------------------------------------------------- numba

#: numba names one attribute its own way; the rest are the driver's (``cuda_driver``)
_NUMBA_LIMITS = {
    field: name.replace("MAX_THREADS_PER_MULTIPROCESSOR", "MAX_THREADS_PER_MULTI_PROCESSOR")
    for field, name in LIMIT_ATTRIBUTES.items()
}


def numba_no_gpu_reason(exc: BaseException | None) -> str:
    text = " ".join(str(exc).split()) if exc is not None else ""
    low = text.lower()
    if "cannot be found" in low or "libcuda" in low or "driver library" in low:
        return "CUDA driver not found (numba could not load libcuda): no NVIDIA driver is installed."
    if "no cuda gpus" in low or "no device" in low or "cuda_error_no_device" in low:
        return NUMBA_DRIVER_NO_GPU
    if "insufficient" in low and "driver" in low:
        return "The NVIDIA driver is too old for this numba/CUDA version: update the driver."
    if text:
        return f"numba found no usable CUDA GPU: {text}"
    return "numba found no usable CUDA GPU."


def _device_from_numba(gpu: Any, index: int) -> CudaGpu:
    def attr(name: str) -> int | None:
        try:
            return _int_or_none(getattr(gpu, name))
        except Exception:
            return None

    name = getattr(gpu, "name", f"CUDA device {index}")
    name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
    dev = CudaGpu(name=name, index=index, key=f"cuda:{index}", vendor="NVIDIA", source="numba.cuda")
    cc = getattr(gpu, "compute_capability", None)
    if cc:
        dev.compute_capability = (int(cc[0]), int(cc[1]))
    uuid = getattr(gpu, "uuid", None)
    dev.uuid = str(uuid) if uuid else None
    bus = attr("PCI_BUS_ID")
    if bus is not None:
        dev.pci_bus_id = _bus_id(attr("PCI_DOMAIN_ID"), bus, attr("PCI_DEVICE_ID"))
    dev.sm_count = attr("MULTIPROCESSOR_COUNT")
    dev.memory_bus_width_bits = attr("GLOBAL_MEMORY_BUS_WIDTH")
    mem_khz = attr("MEMORY_CLOCK_RATE")
    dev.clock_memory_max_mhz = mem_khz // 1000 if mem_khz else None
    sm_khz = attr("CLOCK_RATE")
    dev.clock_sm_max_mhz = sm_khz // 1000 if sm_khz else None
    limits = CudaLimits(**{k: attr(v) for k, v in _NUMBA_LIMITS.items()})  # type: ignore[arg-type]
    block = (attr("MAX_BLOCK_DIM_X"), attr("MAX_BLOCK_DIM_Y"), attr("MAX_BLOCK_DIM_Z"))
    grid = (attr("MAX_GRID_DIM_X"), attr("MAX_GRID_DIM_Y"), attr("MAX_GRID_DIM_Z"))
    limits.max_block_dim = block if None not in block else None  # type: ignore[assignment]
    limits.max_grid_dim = grid if None not in grid else None  # type: ignore[assignment]
    dev.limits = limits
    set_theoretical_bandwidth(dev)
    return dev


def numba_simulator_report() -> ProbeReport | None:
    """With numba's CUDA simulator on, no GPU is probed through numba: this says so."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        return None
    return ProbeReport(
        "numba",
        False,
        "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1): kernels run on the CPU, no GPU is probed.",
    )


def import_numba() -> tuple[Any, ProbeReport | None]:
    """The numba module with ``numba.cuda`` loaded, or ``None`` and a report saying why not."""
    simulator = numba_simulator_report()
    if simulator is not None:
        return None, simulator
    try:
        import explorer.numbacuda  # noqa: F401  (numba.cuda, with the numpy names it expects)
    except ImportError:
        return None, ProbeReport("numba", False, NUMBA_MISSING)
    except (Exception, SystemExit) as exc:
        return None, ProbeReport("numba", False, import_failure("numba", exc) + ".")
    import numba as numba_module

    return numba_module, None


def probe_numba(numba: Any = None) -> tuple[list[CudaGpu], ProbeReport]:
    """The GPUs numba.cuda sees, read from device attributes without creating a context."""
    if numba is None:
        numba, report = import_numba()
        if report is not None:
            return [], report
    cuda = numba.cuda
    try:
        available = bool(cuda.is_available())
    except Exception as exc:
        return [], ProbeReport("numba", False, numba_no_gpu_reason(exc))
    if not available:
        try:
            _ = list(cuda.gpus)  # raises the driver's own explanation
            reason: BaseException | None = None
        except Exception as exc:
            reason = exc
        return [], ProbeReport("numba", False, numba_no_gpu_reason(reason))
    devices: list[CudaGpu] = []
    problems: list[str] = []
    try:
        gpus = list(cuda.gpus)
    except Exception as exc:
        return [], ProbeReport("numba", False, numba_no_gpu_reason(exc))
    for i, gpu in enumerate(gpus):
        try:
            devices.append(_device_from_numba(gpu, i))
        except Exception as exc:
            problems.append(f"cuda:{i}: {exc}")
    message = f"numba {getattr(numba, '__version__', '?')} sees {count(len(devices), 'GPU')}."
    if problems:
        message += " Could not read " + "; ".join(problems) + "."
    return devices, ProbeReport("numba", bool(devices), message, len(devices))
