"""GPU acceptance: prove every GPU path of Device Explorer on the GPU at hand, in one command.

    python3 benchmarks/gpu_acceptance.py --out DIR [--budget 480] [--only a,b] [--skip a,b]
                                         [--device cuda:0] [--no-lesson-write]
    python3 benchmarks/gpu_acceptance.py --list
    python3 benchmarks/gpu_acceptance.py --apply-lessons DIR/lesson-recordings.json
    python3 benchmarks/gpu_acceptance.py --readme DIR

Writes DIR/gpu-acceptance.json (every check: status, figures against their targets, details),
DIR/gpu-acceptance.txt (the same, to read; also printed at the end), DIR/README.md (every FAIL
and MISS first, with the failing tests of the gpu_tests step and of any extra pytest log kept in
DIR as *pytest*.log; --readme writes it again after such a log is added), DIR/acceptance.log
(each check's own lines) and, once the lessons are recorded, DIR/lesson-recordings.json. Each check
runs in a process of its own under a deadline, so one failure or hang never stops the others;
a check that would not fit the time budget is left out and says how to run it. Exit 0 when no
check failed, 1 when one did, 2 when nothing could be run (no GPU: one line).

Runs from the repository root with the GPU machine's own Python and nothing installed: it needs
torch, numpy, numba (and numba-cuda), cuda-bindings, nvidia-ml-py, psutil, py-cpuinfo and
threadpoolctl (pytest for the test suite), and never imports Qt, pyqtgraph, superqt or
platformdirs. --apply-lessons writes the recordings a GPU run brought back into this checkout's
built-in lessons (checked first; nothing is written if any does not fit).
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# Nothing the run writes may need platformdirs (not on a bare GPU machine) or reach the user's folders:
# a home of its own, made only when none is given and removed when the script ends (the report
# goes to --out), so no run leaves an empty folder in the temporary folder.
if not os.environ.get("DEVICE_EXPLORER_HOME"):
    _HOME = tempfile.TemporaryDirectory(prefix="device-explorer-acceptance-")
    atexit.register(_HOME.cleanup)
    os.environ["DEVICE_EXPLORER_HOME"] = _HOME.name

from explorer.acceptance.context import CheckContext  # noqa: E402
from explorer.acceptance.registry import CHECKS, names  # noqa: E402
from explorer.acceptance.runner import CheckSelection, run_acceptance  # noqa: E402
from explorer.errors import UserError  # noqa: E402

DEFAULT_BUDGET_S = 480.0


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu_acceptance.py", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", help="folder for the report (created)")
    parser.add_argument("--device", default="cuda:0", help="the GPU to prove (default cuda:0)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, help="seconds for the whole run")
    parser.add_argument("--only", help="comma-separated checks to run (see --list)")
    parser.add_argument("--skip", help="comma-separated checks to leave out")
    parser.add_argument("--list", action="store_true", help="list the checks and their expected times")
    parser.add_argument("--no-lesson-write", action="store_true", help="record the lessons into DIR only")
    parser.add_argument("--apply-lessons", metavar="FILE", help="write a GPU run's lesson recordings here")
    parser.add_argument(
        "--readme",
        metavar="DIR",
        help="write DIR/README.md again from DIR's report and extra pytest logs (every FAIL and MISS)",
    )
    return parser.parse_args(argv)


def _refuse(message: str) -> int:
    print(f"gpu_acceptance: {message}", file=sys.stderr)
    return 2


def _loopback_remote(stack: ExitStack, wanted: bool) -> tuple[dict[str, str] | None, str]:
    """A loopback sshd for the remote check (the tests' own), or why there is none."""
    if not wanted:
        return None, "left out"
    try:
        from tests.remote.servers import ALIAS, LoopbackSshd
    except ImportError as exc:
        return None, f"the loopback sshd helper (tests/remote/servers.py) cannot be imported: {exc}"
    missing = LoopbackSshd.missing()
    if missing:
        return None, f"no loopback sshd here: {missing}"
    try:
        sshd = stack.enter_context(LoopbackSshd(Path(tempfile.mkdtemp(prefix="explorer-acceptance-sshd-"))))
    except Exception as exc:  # the remote check says why, the others run
        return None, f"the loopback sshd did not start: {exc}"
    home = os.environ["DEVICE_EXPLORER_HOME"]
    return {
        "destination": ALIAS,
        "ssh_config": str(sshd.config),
        "python": sys.executable,
        "prefix": f"env PYTHONPATH={REPO} DEVICE_EXPLORER_HOME={home}",
    }, ""


def _write_readme(folder: Path) -> int:
    """README.md of a report folder written again (after adding an extra pytest log to it)."""
    import json

    from explorer.acceptance.readme import report_from_dict, write_readme
    from explorer.acceptance.runner import REPORT_JSON

    try:
        report = report_from_dict(json.loads((folder / REPORT_JSON).read_text(encoding="utf-8")))
        print(f"wrote {write_readme(folder, report)}")
    except (OSError, ValueError) as exc:
        return _refuse(f"{folder / REPORT_JSON}: {exc}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for spec in CHECKS:
            print(
                f"{spec.name:<18} about {spec.expected_s:>4.0f} s (stopped at {spec.deadline_s:.0f} s)  {spec.title}"
            )
        print(f"{'':<18} about {sum(s.expected_s for s in CHECKS):>4.0f} s in all on an H100 (estimates)")
        return 0
    if args.apply_lessons:
        from explorer.lessons.recording import apply_bundle

        try:
            for line in apply_bundle(args.apply_lessons):
                print(f"recorded {line}")
        except UserError as exc:
            return _refuse(str(exc))
        return 0
    if args.readme:
        return _write_readme(Path(args.readme))
    if not args.out:
        return _refuse("--out DIR is needed (the folder the report is written to)")
    selection = CheckSelection(_names(args.only), _names(args.skip))
    try:
        selection.check(names())
        from explorer.inputs import parse_device_key

        device = parse_device_key(args.device)
    except UserError as exc:
        return _refuse(str(exc))
    if device == "cpu":
        return _refuse("--device must name a GPU (cuda:N), not the CPU")
    if not 60 <= args.budget <= 3600:
        return _refuse(f"--budget is {args.budget:g} s; give 60 to 3600 seconds")
    from explorer.devices.discover import discover

    found = discover(include_catalog=False, quick=True)
    gpus = {d.key: d for d in found.present_gpus}
    if not gpus:
        why = " ".join((found.why_no_gpu() or "no NVIDIA GPU was found").split())
        return _refuse(f"no usable NVIDIA GPU here, so nothing was run ({why[:300]})")
    if device not in gpus:
        return _refuse(f"{device} is not present; this machine has {', '.join(gpus)}")
    out = Path(args.out).expanduser().resolve()
    with ExitStack() as stack:
        remote, missing = _loopback_remote(stack, selection.why_left_out("remote") is None)
        ctx = CheckContext(
            device=device,
            out_dir=out,
            repo=REPO,
            remote=remote,
            remote_missing=missing,
            write_lessons=not args.no_lesson_write,
        )
        report = run_acceptance(
            CHECKS,
            ctx,
            selection=selection,
            budget_s=args.budget,
            gpu=gpus[device].name,
            command=" ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        )
    print()
    print(report.summary_text(), end="")
    print(f"report: {out}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
