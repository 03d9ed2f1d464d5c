"""A stand-in for the ``pynvml`` module (nvidia-ml-py), for tests on machines without a GPU.

It has the real module's names and return shapes (structs with ``.total/.used/.free``,
``.gpu/.memory``, ``.busId``; power in milliwatts; ``NVMLError`` subclasses chosen by error
code, as pynvml does), so code tested against it runs unchanged against the real one.

    fake = make_fake_nvml()                 # two GPUs; the second has no temperature sensor
    fake = make_fake_nvml([FakeGpu(...)])   # your own GPUs
    fake = make_fake_nvml(init_error="library_not_found")   # no driver installed
    fake.gpus[0].temperature_c = 71         # sensors are plain attributes: change them between reads
    fake.gpus[1].fail["nvmlDeviceGetPowerUsage"] = "not_supported"   # make any query fail
    fake.calls                              # names of the NVML functions called, in order
    make_fake_nvml([hopper_gpu()])          # an H100 with GPM: SM activity and occupancy
    fake.gpm_samples_held                   # GPM samples allocated and not yet freed

GPM (``nvmlGpmSampleGet`` / ``nvmlGpmMetricsGet``) behaves as the real library does where it
matters to a reader: a metric compares two samples of the same GPU taken in order, and answers
with the GPU's ``sm_activity_pct`` / ``sm_occupancy_pct`` as they were when the second sample
was taken (the stand-in for "averaged over the interval"); two samples out of order, of two
GPUs, or never taken are ``NVMLError_InvalidArgument``; a GPU without ``gpm_supported`` says so
in ``nvmlGpmQueryDeviceSupport`` and ``NotSupported`` in ``nvmlGpmSampleGet``.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

# Error codes as in nvml.h / pynvml.
_ERRORS = {
    "uninitialized": (1, "NVMLError_Uninitialized", "Uninitialized"),
    "invalid_argument": (2, "NVMLError_InvalidArgument", "Invalid Argument"),
    "not_supported": (3, "NVMLError_NotSupported", "Not Supported"),
    "no_permission": (4, "NVMLError_NoPermission", "Insufficient Permissions"),
    "not_found": (6, "NVMLError_NotFound", "Not Found"),
    "driver_not_loaded": (9, "NVMLError_DriverNotLoaded", "Driver Not Loaded"),
    "library_not_found": (12, "NVMLError_LibraryNotFound", "NVML Shared Library Not Found"),
    "function_not_found": (13, "NVMLError_FunctionNotFound", "Function Not Found"),
    "gpu_is_lost": (15, "NVMLError_GpuIsLost", "GPU is lost"),
    "lib_rm_version_mismatch": (
        18,
        "NVMLError_LibRmVersionMismatch",
        "RM has detected an NVML/RM version mismatch.",
    ),
    "unknown": (999, "NVMLError_Unknown", "Unknown Error"),
}


class NVMLError(Exception):
    """Like pynvml's: ``NVMLError(code)`` builds the subclass for that code; ``.value`` is the code."""

    _value_class: dict[int, type] = {}
    _strings: dict[int, str] = {}

    def __new__(cls, value: int = 999):
        if cls is NVMLError:
            cls = NVMLError._value_class.get(value, cls)
        obj = Exception.__new__(cls)
        obj.value = value
        return obj

    def __init__(self, value: int = 999) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return NVMLError._strings.get(self.value, f"NVML Error with code {self.value}")


_ERROR_CLASSES: dict[str, type] = {}
for _key, (_code, _cls_name, _text) in _ERRORS.items():
    _cls = type(_cls_name, (NVMLError,), {})
    NVMLError._value_class[_code] = _cls
    NVMLError._strings[_code] = _text
    _ERROR_CLASSES[_key] = _cls


def nvml_error(kind: str) -> NVMLError:
    """An instance of the pynvml error for ``kind`` ("not_supported", "library_not_found", ...)."""
    return NVMLError(_ERRORS[kind][0])


@dataclass
class FakeProcess:
    pid: int
    name: str
    used_memory_bytes: int | None


@dataclass
class FakeGpu:
    """One GPU as the fake NVML reports it. Units as in the app: bytes, MHz, degrees C, watts."""

    name: str = "NVIDIA GeForce GTX 1650"
    uuid: str = "GPU-11111111-2222-3333-4444-555555555555"
    bus_id: str = "00000000:01:00.0"
    compute_capability: tuple[int, int] = (7, 5)
    memory_total_bytes: int = 4 * 1024**3
    memory_used_bytes: int = 512 * 1024**2
    memory_bus_width_bits: int = 128
    clock_sm_mhz: int = 300
    clock_sm_max_mhz: int = 2100
    clock_memory_mhz: int = 405
    clock_memory_max_mhz: int = 4001
    utilization_gpu_pct: int = 3
    utilization_memory_pct: int = 1
    temperature_c: int = 45
    power_draw_w: float = 8.5
    power_limit_w: float = 50.0
    pcie_generation: int = 1
    pcie_width: int = 16
    pcie_generation_max: int = 3
    pcie_width_max: int = 16
    pcie_rx_kib_s: int = 120  # nvmlDeviceGetPcieThroughput's "KB/s", host -> GPU
    pcie_tx_kib_s: int = 40  # GPU -> host
    gpm_supported: bool = False  # NVML GPM metrics (Hopper and newer)
    sm_activity_pct: float = 0.0  # what GPM reports while it is supported
    sm_occupancy_pct: float = 0.0
    mig_mode: tuple[int, int] | None = None  # None: the GPU has no MIG (NotSupported)
    mig_uuids: list[str] = field(default_factory=list)
    processes: list[FakeProcess] = field(default_factory=list)
    #: NVML function name -> error kind it raises for this GPU
    fail: dict[str, str] = field(default_factory=dict)


def default_gpus() -> list[FakeGpu]:
    """Two GPUs: a GTX 1650 running one process, and an A100 whose temperature query is not supported."""
    return [
        FakeGpu(processes=[FakeProcess(4242, "python", 300 * 1024**2)]),
        FakeGpu(
            name="NVIDIA A100-SXM4-40GB",
            uuid="GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
            bus_id="00000000:41:00.0",
            compute_capability=(8, 0),
            memory_total_bytes=40 * 1024**3,
            memory_used_bytes=1024**3,
            memory_bus_width_bits=5120,
            clock_sm_mhz=1410,
            clock_sm_max_mhz=1410,
            clock_memory_mhz=1215,
            clock_memory_max_mhz=1215,
            utilization_gpu_pct=97,
            utilization_memory_pct=40,
            power_draw_w=250.0,
            power_limit_w=400.0,
            pcie_generation=4,
            pcie_width=16,
            pcie_generation_max=4,
            pcie_width_max=16,
            mig_mode=(0, 0),
            fail={"nvmlDeviceGetTemperature": "not_supported"},
        ),
    ]


def hopper_gpu() -> FakeGpu:
    """An H100 SXM as NVML sees it, GPM supported, running one small kernel: "utilization" 100%
    while one SM of 132 is busy."""
    return FakeGpu(
        name="NVIDIA H100 80GB HBM3",
        uuid="GPU-99999999-8888-7777-6666-555555555555",
        bus_id="00000000:19:00.0",
        compute_capability=(9, 0),
        memory_total_bytes=80 * 1024**3,
        memory_used_bytes=2 * 1024**3,
        memory_bus_width_bits=5120,
        clock_sm_mhz=1980,
        clock_sm_max_mhz=1980,
        clock_memory_mhz=2619,
        clock_memory_max_mhz=2619,
        utilization_gpu_pct=100,
        utilization_memory_pct=0,
        temperature_c=41,
        power_draw_w=120.0,
        power_limit_w=700.0,
        pcie_generation=5,
        pcie_width=16,
        pcie_generation_max=5,
        pcie_width_max=16,
        pcie_rx_kib_s=48_000_000,
        pcie_tx_kib_s=2_000,
        gpm_supported=True,
        sm_activity_pct=0.76,
        sm_occupancy_pct=0.05,
        mig_mode=(0, 0),
    )


class _GpmSample:
    """An allocated GPM sample: empty until ``nvmlGpmSampleGet`` fills it."""

    def __init__(self) -> None:
        self.gpu: int | None = None
        self.order = 0
        self.values: dict[int, float] = {}
        self.freed = False


class _Handle:
    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"<fake nvmlDevice {self.index}>"


def make_fake_nvml(
    gpus: list[FakeGpu] | None = None,
    *,
    init_error: str | None = None,
    driver_version: str = "550.54.14",
    cuda_driver_version: int = 12040,
    process_names_visible: bool = True,
) -> Any:
    """Build a fresh module object that behaves like ``pynvml`` for ``gpus``.

    ``init_error`` makes ``nvmlInit`` raise that error kind ("library_not_found",
    "driver_not_loaded", "lib_rm_version_mismatch", "no_permission"). Calls before ``nvmlInit``
    or after ``nvmlShutdown`` raise ``NVMLError_Uninitialized``, as the real library does.
    """
    mod = types.ModuleType("fake_pynvml")
    mod.gpus = default_gpus() if gpus is None else gpus
    mod.calls = []
    mod.initialized = 0
    mod.NVMLError = NVMLError
    for kind, (code, cls_name, _) in _ERRORS.items():
        setattr(mod, cls_name, _ERROR_CLASSES[kind])
        setattr(mod, f"NVML_ERROR_{kind.upper()}", code)
    mod.NVML_CLOCK_GRAPHICS, mod.NVML_CLOCK_SM, mod.NVML_CLOCK_MEM, mod.NVML_CLOCK_VIDEO = 0, 1, 2, 3
    mod.NVML_TEMPERATURE_GPU = 0
    mod.NVML_DEVICE_MIG_DISABLE, mod.NVML_DEVICE_MIG_ENABLE = 0, 1
    mod.NVML_SUCCESS = 0
    mod.NVML_PCIE_UTIL_TX_BYTES, mod.NVML_PCIE_UTIL_RX_BYTES = 0, 1
    mod.NVML_GPM_METRIC_SM_UTIL, mod.NVML_GPM_METRIC_SM_OCCUPANCY = 2, 3
    mod.NVML_GPM_METRIC_PCIE_TX_PER_SEC, mod.NVML_GPM_METRIC_PCIE_RX_PER_SEC = 20, 21
    mod.NVML_GPM_METRICS_GET_VERSION = 1
    mod.NVML_GPM_METRIC_MAX = 477
    mod.gpm_samples_held = 0
    mod.gpm_order = 0

    class c_nvmlGpmMetricsGet_t:
        def __init__(self) -> None:
            self.version = 0
            self.numMetrics = 0
            self.sample1: _GpmSample | None = None
            self.sample2: _GpmSample | None = None
            self.metrics = [
                types.SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0)
                for _ in range(mod.NVML_GPM_METRIC_MAX)
            ]

    mod.c_nvmlGpmMetricsGet_t = c_nvmlGpmMetricsGet_t

    def api(fn):
        name = fn.__name__

        def wrapper(*args):
            mod.calls.append(name)
            if name not in ("nvmlInit", "nvmlShutdown") and mod.initialized <= 0:
                raise nvml_error("uninitialized")
            if args and isinstance(args[0], _Handle):
                gpu = _gpu(args[0])
                if name in gpu.fail:
                    raise nvml_error(gpu.fail[name])
            return fn(*args)

        wrapper.__name__ = name
        setattr(mod, name, wrapper)
        return wrapper

    def _gpu(handle: _Handle) -> FakeGpu:
        if handle.index >= len(mod.gpus):
            raise nvml_error("gpu_is_lost")
        return mod.gpus[handle.index]

    @api
    def nvmlInit():
        if init_error:
            raise nvml_error(init_error)
        mod.initialized += 1

    @api
    def nvmlShutdown():
        if mod.initialized <= 0:
            raise nvml_error("uninitialized")
        mod.initialized -= 1

    @api
    def nvmlSystemGetDriverVersion():
        return driver_version

    @api
    def nvmlSystemGetCudaDriverVersion():
        return cuda_driver_version

    @api
    def nvmlSystemGetProcessName(pid):
        if not process_names_visible:
            raise nvml_error("no_permission")
        for gpu in mod.gpus:
            for p in gpu.processes:
                if p.pid == pid:
                    return f"/usr/bin/{p.name}"
        raise nvml_error("not_found")

    @api
    def nvmlDeviceGetCount():
        return len(mod.gpus)

    @api
    def nvmlDeviceGetHandleByIndex(index):
        if not 0 <= index < len(mod.gpus):
            raise nvml_error("invalid_argument")
        return _Handle(index)

    @api
    def nvmlDeviceGetName(h):
        return _gpu(h).name

    @api
    def nvmlDeviceGetUUID(h):
        if isinstance(h, _MigHandle):
            return h.uuid
        return _gpu(h).uuid

    @api
    def nvmlDeviceGetPciInfo(h):
        g = _gpu(h)
        domain, bus, rest = g.bus_id.split(":")
        return types.SimpleNamespace(
            busId=g.bus_id,
            busIdLegacy=g.bus_id[4:],
            domain=int(domain, 16),
            bus=int(bus, 16),
            device=int(rest.split(".")[0], 16),
        )

    @api
    def nvmlDeviceGetCudaComputeCapability(h):
        return tuple(_gpu(h).compute_capability)

    @api
    def nvmlDeviceGetMemoryInfo(h):
        g = _gpu(h)
        return types.SimpleNamespace(
            total=g.memory_total_bytes,
            used=g.memory_used_bytes,
            free=g.memory_total_bytes - g.memory_used_bytes,
        )

    @api
    def nvmlDeviceGetMemoryBusWidth(h):
        return _gpu(h).memory_bus_width_bits

    @api
    def nvmlDeviceGetClockInfo(h, clock_type):
        g = _gpu(h)
        return {
            mod.NVML_CLOCK_SM: g.clock_sm_mhz,
            mod.NVML_CLOCK_GRAPHICS: g.clock_sm_mhz,
            mod.NVML_CLOCK_MEM: g.clock_memory_mhz,
        }[clock_type]

    @api
    def nvmlDeviceGetMaxClockInfo(h, clock_type):
        g = _gpu(h)
        return {
            mod.NVML_CLOCK_SM: g.clock_sm_max_mhz,
            mod.NVML_CLOCK_GRAPHICS: g.clock_sm_max_mhz,
            mod.NVML_CLOCK_MEM: g.clock_memory_max_mhz,
        }[clock_type]

    @api
    def nvmlDeviceGetUtilizationRates(h):
        g = _gpu(h)
        return types.SimpleNamespace(gpu=g.utilization_gpu_pct, memory=g.utilization_memory_pct)

    @api
    def nvmlDeviceGetTemperature(h, sensor):
        if sensor != mod.NVML_TEMPERATURE_GPU:
            raise nvml_error("invalid_argument")
        return _gpu(h).temperature_c

    @api
    def nvmlDeviceGetPowerUsage(h):
        return int(round(_gpu(h).power_draw_w * 1000))  # milliwatts, as NVML

    @api
    def nvmlDeviceGetEnforcedPowerLimit(h):
        return int(round(_gpu(h).power_limit_w * 1000))

    @api
    def nvmlDeviceGetCurrPcieLinkGeneration(h):
        return _gpu(h).pcie_generation

    @api
    def nvmlDeviceGetCurrPcieLinkWidth(h):
        return _gpu(h).pcie_width

    @api
    def nvmlDeviceGetMaxPcieLinkGeneration(h):
        return _gpu(h).pcie_generation_max

    @api
    def nvmlDeviceGetMaxPcieLinkWidth(h):
        return _gpu(h).pcie_width_max

    @api
    def nvmlDeviceGetComputeRunningProcesses(h):
        return [
            types.SimpleNamespace(pid=p.pid, usedGpuMemory=p.used_memory_bytes) for p in _gpu(h).processes
        ]

    @api
    def nvmlDeviceGetPcieThroughput(h, counter):
        g = _gpu(h)
        if counter == mod.NVML_PCIE_UTIL_RX_BYTES:
            return g.pcie_rx_kib_s
        if counter == mod.NVML_PCIE_UTIL_TX_BYTES:
            return g.pcie_tx_kib_s
        raise nvml_error("invalid_argument")

    @api
    def nvmlGpmQueryDeviceSupport(h):
        return types.SimpleNamespace(version=1, isSupportedDevice=int(_gpu(h).gpm_supported))

    @api
    def nvmlGpmSampleAlloc():
        mod.gpm_samples_held += 1
        return _GpmSample()

    @api
    def nvmlGpmSampleFree(sample):
        if not isinstance(sample, _GpmSample) or sample.freed:
            raise nvml_error("invalid_argument")
        sample.freed = True
        mod.gpm_samples_held -= 1

    @api
    def nvmlGpmSampleGet(h, sample):
        g = _gpu(h)
        if not g.gpm_supported:
            raise nvml_error("not_supported")
        if not isinstance(sample, _GpmSample) or sample.freed:
            raise nvml_error("invalid_argument")
        mod.gpm_order += 1
        sample.gpu, sample.order = h.index, mod.gpm_order
        sample.values = {  # by nvml.h's metric ids (a reader asking for another id is refused)
            2: g.sm_activity_pct,
            3: g.sm_occupancy_pct,
            20: g.pcie_tx_kib_s / 1024,
            21: g.pcie_rx_kib_s / 1024,
        }
        return sample

    @api
    def nvmlGpmMetricsGet(request):
        first, second = request.sample1, request.sample2
        if (
            request.version != mod.NVML_GPM_METRICS_GET_VERSION
            or not isinstance(first, _GpmSample)
            or not isinstance(second, _GpmSample)
            or first.freed
            or second.freed
            or first.gpu is None
            or first.gpu != second.gpu
            or first.order >= second.order
            or not 0 < request.numMetrics <= mod.NVML_GPM_METRIC_MAX
        ):
            raise nvml_error("invalid_argument")
        for metric in request.metrics[: request.numMetrics]:
            if metric.metricId in second.values:
                metric.nvmlReturn, metric.value = mod.NVML_SUCCESS, float(second.values[metric.metricId])
            else:
                metric.nvmlReturn, metric.value = _ERRORS["not_supported"][0], 0.0
        return request

    @api
    def nvmlDeviceGetMigMode(h):
        g = _gpu(h)
        if g.mig_mode is None:
            raise nvml_error("not_supported")
        return list(g.mig_mode)

    @api
    def nvmlDeviceGetMaxMigDeviceCount(h):
        g = _gpu(h)
        if g.mig_mode is None:
            raise nvml_error("not_supported")
        return 7

    @api
    def nvmlDeviceGetMigDeviceHandleByIndex(h, i):
        g = _gpu(h)
        if i >= len(g.mig_uuids):
            raise nvml_error("not_found")
        return _MigHandle(g.mig_uuids[i])

    return mod


class _MigHandle:
    def __init__(self, uuid: str) -> None:
        self.uuid = uuid
