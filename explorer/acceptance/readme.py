"""The report folder's README: what a reader opens first, so it lists every FAIL and MISS.

Every check whose status is not a pass (fail, error, timeout, miss) is listed with its summary
and the figures that failed or missed; the ``gpu_tests`` step's failing tests one by one; and
the failures of any extra pytest log kept in the folder (``*pytest*.log``: the gpu-marked tests
outside tests/gpu, run in the same session), parsed from pytest's own output. A README that said
"all well" above a failing test was how a failure went unread.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from explorer.acceptance.checks_lessons import pytest_counts
from explorer.acceptance.records import BAD, REPORT_FORMAT, CheckResult, Report
from explorer.atomicwrite import write_text_atomic

README_FILE = "README.md"
#: the extra pytest logs a report folder may hold beside the run's own files
EXTRA_LOG_GLOB = "*pytest*.log"
#: the most bytes of one extra log that are read (a log is a few hundred lines)
MAX_LOG_BYTES = 4 * 1024 * 1024

_SHORT = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$")
_HEADER = re.compile(r"^_+ (?:ERROR at \w+ of )?(\S+) _+$")
_WHERE = re.compile(r"^(\S+\.py):(\d+): (\w+)$")


def pytest_log_failures(text: str) -> list[str]:
    """Each failing or erroring test of a pytest log, one line each: from pytest's short summary
    ("FAILED tests/x.py::test_y - AssertionError") where it printed one, else from the headers of
    its FAILURES section with the line each stopped at ("test_y (tests/x.py:39: AssertionError)")."""
    lines = text.splitlines()
    short = [m for m in (_SHORT.match(ln.strip()) for ln in lines) if m]
    if short:
        return [" ".join(f"{m[1]} {m[2]}{' - ' + m[3] if m[3] else ''}".split())[:300] for m in short]
    out: list[str] = []
    name = ""
    where = ""
    for ln in lines:
        header = _HEADER.match(ln.strip())
        if header:
            if name:
                out.append(f"FAILED {name}{f' ({where})' if where else ''}")
            name, where = header[1], ""
            continue
        spot = _WHERE.match(ln.strip())
        if spot and name:
            where = f"{spot[1]}:{spot[2]}: {spot[3]}"
    if name:
        out.append(f"FAILED {name}{f' ({where})' if where else ''}")
    counts = pytest_counts(text)
    failed = counts.get("failed", 0) + counts.get("errors", 0)
    if failed > len(out):  # pytest counted more than the log shows: the count is said, not lost
        out.append(f"{failed - len(out)} more failed (pytest's count: {failed}; the log shows {len(out)})")
    return out


def extra_logs(folder: Path) -> dict[str, str]:
    """The extra pytest logs in ``folder``, by file name, each cut to ``MAX_LOG_BYTES``."""
    logs: dict[str, str] = {}
    for path in sorted(folder.glob(EXTRA_LOG_GLOB)):
        try:
            with open(path, "rb") as fh:
                logs[path.name] = fh.read(MAX_LOG_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            logs[path.name] = f"FAILED reading the log: {exc}"
    return logs


def problems(report: Report, logs: dict[str, str] | None = None) -> list[str]:
    """Every FAIL and MISS of the report, as Markdown list lines: each check not passed with its
    figures that failed or missed, a failing pytest step's tests, each extra log's failures."""
    out: list[str] = []
    for c in report.checks:
        if c.status not in BAD and c.status != "miss":
            continue
        out.append(f"- **{c.status.upper()}** `{c.name}`: {_one_line(c.summary)}")
        for f in c.figures:
            if f.impossible or f.met is False:
                out.append(f"  - {_one_line(f.line())}")
        failures = c.details.get("failures") if isinstance(c.details, dict) else None
        for line in failures if isinstance(failures, list) else []:
            out.append(f"  - {_one_line(str(line))}")
    for name, text in (logs or {}).items():
        for line in pytest_log_failures(text):
            out.append(f"- **FAIL** in `{name}`: {_one_line(line)}")
    return out


def readme_text(report: Report, logs: dict[str, str] | None = None) -> str:
    """The report folder's README in Markdown: the run, every FAIL and MISS, then every check."""
    found = problems(report, logs)
    counts = ", ".join(f"{n} {s}" for s, n in report.counts.items())
    lines = [
        f"# GPU acceptance on {report.gpu} ({report.device}), {report.started_at}",
        "",
        f"`{report.command or 'gpu_acceptance.py'}` on {report.host}: budget {report.budget_s:.0f} s, "
        f"took {report.total_s:.0f} s. {len(report.checks)} checks: {counts or 'none'}.",
        "",
        f"## Every FAIL and MISS ({len(found)})" if found else "## Every FAIL and MISS",
        "",
        *(found or ["None: every check that ran passed, and no extra pytest log holds a failure."]),
        "",
        "## Every check",
        "",
        "| status | check | summary |",
        "| --- | --- | --- |",
        *(f"| {c.status.upper()} | `{c.name}` | {_cell(c.summary)} |" for c in report.checks),
    ]
    if logs:
        lines += ["", "## Extra pytest logs", ""]
        for name, text in logs.items():
            counts_words = ", ".join(f"{n} {w}" for w, n in pytest_counts(text).items()) or "no summary line"
            lines.append(f"- `{name}`: {counts_words}")
    lines += ["", "The figures in full: `gpu-acceptance.txt`; as JSON: `gpu-acceptance.json`."]
    return "\n".join(lines) + "\n"


def report_from_dict(data: Any) -> Report:
    """A report read back from its JSON form (``gpu-acceptance.json``); ``ValueError`` in one line
    where it is not one."""
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise ValueError(f"not a GPU acceptance report (format {REPORT_FORMAT})")
    checks = data.get("checks")
    if not isinstance(checks, list):
        raise ValueError("the report lists no checks")
    try:
        return Report(
            started_at=str(data.get("started_at", "")),
            host=str(data.get("host", "")),
            device=str(data.get("device", "")),
            gpu=str(data.get("gpu", "")),
            budget_s=float(data.get("budget_s", 0.0)),
            checks=[CheckResult.from_dict(c) for c in checks],
            total_s=float(data.get("total_s", 0.0)),
            command=str(data.get("command", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a check of the report does not read back: {exc}") from None


def write_readme(folder: Path, report: Report) -> Path:
    """Write ``README.md`` into the report folder, with the extra pytest logs found there."""
    path = folder / README_FILE
    write_text_atomic(path, readme_text(report, extra_logs(folder)))
    return path


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")
