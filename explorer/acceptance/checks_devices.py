"""The machine and the Devices page: versions and clocks, ``devices --json`` against NVML,
``nvidia-smi`` and the CUDA driver, and ``self-test``.

The comparison (``device_rows``) is a pure function of five dictionaries, so the rules are tested
with values; the checks only gather them.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

from explorer.acceptance.context import MAX_REPORT_BYTES, CannotRun, CheckContext
from explorer.acceptance.judge import count_figure, record_figure, status_of
from explorer.acceptance.records import CheckResult, Figure
from explorer.schema import loads
from explorer.words import count

#: the distributions whose versions every report carries
DISTRIBUTIONS = (
    "torch",
    "numpy",
    "numba",
    "numba-cuda",
    "llvmlite",
    "cuda-bindings",
    "nvidia-ml-py",
    "psutil",
    "py-cpuinfo",
    "threadpoolctl",
    "hypothesis",
    "pytest",
)
#: nvidia-smi's names for the fields compared (``--query-gpu``), in the order asked
SMI_FIELDS = (
    "index",
    "uuid",
    "name",
    "pci.bus_id",
    "compute_cap",
    "memory.total",
    "clocks.max.sm",
    "clocks.max.memory",
    "pcie.link.gen.max",
    "pcie.link.width.max",
    "pcie.link.gen.current",
    "pcie.link.width.current",
    "enforced.power.limit",
    "driver_version",
    "clocks.sm",
    "clocks.mem",
    "persistence_mode",
    "pstate",
)
#: the self-test checks a machine without Qt fails by design: the window and its libraries
QT_ONLY_CHECKS = frozenset({"import PySide6", "import pyqtgraph", "import platformdirs", "window"})
SUBPROCESS_TIMEOUT_S = 240.0


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in DISTRIBUTIONS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    try:
        import explorer

        out["device-explorer"] = explorer.__version__
    except Exception:
        pass
    return out


def _nvml_index(ctx: CheckContext) -> int:
    from explorer.gpuqueue.share import gpu_identity

    index = gpu_identity(ctx.device, ctx.nvml)[1]
    if index is None:
        raise CannotRun(
            f"NVML does not list {ctx.device} (no driver's NVML, or CUDA_VISIBLE_DEVICES hides it)"
        )
    return index


def check_environment(ctx: CheckContext) -> CheckResult:
    """Versions, the GPU's clocks and limits now, and whether other programs use the GPU."""
    from explorer.devices.nvml import NvmlSession
    from explorer.gpuqueue.share import other_gpu_processes

    versions = package_versions()
    try:
        import torch

        versions["torch cuda runtime"] = str(torch.version.cuda)
    except Exception as exc:
        versions["torch cuda runtime"] = f"torch unusable: {exc}"
    index = _nvml_index(ctx)
    with NvmlSession(ctx.nvml) as session:
        gpu = session.describe(index)
        # describe() reads the device; the driver's versions are the system's (the H100's report
        # said "driver None (CUDA None)" until they were read here too)
        gpu.driver_version, gpu.cuda_driver_version, unread = session.system_versions()
        extra: dict[str, int | str] = {}
        for name, call in (
            ("persistence_mode", "nvmlDeviceGetPersistenceMode"),
            ("performance_state", "nvmlDeviceGetPerformanceState"),
        ):
            try:
                extra[name] = int(getattr(session.nvml, call)(session.handle(index)))
            except Exception as exc:  # recorded, not required
                extra[name] = f"n/a ({type(exc).__name__})"
    others = other_gpu_processes(index, ctx.nvml)
    versions["nvidia driver"] = str(gpu.driver_version)
    versions["cuda driver"] = str(gpu.cuda_driver_version)
    live = gpu.live
    figures = [
        record_figure("SM clock now", gpu.clock_sm_mhz, "MHz", f"max {gpu.clock_sm_max_mhz} MHz"),
        record_figure("memory clock now", gpu.clock_memory_mhz, "MHz", f"max {gpu.clock_memory_max_mhz} MHz"),
        record_figure(
            "PCIe link now",
            gpu.pcie_generation,
            f"gen x{gpu.pcie_width}",
            f"max gen{gpu.pcie_generation_max} x{gpu.pcie_width_max}; idle GPUs drop the link speed",
        ),
        record_figure("power limit", live.power_limit_w if live else None, "W"),
        record_figure("temperature", live.temperature_c if live else None, "C"),
    ]
    details = {
        "versions": versions,
        "gpu": gpu.to_dict(),
        "nvml_extra": extra,
        "other_processes": others,
        "platform": {
            "kernel": platform.release(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "executable": sys.executable,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        },
    }
    busy = (
        f"{len(others)} other process(es) on the GPU ({', '.join(others[:3])}): figures may be disturbed"
        if others
        else "no other process on the GPU"
    )
    summary = (
        f"{gpu.name}, CC {gpu.cc_string}, driver {gpu.driver_version} (CUDA {gpu.cuda_driver_version}), "
        f"torch {versions['torch']} (CUDA {versions['torch cuda runtime']}), numba {versions['numba']}, "
        f"numba-cuda {versions['numba-cuda']}; {busy}"
    )
    # a run whose driver cannot be read cannot say what it ran on: no report is to be trusted
    missing = [
        f"{what}: {unread.get(key) or 'not reported'}"
        for what, key, value in (
            ("the driver version", "driver_version", gpu.driver_version),
            ("the CUDA driver version", "cuda_driver_version", gpu.cuda_driver_version),
        )
        if not value
    ]
    if missing:
        details["unread"] = missing
        return CheckResult(
            "environment", "fail", f"NVML could not read {'; '.join(missing)}. {summary}", figures, details
        )
    return CheckResult("environment", "pass", summary, figures, details)


# --- devices --json against the references -----------------------------------------------------


@dataclass
class FieldRow:
    """One field of the app's record against one reference."""

    field: str
    app: Any
    reference: Any
    source: str  # "NVML", "nvidia-smi", "torch", "CUDA driver", "limits table"
    equal: bool
    note: str = ""

    @property
    def gap(self) -> bool:
        """The app shows nothing ("n/a") where the reference has a value: missing, not wrong."""
        return self.app is None and not self.equal

    @property
    def wrong(self) -> bool:
        return not self.equal and not self.gap


def _smi_value(text: str) -> str | None:
    text = text.strip()
    return None if not text or text.startswith("[") or text in ("N/A", "Unknown Error") else text


def parse_smi_csv(text: str, fields: tuple[str, ...] = SMI_FIELDS) -> list[dict[str, str | None]]:
    """nvidia-smi's ``--format=csv,noheader,nounits`` answer, one dict per GPU ("[N/A]" -> None)."""
    rows = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields):
            continue
        rows.append({name: _smi_value(cell) for name, cell in zip(fields, cells, strict=True)})
    return rows


def _num(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _bare_uuid(value: Any) -> str | None:
    return None if value is None else str(value).lower().removeprefix("gpu-")


def _bus(value: Any) -> str | None:
    """PCI bus ids compared in one spelling: domain:bus:device.function, lower case, 8-digit domain."""
    if value is None:
        return None
    domain, _, rest = str(value).lower().rpartition(":")
    head, _, tail = domain.rpartition(":")
    domain = head if head else domain
    return f"{int(domain or '0', 16):08x}:{tail}:{rest}" if tail else str(value).lower()


def device_rows(
    app: dict[str, Any],
    nvml: dict[str, Any],
    smi: dict[str, str | None] | None,
    torch_props: dict[str, Any],
    driver: dict[str, int | None],
    table: dict[str, Any] | None,
) -> list[FieldRow]:
    """The app's record for one GPU (as ``devices --json`` prints it) field by field against NVML,
    nvidia-smi, torch, the CUDA driver's attributes and the per-CC limits table (the occupancy
    maths reads the table). A reference that has no value for a field is left out, not counted."""
    rows: list[FieldRow] = []
    limits = app.get("limits") or {}
    live = app.get("live") or {}

    def row(
        field: str, app_value: Any, ref: Any, source: str, equal: bool | None = None, note: str = ""
    ) -> None:
        if ref is None:
            return
        same = (app_value == ref) if equal is None else equal
        rows.append(FieldRow(field, app_value, ref, source, bool(same), note))

    cc_driver = (
        f"{driver.get('COMPUTE_CAPABILITY_MAJOR')}.{driver.get('COMPUTE_CAPABILITY_MINOR')}"
        if driver.get("COMPUTE_CAPABILITY_MAJOR") is not None
        else None
    )
    row("name", app.get("name"), nvml.get("name"), "NVML")
    row("uuid", _bare_uuid(app.get("uuid")), _bare_uuid(nvml.get("uuid")), "NVML")
    row("compute_capability", app.get("compute_capability"), nvml.get("compute_capability"), "NVML")
    row("compute_capability", app.get("compute_capability"), cc_driver, "CUDA driver")
    row("memory_total_bytes", app.get("memory_total_bytes"), nvml.get("memory_total_bytes"), "NVML")
    row("sm_count", app.get("sm_count"), driver.get("MULTIPROCESSOR_COUNT"), "CUDA driver")
    row("sm_count", app.get("sm_count"), torch_props.get("multi_processor_count"), "torch")
    row("name", app.get("name"), torch_props.get("name"), "torch")
    row(
        "memory_bus_width_bits",
        app.get("memory_bus_width_bits"),
        driver.get("GLOBAL_MEMORY_BUS_WIDTH"),
        "CUDA driver",
    )
    if smi is not None:
        row("name", app.get("name"), smi.get("name"), "nvidia-smi")
        row("uuid", _bare_uuid(app.get("uuid")), _bare_uuid(smi.get("uuid")), "nvidia-smi")
        row("pci_bus_id", _bus(app.get("pci_bus_id")), _bus(smi.get("pci.bus_id")), "nvidia-smi")
        row("compute_capability", app.get("compute_capability"), smi.get("compute_cap"), "nvidia-smi")
        mib = _num(smi.get("memory.total"))
        total = app.get("memory_total_bytes")
        if mib is not None:
            row(
                "memory_total_bytes",
                total,
                int(mib),
                "nvidia-smi",
                total is not None and total // 2**20 == int(mib),
                "MiB",
            )
        for field, name in (
            ("clock_sm_max_mhz", "clocks.max.sm"),
            ("clock_memory_max_mhz", "clocks.max.memory"),
            ("pcie_generation_max", "pcie.link.gen.max"),
            ("pcie_width_max", "pcie.link.width.max"),
        ):
            ref = _num(smi.get(name))
            row(field, app.get(field), None if ref is None else int(ref), "nvidia-smi")
        limit = _num(smi.get("enforced.power.limit"))
        mine = live.get("power_limit_w")
        if limit is not None:
            row(
                "live.power_limit_w",
                mine,
                limit,
                "nvidia-smi",
                mine is not None and abs(mine - limit) <= 1.0,
                "within 1 W",
            )
        row("driver_version", app.get("driver_version"), smi.get("driver_version"), "nvidia-smi")
    for field, attribute in (
        ("max_threads_per_block", "MAX_THREADS_PER_BLOCK"),
        ("max_threads_per_sm", "MAX_THREADS_PER_MULTIPROCESSOR"),
        ("max_blocks_per_sm", "MAX_BLOCKS_PER_MULTIPROCESSOR"),
        ("warp_size", "WARP_SIZE"),
        ("max_smem_per_block_bytes", "MAX_SHARED_MEMORY_PER_BLOCK"),
        ("max_smem_per_block_optin_bytes", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        ("smem_per_sm_bytes", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        ("max_regs_per_block", "MAX_REGISTERS_PER_BLOCK"),
        ("regs_per_sm", "MAX_REGISTERS_PER_MULTIPROCESSOR"),
        ("l2_cache_bytes", "L2_CACHE_SIZE"),
    ):
        row(f"limits.{field}", limits.get(field), driver.get(attribute), "CUDA driver")
    if table is not None:
        for field, attribute in (
            ("max_threads_per_block", "MAX_THREADS_PER_BLOCK"),
            ("max_threads_per_sm", "MAX_THREADS_PER_MULTIPROCESSOR"),
            ("max_blocks_per_sm", "MAX_BLOCKS_PER_MULTIPROCESSOR"),
            ("warp_size", "WARP_SIZE"),
            ("max_regs_per_block", "MAX_REGISTERS_PER_BLOCK"),
            ("regs_per_sm", "MAX_REGISTERS_PER_MULTIPROCESSOR"),
            ("max_smem_per_block_bytes", "MAX_SHARED_MEMORY_PER_BLOCK"),
            ("max_smem_per_block_optin_bytes", "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
            ("smem_per_sm_bytes", "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
            ("reserved_smem_per_block_bytes", "RESERVED_SHARED_MEMORY_PER_BLOCK"),
        ):
            row(f"table.{field}", table.get(field), driver.get(attribute), "CUDA driver")
    return rows


def live_rows(app: dict[str, Any], cc: tuple[int, int] | None) -> list[FieldRow]:
    """The live readings the Devices page draws: each has a value or a reason, and a Hopper or newer
    GPU has its SM activity and occupancy (NVML GPM)."""
    live = app.get("live") or {}
    reasons = live.get("unavailable") or {}
    rows = []
    for field in ("utilization_gpu_pct", "memory_used_bytes", "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"):
        value, why = live.get(field), reasons.get(field)
        rows.append(
            FieldRow(
                f"live.{field}",
                value,
                "a value or a reason",
                "the app",
                value is not None or bool(why),
                why or "",
            )
        )
    hopper = cc is not None and cc >= (9, 0)
    for field in ("sm_activity_pct", "sm_occupancy_pct"):
        value, why = live.get(field), reasons.get(field)
        wanted = "a value (GPM: CC 9.0+)" if hopper else "a value or a reason"
        ok = value is not None if hopper else (value is not None or bool(why))
        rows.append(FieldRow(f"live.{field}", value, wanted, "the app", ok, why or ""))
    return rows


def _run_cli(ctx: CheckContext, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=str(ctx.repo),
        capture_output=True,
        text=True,
        timeout=min(SUBPROCESS_TIMEOUT_S, max(30.0, ctx.deadline_s - 30)),
    )


def _nvml_reference(ctx: CheckContext, index: int) -> dict[str, Any]:
    """What NVML says directly (pynvml calls, not the app's probe)."""
    from explorer.devices.nvml import import_nvml

    lib = ctx.nvml if ctx.nvml is not None else import_nvml()
    lib.nvmlInit()
    try:
        h = lib.nvmlDeviceGetHandleByIndex(index)

        def text(v: Any) -> str:
            return v.decode() if isinstance(v, bytes) else str(v)

        major, minor = lib.nvmlDeviceGetCudaComputeCapability(h)
        return {
            "name": text(lib.nvmlDeviceGetName(h)),
            "uuid": text(lib.nvmlDeviceGetUUID(h)),
            "compute_capability": f"{major}.{minor}",
            "memory_total_bytes": int(lib.nvmlDeviceGetMemoryInfo(h).total),
        }
    finally:
        lib.nvmlShutdown()


def _smi_reference(uuid: str | None) -> tuple[dict[str, str | None] | None, str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None, "nvidia-smi is not installed"
    proc = subprocess.run(
        [smi, f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        return None, f"nvidia-smi failed: {(proc.stderr or proc.stdout).strip()[:200]}"
    rows = parse_smi_csv(proc.stdout)
    match = [r for r in rows if _bare_uuid(r.get("uuid")) == _bare_uuid(uuid)]
    return (match[0] if match else None), proc.stdout.strip()


def check_devices(ctx: CheckContext) -> CheckResult:
    """``devices --json`` field by field against NVML, nvidia-smi, torch and the CUDA driver."""
    from explorer.acceptance.cudadriver import device_attributes
    from explorer.devices.limits import limits_for_cc

    proc = _run_cli(ctx, "devices", "--json")
    if proc.returncode != 0:
        return CheckResult(
            "devices", "fail", f"devices --json exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
        )
    data = loads(proc.stdout, max_bytes=MAX_REPORT_BYTES)
    app = next((d for d in data["devices"] if d.get("key") == ctx.device), None)
    if app is None:
        return CheckResult(
            "devices", "fail", f"devices --json lists no {ctx.device}; why_no_gpu: {data.get('why_no_gpu')}"
        )
    nvml = _nvml_reference(ctx, int(app["nvml_index"]))
    smi, smi_raw = _smi_reference(app.get("uuid"))
    import torch

    props = torch.cuda.get_device_properties(ctx.index)
    torch_props = {"name": props.name, "multi_processor_count": props.multi_processor_count}
    driver = device_attributes(ctx.index)
    cc = (
        tuple(int(x) for x in str(app.get("compute_capability")).split("."))
        if app.get("compute_capability")
        else None
    )
    try:
        table = limits_for_cc(cc).to_dict() if cc else None
    except Exception:  # an unknown CC has no table row: the row check fails below
        table = {}
    rows = device_rows(app, nvml, smi, torch_props, driver, table)
    live = live_rows(app, cc)  # type: ignore[arg-type]
    wrong = [r for r in rows + live if r.wrong]
    gaps = [r for r in rows if r.gap]
    figures = [
        count_figure(
            "fields equal to their reference",
            sum(r.equal for r in rows),
            len(rows),
            "all",
            "fields compared",
            not wrong,
        ),
        Figure(
            "fields the app leaves n/a where the reference has a value",
            float(len(gaps)),
            "fields",
            "none",
            met=not gaps,
            note=", ".join(f"{r.field} ({r.source} {r.reference!r})" for r in gaps[:6]),
        ),
        count_figure(
            "live readings present or explained",
            sum(r.equal for r in live),
            len(live),
            "all; SM activity and occupancy measured on CC 9.0+",
            "readings",
            all(r.equal for r in live),
        ),
    ]
    shown = "; ".join(f"{r.field} app {r.app!r} vs {r.source} {r.reference!r}" for r in wrong[:4])
    summary = (
        f"{len(rows)} fields against NVML, nvidia-smi, torch and the driver, {len(live)} live readings: "
        + ("none differs" if not wrong else f"{len(wrong)} differ: {shown}")
        + (f"; {len(gaps)} shown n/a by the app" if gaps else "")
        + ("" if smi is not None else f" (nvidia-smi: {smi_raw[:120]})")
    )
    details = {
        "rows": [asdict(r) for r in rows + live],
        "nvidia_smi": smi_raw,
        "driver_attributes": driver,
        "app_record": app,
    }
    return CheckResult("devices", status_of(not wrong, figures), summary, figures, details)


def judge_self_test(report: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(failed checks that count, failed checks a machine without Qt fails by design)."""
    failed = [c for c in report.get("checks", []) if c.get("status") == "fail"]
    return [c for c in failed if c.get("name") not in QT_ONLY_CHECKS], [
        c for c in failed if c.get("name") in QT_ONLY_CHECKS
    ]


def check_self_test(ctx: CheckContext) -> CheckResult:
    """``self-test --json`` on the GPU machine: the GPU lines pass; only Qt's may fail (no Qt there)."""
    proc = _run_cli(ctx, "self-test", "--json")
    try:
        report = loads(proc.stdout, max_bytes=MAX_REPORT_BYTES)
    except ValueError:
        return CheckResult(
            "self_test",
            "fail",
            f"self-test printed no JSON (exit {proc.returncode}): {proc.stderr.strip()[-300:]}",
        )
    counted, qt_only = judge_self_test(report)
    gpu_lines = [c for c in report.get("checks", []) if c.get("name") in ("gpu", "gpu workload")]
    workload = next((c for c in gpu_lines if c["name"] == "gpu workload"), None)
    problems = [f"{c['name']}: {c['detail']}" for c in counted]
    if workload is None or workload.get("status") != "pass":
        problems.append(
            "the GPU workload check did not pass: " + (workload or {}).get("detail", "it did not run")
        )
    noted = f"; {count(len(qt_only), 'Qt-only check')} fail as expected without Qt" if qt_only else ""
    summary = (
        f"{len(report.get('checks', []))} checks in {report.get('duration_s', 0):.0f} s: "
        + ("the GPU's pass" if not problems else "FAILED " + "; ".join(problems)[:400])
        + noted
    )
    return CheckResult("self_test", "fail" if problems else "pass", summary, [], {"self_test": report})
