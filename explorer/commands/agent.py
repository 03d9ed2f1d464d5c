"""The hidden ``agent`` sub-command: what an agent can be asked to do, served by ``explorer.agent``.

``explorer.agent`` is transport only (the protocol, the child process, the serve loop); the work
an agent does is the app's, so its methods live here, beside the commands, and reach the core
modules below them like any command does. ``run_agent`` hands ``METHODS`` to
``explorer.agent.serve.run_agent``: method name -> ``Method`` (``(params, emit) -> answer``).

Each method takes the request's ``params`` (a JSON object, checked here before use), may stream
parts of its answer with ``emit(dict)``, and returns the final answer as a dict. A method raises
``UserError`` (or any exception) to fail the request with one line; the agent goes on serving.

The work itself lives in the core modules; these functions only unpack params, import what the
method needs (lazily, so an agent starts in a fraction of a second) and pack the answer.
"""

from __future__ import annotations

import importlib
import os
import re
import stat
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from explorer.agent import serve
from explorer.agent.serve import Emit, Method
from explorer.errors import UserError
from explorer.words import count


def _lower_priority() -> None:
    """Run below normal priority so a window sharing few cores stays responsive."""
    try:
        import psutil

        proc = psutil.Process()
        if hasattr(psutil, "BELOW_NORMAL_PRIORITY_CLASS"):  # Windows
            proc.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS)
        else:
            proc.nice(min(19, proc.nice() + 10))
    except Exception:  # a priority we cannot change is not worth failing a benchmark for
        pass


def ping(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """An answer with nothing to compute: the round trip, and proof the agent is listening.

    ``slurm_job`` names the Slurm job the agent runs in (None outside one): the client can say
    "in Slurm job N" for a run started through ``srun``."""
    return {"pid": os.getpid(), "slurm_job": os.environ.get("SLURM_JOB_ID")}


def bench_prepare(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Import what a workload needs before the first point is timed; optionally lower the priority.

    params: ``preload`` (list of module names, e.g. ["torch"]), ``low_priority`` (bool).
    Answer: ``loaded`` and ``missing`` (module names; a missing one is reported by the point itself).
    """
    preload = params.get("preload", [])
    if not isinstance(preload, list) or not all(isinstance(m, str) and m.isidentifier() for m in preload):
        raise UserError(f"preload must be a list of top-level module names; got {preload!r:.80}")
    allowed = _preloadable()
    refused = [m for m in preload if m not in allowed]
    if refused:
        # an agent reached through a ForceCommand account must not import whatever a request names
        raise UserError(
            f"preload {refused[0]!r:.40} is not a module a workload needs; it may name "
            + ", ".join(sorted(allowed))
        )
    if params.get("low_priority") is True:
        _lower_priority()
    loaded, missing = [], []
    for name in preload:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except (Exception, SystemExit):  # the point itself will say what is missing
            missing.append(name)
    return {"loaded": loaded, "missing": missing}


def _preloadable() -> frozenset[str]:
    """The modules the workloads ask their worker to import first: all ``bench.prepare`` takes."""
    from explorer.bench.workloads import TEST_WORKLOADS, WORKLOADS

    return frozenset(m for w in (*WORKLOADS.values(), *TEST_WORKLOADS.values()) for m in w.preload)


def bench_point(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Measure one benchmark point. params: ``explorer.bench.spec.PointSpec.to_dict()``, checked.

    Answer: ``point`` (``BenchPoint.to_dict()``) and ``fatal`` (bool: the CUDA context is unusable,
    the parent replaces this agent before the next point).
    """
    from explorer.bench.execute import run_point
    from explorer.bench.spec import PointSpec
    from explorer.bench.workloads import get_workload
    from explorer.gpuqueue.share import gpu_busy, take_lapse

    try:
        spec = PointSpec.from_dict(params)
    except ValueError as exc:
        raise UserError(f"not a benchmark point: {exc}") from None
    with gpu_busy():  # the GPU's turn is kept alive while the point is measured
        point, fatal = run_point(spec, get_workload(spec.workload))
    lapse = take_lapse() if spec.device.startswith("cuda") else 0.0
    if lapse:
        said = (
            f"this run was stopped for {lapse:.0f} s while it held the GPU (suspended?), so its turn "
            "passed to the next run, which may have used the GPU meanwhile"
        )
        reason = f"{point.noise_reason}; {said}" if point.noise_reason else said
        point = replace(point, noisy=True, noise_reason=reason)
    return {"point": point.to_dict(), "fatal": bool(fatal)}


def bench_roof(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The roof this worker placed one device's points under (``explorer.bench.peaks.worker_roof``:
    the device's reported peaks and this machine's stored ceilings, built once per worker), so the
    results carry it and are drawn under it. Measures nothing. params: ``device`` (``cpu`` or
    ``cuda:N``). Answer: ``roof`` (``Roof.to_dict()``; its ``notice`` says, once, what the user
    must hear: the stored ceilings were damaged, a busy measurement did not replace a quiet one)."""
    from explorer.bench.peaks import worker_roof
    from explorer.inputs import parse_device_key

    device = params.get("device")
    if not isinstance(device, str):
        raise UserError(f"bench.roof needs a device cpu or cuda:N; got {device!r:.60}")
    roof = worker_roof(parse_device_key(device))
    answer = {"roof": roof.to_dict()}
    roof.notice = ""  # said once
    return answer


def roofs_measure(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Measure one device's ceilings again and store them (``explorer.bench.peaks.ensure_measured``),
    saying how far it got as events ``{"progress": 0.42, "message": "memory levels: ..."}``. A
    measurement disturbed by other programs does not replace a quiet stored one. params: ``device``
    (``cpu`` or ``cuda:N``). Answer: ``roof`` (the device's roof as stored now, ``Roof.to_dict()``)
    and ``message`` (one line: what was measured and what is kept)."""
    from explorer.bench.peaks import ensure_measured, worker_roof
    from explorer.inputs import parse_device_key

    device = params.get("device")
    if not isinstance(device, str):
        raise UserError(f"roofs.measure needs a device cpu or cuda:N; got {device!r:.60}")
    device = parse_device_key(device)

    def progress(fraction: float, text: str) -> None:
        emit({"progress": round(min(1.0, max(0.0, fraction)), 3), "message": text[:200]})

    saved = ensure_measured(device, force=True, progress=progress)
    if saved is None:
        raise UserError(f"{device} is not on this machine, or has no ceilings to measure")
    roof = worker_roof(device)
    answer = {"roof": roof.to_dict(), "message": saved.message}
    roof.notice = ""
    return answer


def gpu_lock(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Take, or keep, this machine's turn on a GPU (``explorer.gpuqueue.share``), asked before every
    point: runs of several users on one GPU take turns instead of timing each other. While another
    run holds it, an event (``QueueWait.to_event``: ``message`` such as "waiting for cuda:0: bob has
    held it since 14:02:11 (matmul, 3 min 5 s); you are next (waited 12 s)", ``waiting_s``,
    ``holder``, ``ahead``, ``stalled``) is sent about once a second. params: ``device``
    (``cuda:N``), ``workload`` (its name, shown to those who wait). Answer: ``key``, ``waited_s``."""
    from explorer.gpuqueue.share import gpu_identity, hold_gpu_lock
    from explorer.inputs import parse_device_key

    device = params.get("device")
    if not isinstance(device, str) or not device.startswith("cuda"):
        raise UserError(f"gpu.lock needs a device cuda:N; got {device!r:.60}")
    device = parse_device_key(device)
    workload = params.get("workload", "")
    if not isinstance(workload, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{0,60}", workload):
        raise UserError(f"gpu.lock's workload must be a workload's name; got {workload!r:.60}")
    key, _ = gpu_identity(device)
    waited = hold_gpu_lock(key, lambda wait: emit(wait.to_event()), device=device, workload=workload)
    return {"key": key, "waited_s": round(waited, 3)}


def selftest_simulator(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The self-test's kernel under numba's CUDA simulator (the agent must be started with it on)."""
    from explorer.commands.simcheck import simulator_kernel_check

    return simulator_kernel_check()


def kernel_trace(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """A student's script under the simulator, traced line by line (``explorer.kernels``); the
    agent must be started with the simulator on, and serves one script before it is closed."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise UserError("kernel.trace needs an agent started with NUMBA_ENABLE_CUDASIM=1")
    path = params.get("path")
    if not isinstance(path, str) or not path:
        raise UserError(f"path must be a file name; got {path!r:.80}")
    max_threads = _bounded(params, "max_threads", 1, 1 << 20)
    from explorer.kernels.trace import run_script

    return run_script(path, max_threads)


def _whole_numbers(value: Any, name: str, count: int | None = None) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise UserError(f"{name} must be a list of whole numbers; got {value!r}")
    if count is not None and len(value) != count:
        raise UserError(f"{name} must have {count} numbers; got {len(value)}")
    return value


def realrun_run(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The launch visualizer's real run (``explorer.launch_runs.realrun``) with the simulator on or off as
    the agent was started. params: ``grid``, ``block`` (3 whole numbers each), ``n`` (whole number
    or null), ``extent`` (3 whole numbers, a 2D/3D problem's size, or null), ``emulate`` (bool:
    the compiled CPU emulation instead of CUDA), ``device_index`` (the CUDA GPU to run on, or null
    for the first), and either ``out`` (the .npz file a parent on this machine reads; the answer is
    ``backend``) or ``inline: true`` (a parent on another machine: the answer is ``result``, the
    arrays compressed into the line, ``explorer.launch_runs.realrun.result_to_inline``)."""
    from explorer.launch_runs.realrun import (
        REMOTE_MAX_ELEMENTS,
        check_size,
        result_to_inline,
        run_here,
        run_to_file,
    )

    grid = _whole_numbers(params.get("grid"), "grid", 3)
    block = _whole_numbers(params.get("block"), "block", 3)
    n = params.get("n")
    if n is not None:
        n = _whole_numbers([n], "n")[0]
    inline = params.get("inline", False)
    out = params.get("out")
    if inline is not True and (not isinstance(out, str) or not out):
        raise UserError(f"out must name a file (or inline be true); got {out!r}")
    extent = params.get("extent")
    if extent is not None:
        extent = _whole_numbers(extent, "extent", 3)
    emulate = params.get("emulate", False)
    if not isinstance(emulate, bool):
        raise UserError(f"emulate must be true or false; got {emulate!r}")
    device_index = params.get("device_index")
    if device_index is not None:
        device_index = _whole_numbers([device_index], "device_index")[0]
        _select_gpu(device_index, emulate)
    if inline is True:
        elements = check_size(
            grid,
            block,
            n,
            simulator=os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
            backend="emulation" if emulate else None,
            extent=extent,
        )
        if elements > REMOTE_MAX_ELEMENTS:
            raise UserError(
                f"N is {elements:,}; a run sent back inline keeps at most {REMOTE_MAX_ELEMENTS:,} elements"
            )
        return {"result": result_to_inline(run_here(grid, block, n, emulate=emulate, extent=extent))}
    assert isinstance(out, str)
    return {"backend": run_to_file(grid, block, n, _own_temp_file(out), emulate=emulate, extent=extent)}


#: the name ``explorer.launch_runs.realrun`` gives the file a local run's result comes back in
_REALRUN_OUT = re.compile(r"explorer-realrun-[A-Za-z0-9_]+\.npz")


def _own_temp_file(out: str) -> str:
    """``out`` when it is the empty private temporary file a local parent made for the result
    (``tempfile.mkstemp`` in this machine's temp folder, owned by this user, mode 600); UserError
    otherwise. An agent reached over ssh (a ForceCommand account included) thus never writes
    anywhere a request names: a remote parent asks for the result inline."""
    path = Path(out)
    refused = UserError(
        f"out {out[:80]!r} is not a result file the app made (an empty, private "
        f"explorer-realrun-*.npz in {tempfile.gettempdir()}); ask for the result inline"
    )
    here = Path(tempfile.gettempdir())
    if not path.is_absolute() or path.parent != here or not _REALRUN_OUT.fullmatch(path.name):
        raise refused
    try:
        st = os.lstat(path)
    except OSError:
        raise refused from None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size != 0:
        raise refused
    if os.name == "posix" and (st.st_uid != os.getuid() or st.st_mode & 0o077):
        raise refused
    return str(path)


def _select_gpu(index: int, emulate: bool) -> None:
    """Make CUDA GPU ``index`` numba's current one (the simulator and the emulation have one)."""
    if emulate or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return
    from explorer.numbacuda import cuda

    present = len(cuda.gpus) if cuda.is_available() else 0
    if index >= present:
        raise UserError(f"cuda:{index} is not present; this machine has {count(present, 'CUDA GPU')}")
    cuda.select_device(index)


def _bounded(params: dict[str, Any], name: str, low: int, high: int) -> int:
    value = params.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise UserError(f"{name} must be a whole number from {low} to {high}; got {value!r:.60}")
    return value


def measured_blocks(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Blocks that spin ``spin_ns`` each, every block's SM and start and end recorded
    (``explorer.launch_runs.measured``). params: ``grid``, ``block`` (3 whole numbers each), ``smem``
    (bytes), ``spin_ns``, ``device_index`` (or null). Answer: ``sm``, ``start``, ``end`` (lists),
    ``regs``, ``device_name``, ``backend``, ``sm_count``."""
    from explorer.launch_runs.measured import MAX_MEASURED_BLOCKS, MAX_MEASURED_SMEM, SPIN_NS, record_here

    grid = _whole_numbers(params.get("grid"), "grid", 3)
    block = _whole_numbers(params.get("block"), "block", 3)
    if not all(v >= 1 for v in grid + block) or grid[0] * grid[1] * grid[2] > MAX_MEASURED_BLOCKS:
        raise UserError(
            f"grid {grid} and block {block} must be positive, at most {MAX_MEASURED_BLOCKS} blocks"
        )
    smem = _bounded(params, "smem", 0, MAX_MEASURED_SMEM)
    spin = _bounded(params, "spin_ns", 1, SPIN_NS)
    if params.get("device_index") is not None:
        _select_gpu(_whole_numbers([params.get("device_index")], "device_index")[0], False)
    return record_here(grid, block, smem, spin)


def measured_bandwidth(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """A pointer chase, then a streaming read at each warps-per-SM count (``explorer.launch_runs.measured``).
    params: ``warps`` (list), ``stream_bytes``, ``chase_bytes``, ``chase_steps``, ``repeats``,
    ``device_index`` (or null). Answer: ``latency_ns``, ``points``, ``device_name``, ``backend``,
    ``sm_count``."""
    from explorer.launch_runs.measured import CHASE_BYTES, CHASE_STEPS, STREAM_BYTES, bandwidth_here

    warps = _whole_numbers(params.get("warps"), "warps")
    if not warps or not all(1 <= w <= 64 for w in warps):
        raise UserError(f"warps must list counts from 1 to 64; got {warps!r:.60}")
    stream = _bounded(params, "stream_bytes", 4096, 4 * STREAM_BYTES)
    chase = _bounded(params, "chase_bytes", 256, 4 * CHASE_BYTES)
    steps = _bounded(params, "chase_steps", 1, 10 * CHASE_STEPS)
    repeats = _bounded(params, "repeats", 1, 50)
    if params.get("device_index") is not None:
        _select_gpu(_whole_numbers([params.get("device_index")], "device_index")[0], False)
    return bandwidth_here(warps, stream, chase, steps, repeats)


def devices_list(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The machine's devices, as ``device-explorer devices --json`` lists them (what a remote
    machine's Devices panel shows). params: ``catalog`` (bool: spec sheets too; default false).
    Answer: ``discovery`` (``Discovery.to_dict()``), ``why_no_gpu`` (str or null), ``hostname``."""
    import socket

    from explorer.devices.discover import discover

    catalog = params.get("catalog", False)
    if not isinstance(catalog, bool):
        raise UserError(f"catalog must be true or false; got {catalog!r}")
    # NVML and the CUDA driver (ctypes) alone, as `devices --json` lists them: no torch, no numba
    discovery = discover(include_catalog=catalog, runtimes=False)
    return {
        "discovery": discovery.to_dict(),
        "why_no_gpu": discovery.why_no_gpu(),
        "hostname": socket.gethostname(),
    }


def devices_live(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """One live sample of each GPU named (NVML indices), a few driver calls each: what the Devices
    panel polls about once a second. params: ``nvml_indices`` (list of whole numbers).
    Answer: ``readings`` (``LiveReading.to_dict()`` per index, in order), or ``error`` (one line)
    when NVML cannot be used at all."""
    from explorer.devices.nvml import NvmlSession, NvmlUnavailable

    indices = _whole_numbers(params.get("nvml_indices", []), "nvml_indices")
    session = _NVML_SESSION.get("session")
    if session is None:
        session = NvmlSession()
        try:
            session.init()
        except NvmlUnavailable as exc:
            return {"readings": [], "error": str(exc)}
        _NVML_SESSION["session"] = session  # kept open: the agent polls it every second
    readings = []
    for index in indices:
        try:
            readings.append(session.read_live(index).to_dict())
        except Exception as exc:  # a GPU that stopped answering: say so for that GPU
            from explorer.devices.live import LiveReading
            from explorer.devices.nvml import explain_field_error

            readings.append(LiveReading.failed(time.time(), explain_field_error(exc)).to_dict())
    return {"readings": readings}


_NVML_SESSION: dict[str, Any] = {}


def selftest_run(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The self-test's checks on this machine (``self-test --host`` runs it on a remote), each
    check streamed as an event ``{"line": ..., "check": {...}}`` as soon as it is known.
    params: ``skip`` (check names to leave out, e.g. ["window"] on a server without a display),
    ``server`` (true: the machine serves students' GPU runs; a GPU its torch cannot use fails, and
    its GPU queue is checked).
    Answer: ``checks`` (list of {name, status, detail, duration_s})."""
    from dataclasses import asdict

    from explorer.commands.selftest import collect_checks

    skip = params.get("skip", [])
    if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
        raise UserError(f"skip must be a list of check names; got {skip!r:.80}")
    server = params.get("server", False)
    if not isinstance(server, bool):
        raise UserError(f"server must be true or false; got {server!r:.40}")
    checks = collect_checks(
        on_check=lambda c: emit({"line": c.line(), "check": asdict(c)}), skip=tuple(skip), gpu_server=server
    )
    return {"checks": [asdict(c) for c in checks]}


METHODS: dict[str, Method] = {
    "ping": ping,
    "bench.prepare": bench_prepare,
    "bench.point": bench_point,
    "bench.roof": bench_roof,
    "roofs.measure": roofs_measure,
    "gpu.lock": gpu_lock,
    "selftest.simulator": selftest_simulator,
    "kernel.trace": kernel_trace,
    "realrun.run": realrun_run,
    "measured.blocks": measured_blocks,
    "measured.bandwidth": measured_bandwidth,
    "devices.list": devices_list,
    "devices.live": devices_live,
    "selftest.run": selftest_run,
}


def heartbeat_s() -> float:
    """How long an agent whose parent beats goes on without a word from it: the admin's
    ``heartbeat_s`` in the GPU queue's policy file (``explorer.gpuqueue.tickets.read_policy``: only
    a file root owns and alone may write), 20 s without one."""
    from explorer.gpuqueue.tickets import queue_dir, read_policy

    return read_policy(queue_dir()).heartbeat_s


def run_agent(args: object = None) -> NoReturn:
    """The hidden ``agent`` sub-command: serve ``METHODS`` until ``bye`` or the end of stdin (or
    the parent's heartbeat stops), then end the process (``explorer.agent.serve.run_agent`` says
    why it never returns)."""
    serve.run_agent(METHODS, heartbeat_s())
