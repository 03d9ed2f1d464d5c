"""NVIDIA GPUs as the driver sees them, through NVML (module ``pynvml`` from nvidia-ml-py).

The NVML module is a parameter everywhere (``None`` imports the real one), so tests and the
Devices panel's tests pass a stand-in (``tests/devices/fake_nvml.py``).

Every query is wrapped: an ``NVMLError`` (say ``NVMLError_NotSupported`` for the temperature
of a passively cooled board) marks *that field* unavailable with a reason; it never drops the
device. A missing library or driver becomes one plain sentence in the probe's report.

NVML numbers GPUs in PCI bus order over all GPUs; CUDA numbers only the GPUs
``CUDA_VISIBLE_DEVICES`` lets through, in its own order. ``cuda_visible_nvml_indices``
does that mapping explicitly (as nvitop does), so ``cuda:0`` names the right board.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.devices.discovery import ProbeReport
from explorer.devices.gpm import GPM_METRICS, NO_DATA_YET, GpmReader, GpmResult
from explorer.devices.live import GpuProcess, LiveReading
from explorer.devices.model import HIDDEN_BY_CUDA_VISIBLE_DEVICES, CudaGpu, import_failure
from explorer.devices.nvml_errors import explain_field_error
from explorer.words import count as count_of

_MIB = 1024 * 1024
#: a one-off reading's GPM window: long enough for the counters to move, short for ``devices``
GPM_FIRST_GAP_S = 0.1

# Plain words for the ways NVML can be unusable, keyed by the pynvml error class name.
_INIT_EXPLANATIONS = {
    "NVMLError_LibraryNotFound": "NVML library not found: no NVIDIA driver is installed.",
    "NVMLError_DriverNotLoaded": "The NVIDIA driver is installed but not loaded (is there an NVIDIA GPU, and was the machine rebooted after installing the driver?).",
    "NVMLError_LibRmVersionMismatch": "The NVIDIA driver and its NVML library have different versions (usually after a driver update without a reboot): reboot the machine.",
    "NVMLError_NoPermission": "No permission to talk to the NVIDIA driver (check the permissions on /dev/nvidia*, or the container's GPU access).",
    "NVMLError_GpuIsLost": "An NVIDIA GPU stopped responding to the driver (it fell off the bus): a reboot is usually needed.",
    "NVMLError_FunctionNotFound": "The NVIDIA driver is too old for this NVML library (a function is missing): update the driver.",
    "NVMLError_Uninitialized": "NVML was not initialised.",
}


class NvmlUnavailable(RuntimeError):
    """NVML cannot be used at all on this machine; ``str()`` is the plain explanation."""


def explain_init_error(exc: BaseException) -> str:
    """One sentence a student understands for why NVML would not start."""
    name = type(exc).__name__
    if name in _INIT_EXPLANATIONS:
        return _INIT_EXPLANATIONS[name]
    return f"NVML could not start ({exc}). The NVIDIA driver may be missing or broken."


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def format_cuda_driver_version(version: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def import_nvml() -> Any:
    """The real pynvml module, or ``NvmlUnavailable`` when nvidia-ml-py is not installed."""
    try:
        import pynvml
    except ImportError as exc:
        raise NvmlUnavailable(
            "The Python package nvidia-ml-py (module pynvml) is not installed, so GPUs cannot be listed."
        ) from exc
    except (Exception, SystemExit) as exc:  # a broken install, or one that calls sys.exit
        raise NvmlUnavailable(f"{import_failure('pynvml', exc)}, so GPUs cannot be listed.") from None
    return pynvml


# --------------------------------------------------------------------------- CUDA_VISIBLE_DEVICES


@dataclass
class VisibleMapping:
    """CUDA ordinal i is NVML device ``nvml_indices[i]``; ``note`` says what was assumed or ignored."""

    nvml_indices: list[int]
    note: str | None = None


def cuda_visible_nvml_indices(
    env_value: str | None,
    uuids: Sequence[str],
    mig_parents: dict[str, int] | None = None,
) -> VisibleMapping:
    """Map CUDA ordinals to NVML indices under ``CUDA_VISIBLE_DEVICES``, as the CUDA driver does.

    ``uuids[i]`` is NVML device i's UUID ("GPU-..."). Entries may be indices, UUIDs or unique
    UUID prefixes with or without "GPU-", or MIG instances ("MIG-<uuid>", or the older
    "MIG-GPU-<uuid>/gi/ci"; ``mig_parents`` maps MIG UUIDs to their parent's NVML index). CUDA
    stops at the first entry that names no device, and a repeated device makes it see none.
    Integer entries count in CUDA's order, which is PCI bus order (NVML's) only when
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; otherwise this mapping assumes bus order and says so.
    """
    count = len(uuids)
    if env_value is None:
        order_note: str | None = None
        if count > 1 and os.environ.get("CUDA_DEVICE_ORDER", "FASTEST_FIRST") != "PCI_BUS_ID":
            order_note = (
                "CUDA numbers GPUs fastest first; without the CUDA runtime, PCI bus order is assumed."
            )
        return VisibleMapping(list(range(count)), order_note)
    bare = [(_text(u).lower().removeprefix("gpu-")) for u in uuids]
    mig_parents = {k.lower(): v for k, v in (mig_parents or {}).items()}
    result: list[int] = []
    note: str | None = None
    for raw in env_value.split(","):
        entry = raw.strip()
        if not entry:
            note = "CUDA_VISIBLE_DEVICES has an empty entry; CUDA ignores it and everything after it."
            break
        low = entry.lower()
        target: int | None = None
        if low.lstrip("+-").isdigit():
            idx = int(low)
            if 0 <= idx < count:
                target = idx
        elif low.startswith("mig-gpu-"):
            parent = low.removeprefix("mig-gpu-").split("/")[0]
            matches = [i for i, u in enumerate(bare) if u.startswith(parent)]
            target = matches[0] if len(matches) == 1 else None
        elif low.startswith("mig-"):
            target = mig_parents.get(low)
            if target is None:
                target = mig_parents.get(low.removeprefix("mig-"))
        else:
            prefix = low.removeprefix("gpu-")
            matches = [i for i, u in enumerate(bare) if u.startswith(prefix)]
            target = matches[0] if len(matches) == 1 else None
        if target is None:
            note = (
                f"CUDA_VISIBLE_DEVICES entry {entry!r} names no GPU; CUDA ignores it and everything after it."
            )
            break
        if target in result:
            return VisibleMapping(
                [], f"CUDA_VISIBLE_DEVICES names GPU {target} twice; CUDA then sees no GPU at all."
            )
        result.append(target)
    if not result and note is None:
        note = "CUDA_VISIBLE_DEVICES is empty: CUDA sees no GPU."
    return VisibleMapping(result, note)


# --------------------------------------------------------------------------- session


@dataclass
class NvmlProbe:
    devices: list[CudaGpu]
    report: ProbeReport
    mapping: VisibleMapping | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    hidden: list[str] = field(default_factory=list)  # names of GPUs CUDA_VISIBLE_DEVICES hides


class NvmlSession:
    """An open NVML connection: ``init()`` once, ``read_live(i)`` every second, ``shutdown()``.

    Handles are looked up once and kept, so a live read is a handful of driver calls.
    Usable as a context manager.
    """

    def __init__(self, nvml: Any = None, clock: Callable[[], float] = time.time) -> None:
        self._nvml_given = nvml
        self.nvml: Any = nvml
        self._clock = clock
        self._handles: dict[int, Any] = {}
        self._gpm: dict[int, GpmReader] = {}
        self.started = False

    def init(self) -> None:
        """Start NVML; raise ``NvmlUnavailable`` with a plain explanation when it cannot."""
        if self.started:
            return
        if self.nvml is None:
            self.nvml = import_nvml()
        try:
            self.nvml.nvmlInit()
        except Exception as exc:
            raise NvmlUnavailable(explain_init_error(exc)) from exc
        self.started = True

    def shutdown(self) -> None:
        if self.started:
            self.started = False
            for reader in self._gpm.values():
                reader.close()
            self._gpm.clear()
            self._handles.clear()
            try:
                self.nvml.nvmlShutdown()
            except Exception:
                pass  # shutting down a broken driver must not raise either

    def __enter__(self) -> NvmlSession:
        self.init()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def count(self) -> int:
        try:
            return int(self.nvml.nvmlDeviceGetCount())
        except Exception as exc:
            raise NvmlUnavailable(
                f"NVML started but could not count GPUs: {explain_field_error(exc)}."
            ) from exc

    def handle(self, index: int) -> Any:
        if index not in self._handles:
            self._handles[index] = self.nvml.nvmlDeviceGetHandleByIndex(index)
        return self._handles[index]

    def read_live(self, index: int) -> LiveReading:
        """One cheap sample of NVML device ``index``'s sensors; SM activity and occupancy (GPM)
        cover the time since the previous call for that GPU (the first call has none yet)."""
        return read_live(self.nvml, self.handle(index), clock=self._clock, gpm=self.gpm_reader(index))

    def gpm_reader(self, index: int) -> GpmReader:
        """The GPM reader of NVML device ``index``, kept for the session (it holds the last sample)."""
        if index not in self._gpm:
            self._gpm[index] = GpmReader(self.nvml, self.handle(index))
        return self._gpm[index]

    def complete_gpm(self, readings: dict[int, LiveReading], gap_s: float = GPM_FIRST_GAP_S) -> None:
        """For one-off readings (``devices``): wait ``gap_s`` once, then give every reading whose GPM
        fields still say "no data yet" the GPU's SM activity and occupancy over that gap."""
        waiting = {
            i: live for i, live in readings.items() if live.unavailable.get("sm_activity_pct") == NO_DATA_YET
        }
        if not waiting:
            return
        time.sleep(gap_s)
        for index, live in waiting.items():
            apply_gpm(live, self.gpm_reader(index).read())

    def system_versions(self) -> tuple[str | None, str | None, dict[str, str]]:
        reasons: dict[str, str] = {}
        driver = cuda = None
        try:
            driver = _text(self.nvml.nvmlSystemGetDriverVersion())
        except Exception as exc:
            reasons["driver_version"] = explain_field_error(exc)
        try:
            cuda = format_cuda_driver_version(int(self.nvml.nvmlSystemGetCudaDriverVersion()))
        except Exception as exc:
            reasons["cuda_driver_version"] = explain_field_error(exc)
        return driver, cuda, reasons

    def mig_children(self, index: int) -> list[str]:
        """UUIDs of the MIG instances carved out of NVML device ``index`` (empty if none)."""
        nvml, handle = self.nvml, self.handle(index)
        try:
            mode = nvml.nvmlDeviceGetMigMode(handle)
            if int(mode[0]) != int(getattr(nvml, "NVML_DEVICE_MIG_ENABLE", 1)):
                return []
            uuids = []
            for i in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))):
                try:
                    child = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, i)
                    uuids.append(_text(nvml.nvmlDeviceGetUUID(child)))
                except Exception:
                    continue
            return uuids
        except Exception:
            return []

    def describe(self, index: int) -> CudaGpu:
        """Everything NVML knows about NVML device ``index``, each field on its own."""
        nvml = self.nvml
        handle = self.handle(index)
        dev = CudaGpu(name=f"NVIDIA GPU {index}", nvml_index=index, vendor="NVIDIA", source="NVML")

        def ask(field_name: str, fn: Callable[[], Any]) -> Any:
            try:
                return fn()
            except Exception as exc:
                dev.mark_unavailable(field_name, explain_field_error(exc))
                return None

        name = ask("name", lambda: _text(nvml.nvmlDeviceGetName(handle)))
        if name:
            dev.name = name
        dev.uuid = ask("uuid", lambda: _text(nvml.nvmlDeviceGetUUID(handle)))
        dev.pci_bus_id = ask("pci_bus_id", lambda: _text(nvml.nvmlDeviceGetPciInfo(handle).busId))
        cc = ask(
            "compute_capability",
            lambda: tuple(int(x) for x in nvml.nvmlDeviceGetCudaComputeCapability(handle)),
        )
        dev.compute_capability = cc if cc else None
        mem = ask("memory_total_bytes", lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        if mem is not None:
            dev.memory_total_bytes = int(mem.total)
        dev.memory_bus_width_bits = ask(
            "memory_bus_width_bits", lambda: int(nvml.nvmlDeviceGetMemoryBusWidth(handle))
        )
        clock_sm, clock_mem = nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM
        dev.clock_sm_mhz = ask("clock_sm_mhz", lambda: int(nvml.nvmlDeviceGetClockInfo(handle, clock_sm)))
        dev.clock_sm_max_mhz = ask(
            "clock_sm_max_mhz", lambda: int(nvml.nvmlDeviceGetMaxClockInfo(handle, clock_sm))
        )
        dev.clock_memory_mhz = ask(
            "clock_memory_mhz", lambda: int(nvml.nvmlDeviceGetClockInfo(handle, clock_mem))
        )
        dev.clock_memory_max_mhz = ask(
            "clock_memory_max_mhz", lambda: int(nvml.nvmlDeviceGetMaxClockInfo(handle, clock_mem))
        )
        dev.pcie_generation = ask(
            "pcie_generation", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(handle))
        )
        dev.pcie_width = ask("pcie_width", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkWidth(handle)))
        dev.pcie_generation_max = ask(
            "pcie_generation_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(handle))
        )
        dev.pcie_width_max = ask("pcie_width_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkWidth(handle)))
        if (
            dev.pcie_generation is not None
            and dev.pcie_generation_max
            and dev.pcie_generation < dev.pcie_generation_max
        ):
            dev.notes.append(
                "The PCIe link runs below its maximum generation now; idle GPUs drop the link speed to save power."
            )
        mig = ask("mig_mode", lambda: nvml.nvmlDeviceGetMigMode(handle))
        if mig is not None:
            enabled = int(mig[0]) == int(getattr(nvml, "NVML_DEVICE_MIG_ENABLE", 1))
            dev.mig_mode = "enabled" if enabled else "disabled"
        dev.processes = self._processes(handle, dev)
        dev.live = self.read_live(index)
        return dev

    def _processes(self, handle: Any, dev: CudaGpu) -> list[GpuProcess]:
        nvml = self.nvml
        try:
            raw = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        except Exception as exc:
            dev.mark_unavailable("processes", explain_field_error(exc))
            return []
        procs = []
        for p in raw or []:
            pid = int(p.pid)
            used = getattr(p, "usedGpuMemory", None)
            procs.append(
                GpuProcess(
                    pid=pid, name=process_name(nvml, pid), used_memory_bytes=int(used) if used else None
                )
            )
        return procs


def process_name(nvml: Any, pid: int) -> str:
    try:
        name = _text(nvml.nvmlSystemGetProcessName(pid))
        if name:
            return os.path.basename(name)
    except Exception:
        pass
    try:
        import psutil

        return psutil.Process(pid).name()
    except Exception:
        return f"pid {pid}"


#: bytes in NVML's "KB" of ``nvmlDeviceGetPcieThroughput`` (KiB, as nvtop and nvitop read it)
PCIE_THROUGHPUT_UNIT_BYTES = 1024


def read_live(
    nvml: Any, handle: Any, *, clock: Callable[[], float] = time.time, gpm: GpmReader | None = None
) -> LiveReading:
    """One sample of a GPU's sensors; ``handle`` is an NVML handle or an NVML index.

    Called about once a second per GPU by the Devices panel, so it makes only the driver calls
    it needs, and a sensor that fails is recorded in ``unavailable``. The two PCIe counters each
    count over 20 ms inside the driver, so a reading takes about 40 ms. ``gpm`` is the GPU's GPM
    reader (``NvmlSession`` keeps one per GPU): SM activity and occupancy since its last read;
    without one those two fields say they were not read.
    """
    if isinstance(handle, int):
        handle = nvml.nvmlDeviceGetHandleByIndex(handle)
    live = LiveReading(timestamp_s=clock())

    def ask(names: tuple[str, ...], fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            for n in names:
                live.unavailable.mark(n, explain_field_error(exc))
            return None

    util = ask(
        ("utilization_gpu_pct", "utilization_memory_pct"), lambda: nvml.nvmlDeviceGetUtilizationRates(handle)
    )
    if util is not None:
        live.utilization_gpu_pct = float(util.gpu)
        live.utilization_memory_pct = float(util.memory)
    mem = ask(("memory_used_bytes", "memory_total_bytes"), lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    if mem is not None:
        live.memory_used_bytes = int(mem.used)
        live.memory_total_bytes = int(mem.total)
    temp = ask(("temperature_c",), lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
    live.temperature_c = float(temp) if temp is not None else None
    power = ask(("power_draw_w",), lambda: nvml.nvmlDeviceGetPowerUsage(handle))
    live.power_draw_w = power / 1000.0 if power is not None else None
    limit = ask(("power_limit_w",), lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
    live.power_limit_w = limit / 1000.0 if limit is not None else None
    sm = ask(("clock_sm_mhz",), lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
    live.clock_sm_mhz = int(sm) if sm is not None else None
    memclk = ask(("clock_memory_mhz",), lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM))
    live.clock_memory_mhz = int(memclk) if memclk is not None else None
    live.pcie_rx_bytes_per_s = _pcie_rate(ask, nvml, handle, "pcie_rx_bytes_per_s", "NVML_PCIE_UTIL_RX_BYTES")
    live.pcie_tx_bytes_per_s = _pcie_rate(ask, nvml, handle, "pcie_tx_bytes_per_s", "NVML_PCIE_UTIL_TX_BYTES")
    apply_gpm(
        live, gpm.read() if gpm is not None else GpmResult.missing("not read (no GPM reader for this GPU)")
    )
    return live


def _pcie_rate(ask: Callable[..., Any], nvml: Any, handle: Any, name: str, counter: str) -> float | None:
    """Bytes per second over the driver's 20 ms window for one direction of the PCIe link."""
    rate = ask((name,), lambda: nvml.nvmlDeviceGetPcieThroughput(handle, getattr(nvml, counter)))
    return float(rate) * PCIE_THROUGHPUT_UNIT_BYTES if rate is not None else None


def apply_gpm(live: LiveReading, result: GpmResult) -> None:
    """Put one GPM read's values (and reasons) into ``live``, replacing what it had for them."""
    for name in GPM_METRICS:
        live.unavailable.discard(name)
        setattr(live, name, result.values.get(name))
        if name in result.reasons:
            live.unavailable.mark(name, result.reasons[name])


def probe_nvml(nvml: Any = None, *, env: Mapping[str, str] | None = None) -> NvmlProbe:
    """List the NVIDIA GPUs NVML sees; never raises. ``env`` defaults to ``os.environ``.

    Each device's ``index`` is its CUDA ordinal under ``CUDA_VISIBLE_DEVICES`` (``None``
    when hidden from CUDA); ``nvml_index`` is NVML's own number.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    session = NvmlSession(nvml)
    try:
        session.init()
    except NvmlUnavailable as exc:
        return NvmlProbe([], ProbeReport("nvml", False, str(exc)))
    except Exception as exc:
        return NvmlProbe([], ProbeReport("nvml", False, explain_init_error(exc)))
    try:
        try:
            count = session.count()
        except NvmlUnavailable as exc:
            return NvmlProbe([], ProbeReport("nvml", False, str(exc)))
        driver, cuda, reasons = session.system_versions()
        devices: list[CudaGpu] = []
        for i in range(count):
            try:
                dev = session.describe(i)
            except Exception as exc:  # a GPU whose handle cannot be had: say so, keep the others
                dev = CudaGpu(name=f"NVIDIA GPU {i}", nvml_index=i, vendor="NVIDIA", source="NVML")
                dev.mark_unavailable("name", f"NVML could not open this GPU: {explain_field_error(exc)}")
            dev.driver_version, dev.cuda_driver_version = driver, cuda
            for k, v in reasons.items():
                dev.mark_unavailable(k, v)
            devices.append(dev)
        session.complete_gpm({d.nvml_index: d.live for d in devices if d.live and d.nvml_index is not None})
        mig_parents = {u: i for i in range(count) for u in session.mig_children(i)}
        mapping = cuda_visible_nvml_indices(
            environ.get("CUDA_VISIBLE_DEVICES"), [d.uuid or "" for d in devices], mig_parents
        )
        for cuda_index, nvml_index in enumerate(mapping.nvml_indices):
            devices[nvml_index].index = cuda_index
            devices[nvml_index].key = f"cuda:{cuda_index}"
        for dev in devices:
            if dev.index is None:  # listed with its live readings, never offered to CUDA work
                dev.hidden = HIDDEN_BY_CUDA_VISIBLE_DEVICES
                dev.mark_unavailable("index", HIDDEN_BY_CUDA_VISIBLE_DEVICES)
                dev.key = f"nvml:{dev.nvml_index}"
        hidden = [d.name for d in devices if d.index is None]
        if count == 0:
            message = "NVML works (driver present) but reports no NVIDIA GPU."
        else:
            message = f"NVML sees {count_of(count, 'NVIDIA GPU')} (driver {driver or 'unknown'}, CUDA {cuda or 'unknown'})."
            if hidden:
                message += f" CUDA_VISIBLE_DEVICES hides {len(hidden)}: {', '.join(hidden)}."
        if mapping.note:
            message += " " + mapping.note
        ok = count > 0 and len(mapping.nvml_indices) > 0
        return NvmlProbe(devices, ProbeReport("nvml", ok, message, count), mapping, driver, cuda, hidden)
    finally:
        session.shutdown()
