"""``device-explorer self-test``: is this installation (or bundle) whole, and does it work here?

A lab copies the bundle onto thirty machines; this command tells them in a few seconds whether
each one can run the app: every dependency imports, the data files are found, devices are probed,
torch computes a right answer on the CPU, numba's compiled code is in its cache (compiled once
here, so the first dispatch need not wait for it), the benchmark engine times a matmul in its worker
process, a numba kernel runs under the CUDA simulator in a child
process (the path the launch visualizer's real run takes), and the window renders offscreen.

One line per check, PASS / FAIL / WARN / INFO with the reason; exit 0 only when nothing failed. A
machine without an NVIDIA GPU is not a failure (the app is built to teach on one): that is an INFO
line. A measurement other programs disturbed, or one far below what this process measures for the
same work, is a WARN line with its reason: the engine works, but that figure is not the machine's.

The simulator check asks an agent (``explorer.agent``: ``device-explorer agent``, the same worker
the benchmarks use) started with ``NUMBA_ENABLE_CUDASIM=1``: numba reads that switch once, at
import, so it cannot be flipped in a process that may already have imported numba.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from explorer import __version__
from explorer.commands.remote import RemoteUnreachable
from explorer.commands.simcheck import SIM_BLOCK
from explorer.remote.target import Remote
from explorer.words import count

Status = Literal["pass", "fail", "info", "warn"]

CHILD_TIMEOUT_S = 180.0
# Dependencies as (import name, distribution name): the import proves the files are there and the
# shared libraries load; the version goes into the report so a lab can quote it.
DEPENDENCIES: tuple[tuple[str, str], ...] = (
    ("PySide6.QtWidgets", "PySide6-Essentials"),
    ("pyqtgraph", "pyqtgraph"),
    ("numpy", "numpy"),
    ("torch", "torch"),
    ("numba", "numba"),
    ("llvmlite", "llvmlite"),
    ("pynvml", "nvidia-ml-py"),
    ("psutil", "psutil"),
    ("cpuinfo", "py-cpuinfo"),
    ("platformdirs", "platformdirs"),
)
MATMUL_N = 256  # small enough for a fraction of a second on any laptop, big enough to use BLAS
BENCH_N = 128  # the benchmark engine's point: the worker's start-up (importing torch) dominates
# The engine's median may be this many times the best time this process measures for the same
# matmul before it is called implausible (a quiet machine gives 1-1.5x: the worker is a separate,
# equally threaded process timing the same call).
IMPLAUSIBLY_SLOW = 3.0
_found_gpus = (
    0  # present GPUs the devices check found; the GPU workload check explains if torch cannot use them
)
_gpu_server = False  # the checks run on a lab's GPU server for ``self-test --host`` (collect_checks)


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    duration_s: float = 0.0

    def line(self) -> str:
        return f"{self.status.upper():<4}  {self.name:<22} {self.detail}"


class CheckFailed(Exception):
    """Raised inside a check with the one line the user should read."""


def _module_version(module: Any, dist: str) -> str:
    for attr in ("__version__", "VERSION", "CPUINFO_VERSION_STRING"):
        value = getattr(module, attr, None)
        if isinstance(value, str):
            return value
        if isinstance(value, tuple) and value:
            return ".".join(str(v) for v in value)
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # a bundle may carry no metadata; the import itself is what counts
        return "version unknown"


def check_import(module_name: str, dist: str) -> str:
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure is this check's answer
        raise CheckFailed(f"cannot import {module_name}: {type(exc).__name__}: {exc}") from exc
    if module_name.startswith("PySide6"):
        import PySide6

        module = PySide6
    return f"{dist} {_module_version(module, dist)}"


def check_resources() -> str:
    from explorer.resources import resources_dir

    folder = resources_dir()
    missing = [name for name in ("catalog.json",) if not (folder / name).is_file()]
    if missing:
        raise CheckFailed(f"{', '.join(missing)} not found in {folder}")
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root and not str(folder.resolve()).startswith(str(os.path.realpath(frozen_root))):
        raise CheckFailed(f"the bundle reads data from {folder}, outside the bundle ({frozen_root})")
    files = sum(1 for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc")
    return f"{files} files in {folder}"


def check_devices(notes: list[Check]) -> str:
    from explorer.devices.discover import discover

    global _found_gpus
    discovery = discover()
    _found_gpus = len(discovery.present_gpus)
    cpu = discovery.cpu
    if cpu is None:
        failed = [r.message for r in discovery.reports if r.probe == "cpu"]
        raise CheckFailed("no CPU found: " + (" ".join(failed) or "the CPU probe reported nothing"))
    catalog = discovery.catalog
    if not catalog:
        failed = [r.message for r in discovery.reports if r.probe == "catalog" and not r.ok]
        raise CheckFailed("the GPU catalog is empty: " + (" ".join(failed) or "no spec sheets loaded"))
    gpus = discovery.present_gpus
    if gpus:
        names = ", ".join(d.display_name for d in gpus)
        notes.append(Check("gpu", "info", f"{count(len(gpus), 'NVIDIA GPU')}: {names}"))
    else:
        notes.append(Check("gpu", "info", discovery.why_no_gpu() or "no NVIDIA GPU found"))
    threads = cpu.logical_cores
    return (
        f"CPU {cpu.name} ({threads or '?'} threads), {count(len(gpus), 'GPU')}, {len(catalog)} catalog sheets"
    )


def check_cpu_matmul() -> str:
    """torch's float32 matmul on the CPU gives the right answer (a broken BLAS gives garbage)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32)
    b_np = rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32)
    got = (torch.from_numpy(a_np) @ torch.from_numpy(b_np)).numpy()
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    if not err < 1e-4:
        raise CheckFailed(f"torch's {MATMUL_N}x{MATMUL_N} matmul is wrong: relative error {err:.2e}")
    return f"torch {MATMUL_N}x{MATMUL_N} float32 matmul matches numpy (relative error {err:.1e})"


def check_compiled_code() -> str:
    """numba's compiled code, written once to its cache so that the first real use starts at once:
    the dispatch loop (about 10 s to compile), the real run's CPU emulation and the clock chain.
    The folder must be writable (a bundle must not cache inside itself)."""
    import numpy as np

    from explorer.jitcache import configure, is_cached

    setup = configure()
    from explorer.bench.clock import chain_kernel
    from explorer.launch.dispatch import warm_up
    from explorer.launch.dispatch_loop import run_dispatch
    from explorer.launch_runs.realrun_emulation import emulate

    functions = {"the dispatch loop": run_dispatch, "the real run's emulation": emulate}
    cold = [what for what, f in functions.items() if is_cached(f) is False]
    t0 = time.perf_counter()
    warm_up()  # announces its own first compile on stderr
    one, scratch, values = np.ones(3, np.int64), np.zeros(1, np.int64), np.zeros(1, np.float32)
    emulate(
        one,
        one,
        np.zeros(3, np.int64),
        values,
        values,
        values.copy(),
        scratch,
        scratch.copy(),
        np.zeros(1, np.int32),
        1,
    )
    chain_kernel()(10, 1, 2)
    elapsed = time.perf_counter() - t0
    missing = [what for what, f in functions.items() if is_cached(f) is False]
    if missing:
        raise CheckFailed(f"numba did not keep {' and '.join(missing)} in its cache folder {setup.folder}")
    how = f"compiled {' and '.join(cold)}" if cold else "loaded from the cache"
    note = f"; {setup.note}" if setup.note else ""
    return f"numba code {how} in {elapsed:.1f} s, kept in {setup.folder}{note}"


def best_matmul_s(n: int, calls: int = 30) -> float:
    """The fastest of ``calls`` n x n float32 matmuls in this process: what the machine can do."""
    import torch

    a, b = torch.rand(n, n), torch.rand(n, n)
    c = torch.empty(n, n)
    for _ in range(3):
        torch.mm(a, b, out=c)
    best = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    return best


def benchmark_warnings(point: Any, reference_s: float) -> list[str]:
    """Why the engine's figure cannot be trusted as this machine's speed; empty when it can."""
    out = []
    if point.noisy:
        out.append(f"the matmul point was disturbed: {point.noise_reason}")
    if point.median_s and reference_s > 0 and point.median_s > IMPLAUSIBLY_SLOW * reference_s:
        ratio = point.median_s / reference_s
        rate = f" ({point.throughput:.3g} {point.throughput_unit})" if point.throughput else ""
        out.append(
            f"the matmul point's median {point.median_s * 1e6:.0f} us{rate} is {ratio:.0f}x the "
            f"{reference_s * 1e6:.0f} us this process measured for the same matmul: implausibly slow"
        )
    return out


def check_benchmark_engine(notes: list[Check]) -> str:
    """One matmul point through the benchmark engine: a worker process, honest timing, a result row;
    a WARN note when that figure was disturbed or is far below what this process measures."""
    from explorer.bench.runner import BenchPlan, BenchRun

    plan = BenchPlan(
        workload="matmul",
        devices=["cpu"],
        sizes=[BENCH_N],
        repeats=3,
        time_budget_s=0.5,
        point_timeout_s=CHILD_TIMEOUT_S,
    )
    points = BenchRun(plan).run_all()
    if len(points) != 1:
        raise CheckFailed(f"the benchmark engine returned {len(points)} points for a one-point plan")
    point = points[0]
    if point.error is not None:
        raise CheckFailed(f"the matmul benchmark failed in its worker process: {point.error}")
    if not point.median_s or point.median_s <= 0:
        raise CheckFailed(f"the matmul benchmark measured no time (median {point.median_s})")
    rate = f", {point.throughput:.1f} {point.throughput_unit}" if point.throughput else ""
    for warning in benchmark_warnings(point, best_matmul_s(BENCH_N)):
        notes.append(
            Check("benchmark engine", "warn", warning + "; run it again when the machine is quieter")
        )
    return (
        f"matmul n={BENCH_N} in a worker process: median {point.median_s * 1e6:.0f} us{rate}, "
        f"{count(point.threads, 'thread') if point.threads is not None else 'threads not reported'}, "
        f"{count(point.repeats, 'repeat')}"
    )


def check_gpu_workload(notes: list[Check]) -> str | None:
    """On a machine whose torch sees a GPU, the same matmul on it; ``None`` when there is none.

    On a lab's GPU server (``self-test --host``) a GPU that torch cannot use fails the check: the
    students' GPU benchmarks are what the server is for. On a laptop it is a note."""
    import torch

    if not torch.cuda.is_available():
        if _found_gpus:
            why = (
                "this torch is a CPU-only build"
                if torch.version.cuda is None
                else f"torch (CUDA {torch.version.cuda}) cannot use it; check the driver version"
            )
            if _gpu_server:
                raise CheckFailed(
                    f"NVML sees {count(_found_gpus, 'NVIDIA GPU')} but {why} ({torch.__version__}): GPU benchmarks "
                    f"cannot run here; install a CUDA build of torch in {sys.prefix}"
                )
            notes.append(
                Check(
                    "gpu benchmarks",
                    "info",
                    f"an NVIDIA GPU is present but {why}: GPU benchmarks are unavailable, "
                    "the devices panel and the launch visualizer still work",
                )
            )
        return None
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda")
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda")
    got = (a @ b).cpu().double()
    want = a.cpu().double() @ b.cpu().double()
    err = float((got - want).abs().max() / want.abs().max())
    if not err < 1e-2:  # TF32 may be on; a broken GPU path is off by far more than this
        raise CheckFailed(f"the GPU matmul is wrong: relative error {err:.2e}")
    return f"torch matmul on {torch.cuda.get_device_name(0)} correct"


def check_gpu_queue() -> str:
    """A GPU server's line for its GPUs (``explorer.gpuqueue.tickets``): a folder no user can break,
    and the admin's bounds (or the defaults, and why a policy file there was not used)."""
    from explorer.gpuqueue.tickets import folder_problem, queue_dir, read_policy

    folder = queue_dir()
    problem = folder_problem(folder)
    if problem:
        raise CheckFailed(problem)
    policy = read_policy(folder)
    source = (
        f"from {policy.source}"
        if policy.source
        else "the defaults" + (f"; {policy.note}" if policy.note else "")
    )
    return (
        f"GPU queue in {folder}: a run that stops making progress loses its turn after {policy.stall_s:g} s, "
        f"a turn lasts {policy.turn_s:g} s (+{policy.grace_s:g} s for a point) while others wait ({source})"
    )


def check_cuda_simulator() -> str:
    """A numba kernel under the CUDA simulator, in an agent started with the simulator switched on
    (numba reads ``NUMBA_ENABLE_CUDASIM`` once, at import, so it cannot be flipped in this process)."""
    from explorer.agent.child import local_agent
    from explorer.agent.protocol import AgentError

    agent = local_agent(env_overrides={"NUMBA_ENABLE_CUDASIM": "1"}, label="the simulator child")
    try:
        agent.start()
        result = agent.request("selftest.simulator", timeout_s=CHILD_TIMEOUT_S)
    except AgentError as exc:
        raise CheckFailed(str(exc)) from None
    finally:
        agent.close()
    if not result.get("ok"):
        raise CheckFailed(str(result.get("error", "the simulator kernel gave a wrong answer")))
    return (
        f"numba {result['numba']} vector add, {result['n']} elements in {result['blocks']} blocks of "
        f"{SIM_BLOCK}: every element right ({result['kernel_s'] * 1000:.0f} ms in a child process)"
    )


def check_real_run() -> str:
    """The launch visualizer's real run, through its own child-process path, under the simulator."""
    try:
        from explorer.launch.config import Dim3, LaunchConfig
        from explorer.launch_runs.realrun import run_real
    except ImportError as exc:
        raise CheckFailed(f"explorer.launch_runs.realrun is missing: {exc}") from exc
    launch = LaunchConfig(Dim3(2), Dim3(64), n=100)
    result = run_real(launch, simulator=True, timeout_s=CHILD_TIMEOUT_S)
    if result.untouched or result.written_twice or not result.sum_correct:
        raise CheckFailed(result.summary())
    return f"grid 2, block 64, N 100 under the simulator: every element written once ({result.total_s:.1f} s)"


def _find_renderer() -> Callable[..., Any]:
    try:
        from explorer.commands.gui import render_window
    except ImportError as exc:
        raise CheckFailed(f"the window cannot be rendered: {exc}") from exc
    return render_window


def check_window() -> str:
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        # Never flash a window on a lab's screen: the check renders offscreen, like the screenshot command.
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    render = _find_renderer()
    image = render("devices", (960, 600))
    if image is None or image.isNull():
        raise CheckFailed("the window rendered to an empty image")
    width, height = image.width(), image.height()
    colours = {
        image.pixel(x, y)
        for x in range(0, width, max(1, width // 64))
        for y in range(0, height, max(1, height // 40))
    }
    if len(colours) < 4:
        raise CheckFailed(
            f"the rendered window is blank ({count(len(colours), 'colour')} in {width}x{height} pixels)"
        )
    return f"main window, devices panel, {width}x{height} pixels rendered offscreen ({len(colours)} colours sampled)"


def _timed(name: str, func: Callable[[list[Check]], str | None], report: list[Check]) -> None:
    """Run one check; its PASS line (or FAIL) comes first, then any INFO lines it noted."""
    t0 = time.perf_counter()
    notes: list[Check] = []
    try:
        detail = func(notes)
    except CheckFailed as exc:
        report.append(Check(name, "fail", str(exc), time.perf_counter() - t0))
        return
    except Exception as exc:  # a self-test reports every failure as a line, never a traceback
        report.append(Check(name, "fail", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0))
        return
    if detail is not None:
        report.append(Check(name, "pass", detail, time.perf_counter() - t0))
    report.extend(notes)


def _plain(func: Callable[[], str | None]) -> Callable[[list[Check]], str | None]:
    return lambda notes: func()


def planned_checks() -> list[tuple[str, Callable[[list[Check]], str | None]]]:
    """The checks in the order they run: cheap imports first, the slow child process and Qt last."""
    plan: list[tuple[str, Callable[[list[Check]], str | None]]] = [
        (f"import {module_name.split('.')[0]}", _plain(functools.partial(check_import, module_name, dist)))
        for module_name, dist in DEPENDENCIES
    ]
    plan += [
        ("resources", _plain(check_resources)),
        ("devices", check_devices),
        ("cpu matmul", _plain(check_cpu_matmul)),
        ("compiled code", _plain(check_compiled_code)),
        ("benchmark engine", check_benchmark_engine),
        ("gpu workload", check_gpu_workload),
        *([("gpu queue", _plain(check_gpu_queue))] if _gpu_server else []),
        ("cuda simulator", _plain(check_cuda_simulator)),
        ("launch real run", _plain(check_real_run)),
        ("window", _plain(check_window)),
    ]
    return plan


def collect_checks(
    *, on_check: Callable[[Check], None] | None = None, skip: tuple[str, ...] = (), gpu_server: bool = False
) -> list[Check]:
    """Run every check in order (but those named in ``skip``); ``on_check`` sees each line as soon
    as it is known (the text output). ``gpu_server``: the machine serves students' GPU runs
    (``self-test --host``): a GPU its torch cannot use fails, and its GPU queue is checked."""
    global _gpu_server
    _gpu_server = gpu_server
    report: list[Check] = []
    for name, func in planned_checks():
        if name in skip:
            continue
        shown = len(report)
        _timed(name, func, report)
        if on_check:
            for check in report[shown:]:
                on_check(check)
    return report


def run_self_test(args: argparse.Namespace) -> int:
    from explorer.commands.remote import parse_host

    remote = parse_host(args)
    if remote is not None:
        return run_remote_self_test(args, remote)
    as_json = bool(getattr(args, "json", False))
    if not as_json:
        where = "bundle" if getattr(sys, "frozen", False) else "Python " + sys.version.split()[0]
        print(f"device-explorer {__version__} self-test ({where}, {sys.executable})", flush=True)
    t0 = time.perf_counter()
    checks = collect_checks(on_check=None if as_json else lambda c: print(c.line(), flush=True))
    failed = [c for c in checks if c.status == "fail"]
    total_s = time.perf_counter() - t0
    if as_json:
        print(
            json.dumps(
                {
                    "version": __version__,
                    "frozen": bool(getattr(sys, "frozen", False)),
                    "executable": sys.executable,
                    "ok": not failed,
                    "duration_s": round(total_s, 3),
                    "checks": [asdict(c) for c in checks],
                },
                indent=2,
            )
        )
    else:
        verdict = "all checks passed" if not failed else f"{count(len(failed), 'check')} FAILED"
        warned = sum(c.status == "warn" for c in checks)
        if warned:
            verdict += f" ({count(warned, 'warning')}: see the WARN lines)"
        print(f"self-test: {verdict} in {total_s:.1f} s")
    return 1 if failed else 0


def run_remote_self_test(args: argparse.Namespace, remote: Remote) -> int:
    """``self-test --host``: the self-test's checks run by the agent there as on a GPU server (the
    window check excepted: it needs no display; a GPU its torch cannot use fails; its GPU queue is
    checked), each line shown as it comes."""
    from explorer.agent.protocol import AgentError
    from explorer.remote.session import open_agent

    as_json = bool(getattr(args, "json", False))
    if not as_json:
        print(f"self-test on {remote.label}:", flush=True)

    def show(data: dict[str, Any]) -> None:
        line = data.get("line")
        if not as_json and isinstance(line, str):
            print(line[:500], flush=True)

    try:
        with open_agent(remote) as agent:
            answer = agent.request(
                "selftest.run", {"skip": ["window"], "server": True}, timeout_s=600, on_event=show
            )
    except AgentError as exc:
        raise RemoteUnreachable(str(exc)) from None
    checks = answer.get("checks")
    if not isinstance(checks, list):
        raise RemoteUnreachable(f"the agent on {remote.host} sent no self-test checks")
    failed = [c for c in checks if not isinstance(c, dict) or c.get("status") == "fail"]
    if as_json:
        print(json.dumps({"host": remote.host, "ok": not failed, "checks": checks}, indent=2))
    else:
        verdict = "all checks passed" if not failed else f"{count(len(failed), 'check')} FAILED"
        print(f"self-test on {remote.host}: {verdict}")
    return 1 if failed else 0
