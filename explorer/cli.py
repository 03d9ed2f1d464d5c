"""The ``device-explorer`` command line.

The GUI is the default; every sub-command prints text, or JSON with ``--json``. This module
builds the parser and dispatches; the work lives in ``explorer.commands.*``, imported only for
the sub-command asked for, so ``devices --json`` never loads Qt and ``--help`` loads nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn, TypeAlias

from explorer import __version__
from explorer.errors import UserError
from explorer.inputs import one_line
from explorer.interrupts import exit_status, raise_on_termination, restore_handlers
from explorer.panels import PANELS
from explorer.terminal import guarded_streams, tolerant_streams


def _terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it ($COLUMNS, else standard
    output's terminal, else 80), without importing ``shutil``: argparse imports it for every
    argument it adds, and with it bz2, lzma and zlib, about 5 ms of every command."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's own formatter, given the width ``_terminal_columns`` finds."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width
        )


class OneLineParser(argparse.ArgumentParser):
    """argparse that answers a mistake (a missing or unknown argument) in the one line the rest
    of the CLI uses, pointing to ``--help``, instead of its multi-line usage block. ``--help``
    still prints the full help. Sub-parsers are made from this class too (``add_subparsers``
    uses the parent's class), so every sub-command behaves the same."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"device-explorer: error: {one_line(message)} (see '{self.prog} --help')\n")


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON (snake_case keys) instead of text")


def _add_lesson(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lesson", default=None, metavar="FILE", help="open a lesson file, or a built-in lesson by name"
    )
    p.add_argument("--step", default=None, metavar="K", help="the lesson's step to show first (default 1)")


def _add_launch_shape(p: argparse.ArgumentParser) -> None:
    """``--device NAME --grid X[,Y[,Z]] --block X[,Y[,Z]] [--smem B] [--regs R]``: one launch."""
    p.add_argument("--device", required=True, metavar="NAME", help='device name or unique part ("1650")')
    p.add_argument("--grid", required=True, metavar="X[,Y[,Z]]", help="grid dimensions in blocks")
    p.add_argument("--block", required=True, metavar="X[,Y[,Z]]", help="block dimensions in threads")
    p.add_argument(
        "--smem", type=str, default="0", metavar="B", help="dynamic shared memory per block, bytes"
    )
    p.add_argument("--regs", type=str, default="32", metavar="R", help="registers per thread (default 32)")


def _add_remote(p: argparse.ArgumentParser) -> None:
    """``--host DEST [--via PREFIX] [--remote-python PATH]``: do it on another machine over ssh."""
    p.add_argument(
        "--host",
        default=None,
        metavar="DEST",
        help="do it on another machine over ssh (gpu-lab, alice@gpu.example.edu, host:2222)",
    )
    p.add_argument(
        "--via",
        default=None,
        metavar="PREFIX",
        help='with --host: a launcher to run the agent through, e.g. "srun --gres=gpu:1 --time=10"',
    )
    p.add_argument(
        "--remote-python",
        default=None,
        metavar="PATH",
        help="with --host: the Python that has device-explorer there (default python3)",
    )


# Each sub-command's module, imported only when that command is asked for (a command's imports
# cost nothing until it runs: ``--help`` loads nothing, ``devices --json`` never loads Qt).
def _gui() -> ModuleType:
    from explorer.commands import gui

    return gui


def _devices() -> ModuleType:
    from explorer.commands import devices

    return devices


def _remote() -> ModuleType:
    from explorer.commands import remote

    return remote


def _occupancy() -> ModuleType:
    from explorer.commands import occupancy

    return occupancy


def _launch() -> ModuleType:
    from explorer.commands import launch

    return launch


def _launch_compare() -> ModuleType:
    from explorer.commands import launch_compare

    return launch_compare


def _latency() -> ModuleType:
    from explorer.commands import latency

    return latency


def _dispatch() -> ModuleType:
    from explorer.commands import dispatch

    return dispatch


def _bench() -> ModuleType:
    from explorer.commands import bench

    return bench


def _memory() -> ModuleType:
    from explorer.commands import memory

    return memory


def _quiz() -> ModuleType:
    from explorer.commands import quiz

    return quiz


def _kernel() -> ModuleType:
    from explorer.commands import kernel

    return kernel


def _tiling() -> ModuleType:
    from explorer.commands import tiling

    return tiling


def _lessons() -> ModuleType:
    from explorer.commands import lessons

    return lessons


def _selftest() -> ModuleType:
    from explorer.commands import selftest

    return selftest


def _agent() -> ModuleType:
    from explorer.commands import agent

    return agent


def _admin() -> ModuleType:
    from explorer.commands import admin

    return admin


Subcommands: TypeAlias = "argparse._SubParsersAction[OneLineParser]"


def _add_gui_command(sub: Subcommands) -> None:
    p = sub.add_parser("gui", help="open the main window (the default)")
    p.add_argument("--panel", choices=PANELS, default=None, help="panel to show first")
    _add_lesson(p)
    p.set_defaults(handler=lambda a: _gui().run_gui(a), check=lambda a: _gui().parse_gui(a))


def _add_devices_command(sub: Subcommands) -> None:
    p = sub.add_parser("devices", help="list the devices found (CPU, NVIDIA GPUs)")
    _add_json(p)
    p.add_argument("--catalog", action="store_true", help="also list catalog GPUs (spec sheets, not present)")
    p.add_argument(
        "--measure", action="store_true", help="measure the clock and roofline ceilings again (seconds)"
    )
    _add_remote(p)
    p.set_defaults(handler=lambda a: _devices().run_devices(a), check=lambda a: _remote().parse_host(a))


def _add_occupancy_command(sub: Subcommands) -> None:
    p = sub.add_parser(
        "occupancy", help="occupancy of one block configuration on a device or compute capability"
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--device", metavar="NAME", help='device name or unique part of it ("1650", "h100")')
    target.add_argument("--cc", metavar="X.Y", help="compute capability, e.g. 8.6")
    p.add_argument("--threads", type=str, required=True, metavar="N", help="threads per block")
    p.add_argument("--regs", type=str, default="32", metavar="R", help="registers per thread (default 32)")
    p.add_argument("--smem", type=str, default="0", metavar="BYTES", help="shared memory per block in bytes")
    _add_json(p)
    p.set_defaults(
        handler=lambda a: _occupancy().run_occupancy(a), check=lambda a: _occupancy().parse_occupancy(a)
    )


def _add_launch_command(sub: Subcommands) -> None:
    p = sub.add_parser("launch", help="how a whole launch is dispatched: warps, idle lanes, waves")
    _add_launch_shape(p)
    p.add_argument(
        "--n",
        type=str,
        default=None,
        metavar="N[,NY[,NZ]]",
        help="problem size, or its extent per axis (1920,1080): threads outside it are idle",
    )
    p.add_argument(
        "--thread",
        default=None,
        metavar="BX,BY,BZ:TX,TY,TZ",
        help="describe one thread (blockIdx:threadIdx): its position, index, warp, lane, SM, wave",
    )
    b = p.add_argument_group(
        "compare two launches",
        "--compare sets launch B beside launch A (the options above) in one table: blocks, SMs, waves, "
        "tail fill, theoretical occupancy and its limiter, and B/A of each. B is a copy of A except "
        "what a --b-* option names, e.g. --compare --b-device h100, or --compare --b-regs 64.",
    )
    b.add_argument(
        "--compare", action="store_true", help="compare launch A with launch B (the --b-* options)"
    )
    for option, metavar, what in (
        ("device", "NAME", "B's device"),
        ("grid", "X[,Y[,Z]]", "B's grid"),
        ("block", "X[,Y[,Z]]", "B's block"),
        ("smem", "B", "B's dynamic shared memory per block, bytes"),
        ("regs", "R", "B's registers per thread"),
        ("n", "N[,NY[,NZ]]", "B's problem size or extent"),
    ):
        b.add_argument(f"--b-{option}", default=None, metavar=metavar, help=f"{what} (default: A's)")
    _add_json(p)
    # --compare is a module of its own, so a single launch never loads the comparison
    p.set_defaults(
        handler=lambda a: _launch_compare().run_compare(a) if a.compare else _launch().run_launch(a),
        check=lambda a: (
            _launch_compare().parse_compare_request(a) if a.compare else _launch().parse_launch_request(a)
        ),
    )


def _add_dispatch_command(sub: Subcommands) -> None:
    p = sub.add_parser(
        "dispatch", help="blocks dispatched in time as slots free: the makespan, its bounds and the tail"
    )
    _add_launch_shape(p)
    p.add_argument(
        "--durations",
        required=True,
        metavar="uniform|jitter:P|heavy:ALPHA|rows:...|file:PATH",
        help="how long each block runs: all equal; 1 +- P; Pareto with shape ALPHA (mean 1); by block "
        "row (rows:1,4,1 or rows:mandelbrot); one number per block from a file",
    )
    p.add_argument(
        "--policy",
        default="free",
        metavar="free|round-robin",
        help="which SM gets the next block when several have room: the one with the most free slots "
        "(default, as measured on GPUs) or the next in turn (GPGPU-Sim)",
    )
    p.add_argument("--seed", default="0", metavar="N", help="seed of jitter and heavy (default 0)")
    p.add_argument(
        "--measure",
        action="store_true",
        help="run blocks of fixed length on this machine's GPU and record each block's SM, start and end",
    )
    _add_json(p)
    p.set_defaults(
        handler=lambda a: _dispatch().run_dispatch(a), check=lambda a: _dispatch().parse_dispatch(a)
    )


def _add_latency_command(sub: Subcommands) -> None:
    p = sub.add_parser(
        "latency", help="warp schedulers hiding memory latency: utilization against warps, and N*"
    )
    p.add_argument("--warps", required=True, metavar="N", help="resident warps per SM")
    p.add_argument(
        "--mem-latency",
        required=True,
        metavar="L",
        help="cycles a warp waits for its load (a measured latency of 437 cycles is L = 436)",
    )
    p.add_argument(
        "--alu", required=True, metavar="K", help="independent arithmetic instructions after each load"
    )
    p.add_argument("--schedulers", default="4", metavar="S", help="warp schedulers per SM (default 4)")
    p.add_argument(
        "--policy",
        default="gto",
        metavar="gto|lrr",
        help="greedy then oldest (default) or loose round robin",
    )
    p.add_argument(
        "--cycles", default=None, metavar="C", help="cycles to simulate (default: enough to settle)"
    )
    p.add_argument(
        "--measure",
        action="store_true",
        help="measure memory bandwidth against resident warps per SM on this machine's GPU",
    )
    _add_json(p)
    p.set_defaults(handler=lambda a: _latency().run_latency(a), check=lambda a: _latency().parse_latency(a))


def _add_bench_command(sub: Subcommands) -> None:
    p = sub.add_parser("bench", help="run a benchmark workload headless, one line per point")
    p.add_argument(
        "workload", nargs="?", help="workload name (omit to list them, and which cannot run here and why)"
    )
    p.add_argument(
        "--device",
        default=None,
        metavar="cpu|cuda:N",
        help="where to run (default cpu; cuda:0 for a workload that runs only on a GPU)",
    )
    p.add_argument(
        "--sizes", nargs="+", default=None, metavar="SIZE", help="problem sizes (default: the workload's)"
    )
    p.add_argument("--repeats", type=str, default=None, metavar="N", help="timed repeats per point")
    p.add_argument("--csv", default=None, metavar="FILE", help="also write the results to a CSV file")
    p.add_argument(
        "--remeasure-ceilings",
        action="store_true",
        help="measure the device's roofline ceilings again before the run (else cached per machine)",
    )
    p.add_argument(
        "--l2",
        default=None,
        metavar="cold|warm",
        help="GPU memory workloads: flush the L2 before each sample (cold, the default: the data comes "
        "from DRAM) or leave it as the last sample left it (warm)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="FILE",
        help="measure only the points FILE has no result for (FILE: an earlier run's --csv file, "
        "its --json lines saved, or a JSON export); the finished ones are kept",
    )
    _add_remote(p)
    _add_json(p)
    p.set_defaults(handler=lambda a: _bench().run_bench(a), check=lambda a: _bench().parse_bench(a))


def _add_screenshot_command(sub: Subcommands) -> None:
    p = sub.add_parser("screenshot", help="render the window offscreen to a PNG")
    p.add_argument("--panel", choices=PANELS, default="devices")
    p.add_argument("--out", required=True, metavar="FILE.png")
    p.add_argument("--size", default="1280x800", metavar="WxH", help="window size (default 1280x800)")
    p.add_argument(
        "--scale", default="100", metavar="PERCENT", help="text size in percent, 100 to 250 (default 100)"
    )
    _add_lesson(p)
    p.add_argument(
        "--view",
        default="",
        help=(
            "another view of the page: compare, timeline, latency (visualizer); roofline, bandwidth "
            "(benchmarks); coalescing, banks, divergence, tiling, kernel (memory)"
        ),
    )
    p.set_defaults(handler=lambda a: _gui().run_screenshot(a), check=lambda a: _gui().parse_screenshot(a))


def _add_memory_command(sub: Subcommands) -> None:
    p = sub.add_parser("memory", help="one warp's global (coalescing) or shared (banks) memory access")
    p.add_argument(
        "--space", required=True, choices=("global", "shared"), help="global memory or shared memory"
    )
    p.add_argument("--elem", default="4", metavar="BYTES", help="element size: 1, 2, 4, 8 or 16 (default 4)")
    p.add_argument(
        "--stride", default="1", metavar="S", help="elements between neighbouring lanes (default 1)"
    )
    p.add_argument("--offset", default="0", metavar="O", help="elements before lane 0's (default 0)")
    p.add_argument(
        "--active", default="32", metavar="LANES", help="lanes taking part, from lane 0 (default 32)"
    )
    p.add_argument(
        "--warp", default="0", metavar="W", help="global only: which warp of the block (default 0)"
    )
    p.add_argument(
        "--dram-granularity",
        metavar="BYTES",
        help="global only: bytes DRAM moves per L2 miss, 32, 64 or 128 (default: an estimate from the "
        "GPU named, else 64 as on compute capability 8.0 and newer)",
    )
    target = p.add_mutually_exclusive_group()
    target.add_argument("--device", metavar="NAME", help="global only: estimate the DRAM granularity for it")
    target.add_argument("--cc", metavar="X.Y", help="... or for a compute capability, e.g. 8.6")
    _add_json(p)
    p.set_defaults(handler=lambda a: _memory().run_memory(a), check=lambda a: _memory().parse_memory(a))


def _add_divergence_command(sub: Subcommands) -> None:
    p = sub.add_parser("divergence", help="which lanes of each warp take a branch, and the SIMT efficiency")
    p.add_argument("--block", required=True, metavar="X", help="threads per block (1D)")
    p.add_argument(
        "--branch", required=True, metavar="mod:K|lt:K|warp:K|random:P", help="the condition over threadIdx.x"
    )
    p.add_argument("--seed", default="0", metavar="N", help="seed of random:P's data (default 0)")
    _add_json(p)
    p.set_defaults(
        handler=lambda a: _memory().run_divergence(a), check=lambda a: _memory().parse_divergence(a)
    )


def _add_tiling_command(sub: Subcommands) -> None:
    p = sub.add_parser(
        "tiling", help="what the tiled matmul (PMPP chapter 5) loads, stores and syncs, beside the naive one"
    )
    for option, what in (
        ("m", "rows of A and C"),
        ("n", "columns of B and C"),
        ("k", "columns of A, rows of B"),
    ):
        p.add_argument(f"--{option}", required=True, metavar=option.upper(), help=what)
    p.add_argument(
        "--tile", required=True, metavar="T", help="tile side: T x T tiles, T x T threads per block"
    )
    target = p.add_mutually_exclusive_group()
    target.add_argument(
        "--device", metavar="NAME", help='check the block against this GPU and give its occupancy ("1650")'
    )
    target.add_argument("--cc", metavar="X.Y", help="... or against a compute capability, e.g. 8.6")
    p.add_argument(
        "--regs", default="32", metavar="R", help="registers per thread for the occupancy (default 32)"
    )
    _add_json(p)
    p.set_defaults(handler=lambda a: _tiling().run_tiling(a), check=lambda a: _tiling().parse_tiling(a))


def _add_kernel_command(sub: Subcommands) -> None:
    p = sub.add_parser("kernel", help="your own numba kernel, line by line, on the CUDA simulator")
    p.add_argument("file", metavar="FILE.py", help="the script that launches it (run as python FILE.py)")
    p.add_argument(
        "--max-threads", metavar="N", help="threads per launch the simulator may run (default 4096)"
    )
    p.add_argument("--timeout", metavar="S", help="seconds the script may run (default 120)")
    _add_json(p)
    p.set_defaults(handler=lambda a: _kernel().run_kernel(a), check=lambda a: _kernel().parse_kernel(a))


def _add_quiz_command(sub: Subcommands) -> None:
    p = sub.add_parser("quiz", help="predict, then reveal: questions with exact answers on every model")
    p.add_argument(
        "--topic",
        default="all",
        metavar="T",
        help="all (default), occupancy, waves, coalescing, banks, divergence, dispatch, latency or tiling",
    )
    p.add_argument("--count", default="5", metavar="N", help="how many questions (default 5)")
    p.add_argument(
        "--seed", default="0", metavar="S", help="the first seed: the same seed, the same questions"
    )
    p.add_argument("--variant-of", metavar="ID", help="one question like ID (same concept, other numbers)")
    p.add_argument(
        "--gather", metavar="FOLDER", help="a class's answer files (*.csv) in FOLDER, tallied per question"
    )
    p.add_argument("--export", metavar="FILE", help="write your answers to FILE.csv (to hand in)")
    _add_json(p)
    p.set_defaults(handler=lambda a: _quiz().run_quiz(a), check=lambda a: _quiz().parse_quiz(a))


def _add_lessons_command(sub: Subcommands) -> None:
    p = sub.add_parser("lessons", help="list the built-in lessons: title, file, number of steps")
    p.add_argument(
        "--check",
        dest="check_files",
        nargs="+",
        metavar="FILE",
        help="check lesson files (or built-in lessons by name): every step's values, and narration "
        "that would not show as written (docs/lesson-format.md); exit 1 when something is found",
    )
    p.add_argument(
        "--handout",
        default=None,
        metavar="LESSON",
        help="print a lesson (a file, or a built-in lesson by name) to a PDF: each step's figure, "
        "title, narration and numbers",
    )
    p.add_argument("--out", default=None, metavar="FILE.pdf", help="with --handout: the PDF to write")
    p.add_argument(
        "--page-size", default=None, metavar="A4|Letter", help="with --handout: the paper (default A4)"
    )
    _add_json(p)
    p.set_defaults(handler=lambda a: _lessons().run_lessons(a), check=lambda a: _lessons().parse_lessons(a))


def _add_self_test_command(sub: Subcommands) -> None:
    p = sub.add_parser("self-test", help="import every dependency, probe devices, run a tiny workload")
    _add_remote(p)
    _add_json(p)
    p.set_defaults(handler=lambda a: _selftest().run_self_test(a), check=lambda a: _remote().parse_host(a))


def _add_admin_command(sub: Subcommands) -> None:
    p = sub.add_parser("admin", help="for the lab's admin: the GPU queue folder of a shared server")
    admin = p.add_subparsers(dest="admin_command", metavar="WHAT", required=True)
    q = admin.add_parser("queue", help="show each GPU's line; --clean removes ended and planted places")
    q.add_argument("--clean", action="store_true", help="remove ended places and planted files (as root)")
    q.add_argument(
        "--dir", default=None, metavar="FOLDER", help="the queue folder (default: as every run finds it)"
    )
    _add_json(q)
    q.set_defaults(handler=lambda a: _admin().run_admin(a), check=lambda a: _admin().parse_admin(a))
    p.set_defaults(handler=lambda a: _admin().run_admin(a), check=lambda a: _admin().parse_admin(a))


def _add_agent_command(sub: Subcommands) -> None:
    # Hidden (no help): the worker the app starts as a child process, locally or over ssh; it
    # speaks JSON lines on stdin/stdout (explorer/agent/__init__.py describes the protocol).
    p = sub.add_parser("agent")
    p.set_defaults(handler=lambda a: _agent().run_agent(a), check=None)


def _add_launcher_guard_command(sub: Subcommands) -> None:
    # Hidden: on a cluster's login node, between ssh and the launcher (srun): reports the job's
    # state while it waits and cancels it when the client goes (explorer/remote/jobguard.py).
    p = sub.add_parser("launcher-guard")
    p.add_argument("--job-name")
    p.add_argument("launcher", nargs=argparse.REMAINDER)
    p.set_defaults(handler=lambda a: _remote().run_launcher_guard(a), check=None)


#: every sub-command in the order ``--help`` lists them, and the function that adds its parser
COMMANDS: dict[str, Callable[[Subcommands], None]] = {
    "gui": _add_gui_command,
    "devices": _add_devices_command,
    "occupancy": _add_occupancy_command,
    "launch": _add_launch_command,
    "dispatch": _add_dispatch_command,
    "latency": _add_latency_command,
    "bench": _add_bench_command,
    "screenshot": _add_screenshot_command,
    "memory": _add_memory_command,
    "divergence": _add_divergence_command,
    "tiling": _add_tiling_command,
    "kernel": _add_kernel_command,
    "quiz": _add_quiz_command,
    "lessons": _add_lessons_command,
    "self-test": _add_self_test_command,
    "admin": _add_admin_command,
    "agent": _add_agent_command,
    "launcher-guard": _add_launcher_guard_command,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every sub-command, or with ``command`` only that one.

    ``main`` builds only the sub-command asked for: each sub-parser costs a few milliseconds
    (argparse looks for translation files as it makes one), and ``launch`` should not pay for
    the others. The top-level help, a first word that is no sub-command, or none builds all."""
    parser = OneLineParser(
        prog="device-explorer",
        description="See and measure how compute devices work. With no sub-command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"device-explorer {__version__}")
    # ``check`` parses and validates a request without doing the work (``main(check_only=True)``,
    # which the fuzz test drives); ``handler`` does the work (and parses first).
    parser.set_defaults(handler=lambda a: _gui().run_gui(a), check=lambda a: _gui().parse_gui(a))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in COMMANDS.items():
        if command is None or name == command:
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None, *, check_only: bool = False) -> int:
    """Run the command line; returns the exit status (0 done, 2 bad input, 130 interrupted).

    With ``check_only`` it parses and validates the request and stops before any work (no
    benchmark, no window): what the fuzz test drives over arbitrary argument lists.
    """
    # First: in a frozen bundle a multiprocessing worker re-runs this executable, and
    # freeze_support() turns it into the worker before any argument is parsed. Outside a bundle
    # it does nothing, so multiprocessing (tens of ms) is not imported for it.
    if getattr(sys, "frozen", False):
        import multiprocessing

        multiprocessing.freeze_support()
    tolerant_streams()
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help, --version, or a one-line argparse error already printed
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        args.panel = args.lesson = args.step = None
    if args.command == "agent":  # its stdout is the protocol: the agent writes it itself
        return _run(args, check_only)
    with guarded_streams():  # nothing printed, from a remote or a file, can drive the terminal
        return _run(args, check_only)


def _run(args: argparse.Namespace, check_only: bool) -> int:
    # SIGTERM and SIGHUP end a command like Ctrl-C (an exception, so children are stopped and
    # what finished is written); the window replaces these with its own (explorer/ui/signals.py).
    previous = raise_on_termination()
    try:
        if check_only:
            if args.check:
                args.check(args)
            return 0
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"device-explorer: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP as Interrupted
        return exit_status(exc)
    except BrokenPipeError:
        # `device-explorer devices | head`: the reader left; say nothing more.
        try:
            sys.stdout = open(os.devnull, "w")  # keep interpreter shutdown quiet
        except OSError:
            pass
        return 0
    finally:
        restore_handlers(previous)


if __name__ == "__main__":
    sys.exit(main())
