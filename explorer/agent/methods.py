"""What an agent can be asked to do: method name -> function(params, emit) -> answer.

Each method takes the request's ``params`` (a JSON object, checked here before use), may stream
parts of its answer with ``emit(dict)``, and returns the final answer as a dict. A method raises
``UserError`` (or any exception) to fail the request with one line; the agent goes on serving.

The work itself lives in the core modules; these functions only unpack params, import what the
method needs (lazily, so an agent starts in a fraction of a second) and pack the answer.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from typing import Any

from explorer.errors import UserError

Emit = Callable[[dict[str, Any]], None]
Method = Callable[[dict[str, Any], Emit], dict[str, Any]]


def _lower_priority() -> None:
    """Run below normal priority so a window sharing few cores stays responsive."""
    try:
        import psutil

        proc = psutil.Process()
        if hasattr(psutil, "BELOW_NORMAL_PRIORITY_CLASS"):  # Windows
            proc.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS)
        else:
            proc.nice(min(19, proc.nice() + 10))
    except Exception:  # noqa: BLE001 - a priority we cannot change is not worth failing a benchmark for
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
        raise UserError(f"preload must be a list of top-level module names; got {preload!r}")
    if params.get("low_priority") is True:
        _lower_priority()
    loaded, missing = [], []
    for name in preload:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except (Exception, SystemExit):  # noqa: BLE001 - the point itself will say what is missing
            missing.append(name)
    return {"loaded": loaded, "missing": missing}


def bench_point(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Measure one benchmark point. params: the fields of ``explorer.bench.execute.PointSpec``.

    Answer: ``point`` (``BenchPoint.to_dict()``) and ``fatal`` (bool: the CUDA context is unusable,
    the parent replaces this agent before the next point).
    """
    from explorer.bench.execute import PointSpec, run_point

    try:
        spec = PointSpec(**params)
    except TypeError as exc:
        raise UserError(f"not a benchmark point: {exc}") from None
    point, fatal = run_point(spec)
    return {"point": point.to_dict(), "fatal": bool(fatal)}


def bench_roof(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The roofline ceilings known on this machine for one device (``explorer.bench.peaks``: its
    reported peaks and what the benchmark worker measured and cached here), so a remote run's
    points can be drawn under that machine's roof. Measures nothing. params: ``device``
    (``cpu`` or ``cuda:N``). Answer: ``roof`` (``Roof.to_dict()``)."""
    from explorer.bench.peaks import device_roof
    from explorer.inputs import parse_device_key

    device = params.get("device")
    if not isinstance(device, str):
        raise UserError(f"bench.roof needs a device cpu or cuda:N; got {device!r:.60}")
    return {"roof": device_roof(parse_device_key(device)).to_dict()}


def gpu_lock(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Take this machine's lock on a GPU for the rest of the agent's life (``explorer.agent.gpushare``):
    runs of several users on one GPU queue instead of timing each other. While another run holds
    it, an event ``{"waiting_s": N, "message": "waiting: another run is using this GPU (Ns)"}`` is
    sent about once a second. params: ``device`` (``cuda:N``). Answer: ``key``, ``waited_s``."""
    from explorer.agent.gpushare import gpu_identity, hold_gpu_lock, waiting_message
    from explorer.inputs import parse_device_key

    device = params.get("device")
    if not isinstance(device, str) or not device.startswith("cuda"):
        raise UserError(f"gpu.lock needs a device cuda:N; got {device!r:.60}")
    device = parse_device_key(device)
    key, _ = gpu_identity(device)
    waited = hold_gpu_lock(key, lambda s: emit({"waiting_s": round(s, 1), "message": waiting_message(s)}))
    return {"key": key, "waited_s": round(waited, 3)}


def selftest_simulator(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The self-test's kernel under numba's CUDA simulator (the agent must be started with it on)."""
    from explorer.agent.simcheck import simulator_kernel_check

    return simulator_kernel_check()


def _whole_numbers(value: Any, name: str, count: int | None = None) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise UserError(f"{name} must be a list of whole numbers; got {value!r}")
    if count is not None and len(value) != count:
        raise UserError(f"{name} must have {count} numbers; got {len(value)}")
    return value


def realrun_run(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The launch visualizer's real run (``explorer.launch.realrun``) with the simulator on or off as
    the agent was started. params: ``grid``, ``block`` (3 whole numbers each), ``n`` (whole number
    or null), ``extent`` (3 whole numbers, a 2D/3D problem's size, or null), ``emulate`` (bool:
    the compiled CPU emulation instead of CUDA), ``device_index`` (the CUDA GPU to run on, or null
    for the first), and either ``out`` (the .npz file a parent on this machine reads; the answer is
    ``backend``) or ``inline: true`` (a parent on another machine: the answer is ``result``, the
    arrays compressed into the line, ``explorer.launch.realrun.result_to_inline``)."""
    from explorer.launch.realrun import (
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
    return {"backend": run_to_file(grid, block, n, out, emulate=emulate, extent=extent)}


def _select_gpu(index: int, emulate: bool) -> None:
    """Make CUDA GPU ``index`` numba's current one (the simulator and the emulation have one)."""
    if emulate or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return
    from numba import cuda

    count = len(cuda.gpus) if cuda.is_available() else 0
    if index >= count:
        raise UserError(f"cuda:{index} is not present; this machine has {count} CUDA GPU(s)")
    cuda.select_device(index)


def devices_list(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The machine's devices, as ``device-explorer devices --json`` lists them (what a remote
    machine's Devices panel shows). params: ``catalog`` (bool: spec sheets too; default false).
    Answer: ``discovery`` (``Discovery.to_dict()``), ``why_no_gpu`` (str or null), ``hostname``."""
    import socket

    from explorer.devices.discover import discover

    catalog = params.get("catalog", False)
    if not isinstance(catalog, bool):
        raise UserError(f"catalog must be true or false; got {catalog!r}")
    # quick: a machine with neither NVML nor the CUDA driver skips importing torch and numba
    # (seconds) since they could not find a GPU there either; the reports say so
    discovery = discover(include_catalog=catalog, quick=True)
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
        except Exception as exc:  # noqa: BLE001 - a GPU that stopped answering: say so for that GPU
            from explorer.devices.model import LiveReading
            from explorer.devices.nvml import explain_field_error

            readings.append(LiveReading.failed(time.time(), explain_field_error(exc)).to_dict())
    return {"readings": readings}


_NVML_SESSION: dict[str, Any] = {}


def selftest_run(params: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """The self-test's checks on this machine (``self-test --host`` runs it on a remote), each
    check streamed as an event ``{"line": ..., "check": {...}}`` as soon as it is known.
    params: ``skip`` (check names to leave out, e.g. ["window"] on a server without a display).
    Answer: ``checks`` (list of {name, status, detail, duration_s})."""
    from dataclasses import asdict

    # by name: the command's module is not part of the type-checked core (it can reach Qt)
    collect_checks = importlib.import_module("explorer.commands.selftest").collect_checks

    skip = params.get("skip", [])
    if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
        raise UserError(f"skip must be a list of check names; got {skip!r:.80}")
    checks = collect_checks(on_check=lambda c: emit({"line": c.line(), "check": asdict(c)}), skip=tuple(skip))
    return {"checks": [asdict(c) for c in checks]}


METHODS: dict[str, Method] = {
    "ping": ping,
    "bench.prepare": bench_prepare,
    "bench.point": bench_point,
    "bench.roof": bench_roof,
    "gpu.lock": gpu_lock,
    "selftest.simulator": selftest_simulator,
    "realrun.run": realrun_run,
    "devices.list": devices_list,
    "devices.live": devices_live,
    "selftest.run": selftest_run,
}
