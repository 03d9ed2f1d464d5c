"""Checks that behave in every way a real one can go wrong, run by the real runner in real child
processes: the runner's isolation is tested with these, never with a GPU."""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from explorer.acceptance.context import CannotRun, CheckContext
from explorer.acceptance.judge import share_figure, status_of
from explorer.acceptance.records import CheckResult


def passes(ctx: CheckContext) -> CheckResult:
    ctx.log("measuring something that does not need a GPU")
    figure = share_figure("a stand-in figure", 80.0, "GB/s", 100.0, "a stand-in peak")
    return CheckResult(
        "ignored", status_of(True, [figure]), "a stand-in result", [figure], {"pid": os.getpid()}
    )


def misses(ctx: CheckContext) -> CheckResult:
    figure = share_figure("a stand-in figure", 10.0, "GB/s", 100.0, "a stand-in peak")
    return CheckResult("ignored", status_of(True, [figure]), "below its target", [figure])


def cannot_run(ctx: CheckContext) -> CheckResult:
    raise CannotRun("this machine has no such thing")


def raises(ctx: CheckContext) -> CheckResult:
    raise RuntimeError("the driver said no\nand then more lines")


def crashes(ctx: CheckContext) -> CheckResult:
    ctx.log("about to crash")
    sys.stderr.flush()
    ctypes.string_at(0)  # a segfault, as a native library's bug gives
    raise AssertionError("unreachable")


def hangs(ctx: CheckContext) -> CheckResult:
    ctx.log("waiting for a kernel that never returns")
    threading.Event().wait()
    raise AssertionError("unreachable")


def returns_nonsense(ctx: CheckContext) -> CheckResult:
    return "not a result"  # type: ignore[return-value]


def writes_a_file(ctx: CheckContext) -> CheckResult:
    (ctx.out_dir / "from-the-check.txt").write_text(ctx.device)
    return CheckResult("ignored", "pass", f"wrote into {ctx.out_dir.name}")
