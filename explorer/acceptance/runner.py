"""The parent of the acceptance run: each check in a child process of its own, under a deadline,
within the run's time budget; then the report, as JSON and as text.

Why a child per check: a driver fault, a segfault in a native library or a kernel that never
returns must cost that check only. The child runs in a session of its own and asks Linux to kill
it when the parent dies; a child past its deadline is killed with its whole process group, and
its last progress lines say where it was. Each child starts with a fresh CUDA context, so one
check's leftovers (memory, a sticky error) never reach the next.

The output folder receives at most four files (a GPU machine sends back only a few):
``gpu-acceptance.json``, ``gpu-acceptance.txt``, ``acceptance.log`` (every child's progress
lines and errors) and, when the lessons were recorded, ``lesson-recordings.json``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from explorer.acceptance.context import MAX_REPORT_BYTES, CheckContext
from explorer.acceptance.readme import write_readme
from explorer.acceptance.records import CheckResult, Report
from explorer.acceptance.registry import CheckSpec
from explorer.atomicwrite import write_text_atomic
from explorer.schema import loads

REPORT_JSON = "gpu-acceptance.json"
REPORT_TEXT = "gpu-acceptance.txt"
LOG_FILE = "acceptance.log"
#: a child's last lines quoted in its error or timeout summary
TAIL_LINES = 6
#: seconds a check may run past the time left in the budget before it is stopped
BUDGET_GRACE_S = 30.0


@dataclass
class CheckSelection:
    """Which checks to run: ``only`` (empty: all) less ``skip``; unknown names are refused."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    def check(self, names: Sequence[str]) -> None:
        from explorer.errors import UserError

        unknown = [n for n in (*self.only, *self.skip) if n not in names]
        if unknown:
            raise UserError(f"no check named {', '.join(unknown)}; the checks: {', '.join(names)}")

    def why_left_out(self, name: str) -> str | None:
        if self.only and name not in self.only:
            return "left out by --only"
        if name in self.skip:
            return "left out by --skip"
        return None


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(ln.strip()[:300] for ln in kept)


def _child_env(ctx: CheckContext, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx.repo), env.get("PYTHONPATH", "")) if p)
    env["DEVICE_EXPLORER_HOME"] = str(
        home
    )  # measured ceilings and saved state stay out of the user's folders
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_child(spec: CheckSpec, ctx: CheckContext, home: Path, log: Callable[[str], None]) -> CheckResult:
    """Run one check in its own process; never raises. Its stderr goes to ``log`` afterwards."""
    with tempfile.TemporaryDirectory(prefix="explorer-acceptance-") as tmp:
        result_path = Path(tmp) / "result.json"
        stderr_path = Path(tmp) / "stderr.txt"
        argv = [
            sys.executable,
            "-m",
            "explorer.acceptance.child",
            spec.name,
            spec.target,
            ctx.to_json(),
            str(result_path),
        ]
        t0 = time.monotonic()
        timed_out = False
        with open(stderr_path, "wb") as err:
            proc = subprocess.Popen(
                argv,
                cwd=str(ctx.repo),
                env={**_child_env(ctx, home), **spec.env},
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=ctx.deadline_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        took = time.monotonic() - t0
        output = stderr_path.read_text(errors="replace")
        log(f"===== {spec.name} (exit {proc.returncode}, {took:.1f} s)\n{output}")
        if timed_out:
            return CheckResult(
                spec.name,
                "timeout",
                f"stopped after its {ctx.deadline_s:.0f} s deadline; last lines: {_tail(output) or 'none'}",
                duration_s=took,
            )
        try:
            data = loads(result_path.read_bytes(), max_bytes=MAX_REPORT_BYTES)
            result = CheckResult.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            from explorer.agent.child import describe_exit

            how = describe_exit(proc.returncode)
            why = f"the check's process {how} without a result ({type(exc).__name__})"
            return CheckResult(
                spec.name, "error", f"{why}; last lines: {_tail(output) or 'none'}", duration_s=took
            )
        result.duration_s = took
        return result


def run_acceptance(
    specs: Sequence[CheckSpec],
    ctx: CheckContext,
    *,
    selection: CheckSelection | None = None,
    budget_s: float = 480.0,
    gpu: str = "",
    command: str = "",
    say: Callable[[str], None] = print,
) -> Report:
    """Run the selected checks in order within ``budget_s``, write the report into ``ctx.out_dir``
    and return it. A check that would not fit the budget left is not run, and says how to run it."""
    selection = selection or CheckSelection()
    selection.check([s.name for s in specs])
    out = ctx.out_dir
    out.mkdir(parents=True, exist_ok=True)
    report = Report(
        started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        host=socket.gethostname(),
        device=ctx.device,
        gpu=gpu,
        budget_s=budget_s,
        command=command,
    )
    log_path = out / LOG_FILE
    log_path.write_text("")
    t0 = time.monotonic()

    def log(text: str) -> None:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")

    def write() -> None:
        report.total_s = time.monotonic() - t0
        write_text_atomic(out / REPORT_JSON, json.dumps(report.to_dict(), indent=1, default=str) + "\n")
        write_text_atomic(out / REPORT_TEXT, report.summary_text())
        write_readme(out, report)  # every FAIL and MISS, where a reader looks first

    with tempfile.TemporaryDirectory(prefix="explorer-acceptance-home-") as home:
        for spec in specs:
            used = time.monotonic() - t0
            left = budget_s - used
            why = selection.why_left_out(spec.name)
            if why is None and spec.expected_s > left:
                why = (
                    f"the time budget ({budget_s:.0f} s) would be exceeded: {used:.0f} s used, this check "
                    f"takes about {spec.expected_s:.0f} s; run it alone with --only {spec.name}"
                )
            if why is not None:
                result = CheckResult(spec.name, "not run", why)
            else:
                say(f"... {spec.name}: {spec.title} (about {spec.expected_s:.0f} s)")
                deadline = min(spec.deadline_s, left + BUDGET_GRACE_S)
                result = run_child(spec, replace(ctx, deadline_s=deadline), Path(home), log)
            result.title, result.expected_s = spec.title, spec.expected_s
            report.checks.append(result)
            if result.status != "not run":
                say(f"{result.status.upper():<8} {spec.name}: {result.summary}")
            write()  # a run cut short still leaves every finished check on disk
    write()
    return report
