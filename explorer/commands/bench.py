"""``device-explorer bench``: run a workload headless through the same worker-process engine as
the Benchmarks panel, printing one line (or one JSON object) per point as it finishes."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer import interrupts
from explorer.bench.results import CEILINGS_NOTE, MAX_REPEATS, BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun, Progress, Waiting
from explorer.bench.workload import Workload
from explorer.devices.model import NO_GPU_FOUND, CpuDevice, CudaGpu
from explorer.errors import UserError
from explorer.gpuqueue.share import QueueWait
from explorer.inputs import (
    is_device_key,
    parse_device_key,
    parse_output_path,
    parse_sizes,
    parse_whole,
    shown,
)
from explorer.outputs import output_lock
from explorer.remote.target import Remote
from explorer.roofs.model import RoofKey
from explorer.words import count, on_host

#: while a run queues for a GPU, how often the CLI says it is still waiting
WAIT_SAY_EVERY_S = 10.0


def check_device_present(device: str) -> None:
    """UserError when ``cuda:N`` names a GPU this machine does not have."""
    if device == "cpu":
        return
    index = int(device.split(":")[1])
    try:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        gpus = 0
    if index >= gpus:
        valid = ", ".join(["cpu"] + [f"cuda:{i}" for i in range(gpus)])
        raise UserError(
            f"{device} is not present; this machine has {count(gpus, 'CUDA device')} (valid: {valid})"
        )


def gpus_here() -> tuple[int, str]:
    """The usable GPUs of this machine and, when there are none, discovery's reason in words (a
    quick probe: torch and numba are not imported when no driver is there to find a GPU)."""
    from explorer.devices.discover import discover

    found = discover(include_catalog=False, quick=True)
    count = sum(1 for d in found.devices if d.kind == "cuda" and d.usable)
    return count, "" if count else (found.why_no_gpu() or "")


def gpus_there(remote: Remote) -> tuple[int, str]:
    """``gpus_here`` for a remote machine: its usable GPUs and its own words when it has none."""
    from explorer.agent.protocol import AgentError
    from explorer.commands.remote import RemoteUnreachable
    from explorer.remote.session import list_devices

    try:
        found = list_devices(remote)
    except AgentError as exc:
        raise RemoteUnreachable(str(exc)) from None
    count = sum(1 for d in found.discovery.devices if d.kind == "cuda" and d.usable)
    return count, "" if count else (found.why_no_gpu or "")


def _list_workloads(as_json: bool, remote: Remote | None = None) -> int:
    """The workloads, and which cannot run on the machine the run would go to (this one, or
    ``--host``'s: asked there, since its GPUs are not this laptop's) and why."""
    from explorer.bench.workloads import visible_workloads

    ws = visible_workloads()
    gpus, why = gpus_there(remote) if remote is not None else gpus_here()
    machine = remote.host if remote is not None else "this machine"
    refusals = {w.name: w.cannot_run_here(gpus, why, machine) for w in ws}
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "name": w.name,
                        "title": w.title,
                        "description": w.description,
                        "unit": w.unit,
                        "size_name": w.size_name,
                        "default_sizes_cpu": list(w.default_sizes_cpu),
                        "default_sizes_gpu": list(w.default_sizes_gpu),
                        "needs_gpu_count": w.needs_gpu_count,
                        "variants_cpu": [v.label for v in w.variants_on("cpu")],
                        "variants_gpu": [v.label for v in w.variants_on("cuda:0")],
                        "cannot_run_here": refusals[w.name],
                        "host": remote.host if remote is not None else None,
                    }
                    for w in ws
                ],
                indent=1,
            )
        )
        return 0
    print("Workloads (device-explorer bench WORKLOAD [--device cpu|cuda:N] [--sizes ...]):")
    for w in ws:
        print(f"  {w.name:<16} {w.title}; size: {w.size_name}; {w.unit}")
    cannot = [w for w in ws if refusals[w.name]]
    if cannot:
        said = " ".join(why.split())
        where = "here"
        if remote is not None:  # the server's own words say "this machine": name it instead
            where = f"ON {remote.host}"
            said = said.removeprefix(NO_GPU_FOUND).strip()
            said = f"no NVIDIA GPU there: {said}" if said else ""
        print(f"Cannot run {where}" + (f" ({said})" if said else "") + ":")
        for w in cannot:
            print(f"  {refusals[w.name]}")
    return 0


@dataclass(frozen=True)
class BenchRequest:
    """A checked ``bench`` request: the run is planned (not started) and the CSV path is writable.

    ``run`` is None when no workload was named (the command lists them)."""

    run: BenchRun | None
    device: str
    csv: Path | None
    as_json: bool
    host: str | None = None  # the remote machine (``--host``), None for this one
    #: with ``--resume FILE``: the earlier run's finished points, kept (and written to ``--csv``)
    kept: tuple[BenchPoint, ...] = ()
    resumed_from: str | None = None
    remote: Remote | None = None  # ``--host``'s machine, for the listing of what can run there
    #: with ``--resume FILE``: one line naming the file's finished points no variant matches ("")
    unmatched: str = ""


def resolve_bench_device(text: str) -> str:
    """``--device`` as a key (``cpu``, ``cuda:N``) or a device's name ("1650", "rtx 4090").

    A name resolves to the device it matches; a catalog sheet is refused, since benchmarks
    need hardware that is here. Presence of ``cuda:N`` is checked by ``check_device_present``.
    """
    if not str(text).strip() or is_device_key(text):
        return parse_device_key(text)
    from explorer.devices.find import find_device

    device = find_device(text)
    if isinstance(device, CpuDevice):
        return "cpu"
    if isinstance(device, CudaGpu):
        if device.index is None:
            raise UserError(
                f"{device.name} is hidden from CUDA by CUDA_VISIBLE_DEVICES, so benchmarks cannot use it here"
            )
        return f"cuda:{device.index}"
    raise UserError(
        f"{device.name} is a spec sheet from the catalog, not a GPU on this machine; benchmarks "
        "run on 'cpu' or a present 'cuda:N' (device-explorer devices lists them)"
    )


def parse_bench(args) -> BenchRequest:
    """Parse and validate ``bench``'s arguments and plan the run, before any work or output."""
    from explorer.bench.workloads import get_workload
    from explorer.commands.remote import parse_host

    as_json = bool(args.json)
    remote = parse_host(args)
    if not args.workload:
        return BenchRequest(None, "cpu", None, as_json, remote=remote)
    w = get_workload(args.workload)
    gpu_only = not w.variants_on("cpu")
    # without --device: the CPU, or the first GPU for a workload that has no CPU variant
    named = args.device if args.device is not None else ("cuda:0" if gpu_only else "cpu")
    if remote is not None:
        # the remote's GPUs are not known here: a key is passed on, and the remote's worker says
        # in the point's error row when it names a GPU that machine does not have
        if not is_device_key(named):
            raise UserError(f"with --host, name the device as cpu or cuda:N; got {named!r:.60}")
        device = parse_device_key(named)
    else:
        if gpu_only or w.needs_gpu_count > 1:
            # said before anything runs: which GPU it needs and why this machine has none
            refusal = w.cannot_run_here(*gpus_here())
            if refusal:
                raise UserError(refusal)
        device = resolve_bench_device(named)
    if device == "cpu" and gpu_only:
        raise UserError(f"{w.name} has no CPU variant ({w.needs_gpu_why}); run it on a GPU: --device cuda:N")
    sizes = parse_sizes(" ".join(args.sizes), w.size_name) if args.sizes else None
    repeats = _parse_repeats(args.repeats)
    warm_l2 = parse_l2(getattr(args, "l2", None), w, device)
    # checked before the run, so a typo in the path does not throw away a finished run
    csv = parse_output_path(args.csv, "--csv") if args.csv is not None else None
    if remote is None:
        check_device_present(device)
    # the ceilings are measured in the worker before the first point where none fresh are cached
    # (again with --remeasure-ceilings), so every point can say which roof bounds it
    plan = BenchPlan(
        workload=w.name,
        devices=[device],
        sizes=sizes,
        repeats=repeats,
        measure_roof=True,
        remeasure_roof=bool(args.remeasure_ceilings),
        warm_l2=warm_l2,
        remote=remote,
    )
    kept: tuple[BenchPoint, ...] = ()
    unmatched = ""
    resume_file = getattr(args, "resume", None)
    if resume_file is not None:
        from explorer.bench.resume import read_points, resume

        resumed = resume(plan, read_points(resume_file), source=resume_file)
        plan, kept, unmatched = resumed.plan, tuple(resumed.kept), resumed.unmatched
    host = remote.host if remote else None
    return BenchRequest(BenchRun(plan), device, csv, as_json, host, kept, resume_file, unmatched=unmatched)


def run_bench(args) -> int:
    req = parse_bench(args)
    if req.run is None:
        return _list_workloads(req.as_json, req.remote)
    # Held for the whole run: a second run writing the same file is refused now, in one line,
    # instead of both measuring for minutes and one silently replacing the other's points.
    if req.unmatched:  # said before the run (stdout stays the points)
        print(req.unmatched, file=sys.stderr, flush=True)
    with output_lock(req.csv) if req.csv else contextlib.nullcontext():
        return _run_plan(req.run, req.device, req.as_json, req.csv, req.host, req.kept, req.resumed_from)


def _waiting_printer() -> Callable[[Waiting], None]:
    """What the run waits for, said on stderr (stdout stays the points). A Slurm job's state is
    said each time Slurm changes it; a place in a GPU's line when the holder, the place or the
    holder's progress changes, and otherwise every ``WAIT_SAY_EVERY_S``, so a long wait neither
    floods nor hides."""
    said: list[tuple[float, tuple[object, ...]]] = []

    def show(wait: Waiting) -> None:
        now = time.monotonic()
        if isinstance(wait, QueueWait):
            about: tuple[object, ...] = ("gpu", wait.holder, wait.ahead, wait.stalled)
            due = not said or said[-1][1] != about or now - said[-1][0] >= WAIT_SAY_EVERY_S
        else:
            about = ("job", wait.job, wait.state, wait.reason)
            due = not said or said[-1][1] != about
        if due:
            said.append((now, about))
            print(wait.message, file=sys.stderr, flush=True)

    return show


def _run_plan(
    run: BenchRun,
    device: str,
    as_json: bool,
    csv_path: Path | None,
    host: str | None = None,
    kept: tuple[BenchPoint, ...] = (),
    resumed_from: str | None = None,
) -> int:
    from explorer.bench.export import export_csv
    from explorer.bench.lines import format_point

    w = run.workload
    if not as_json:
        where = on_host(device, host)
        if resumed_from is not None:
            print(
                f"{w.title} on {where}: resuming {resumed_from}, {count(len(kept), 'point')} kept, "
                f"{run.total_points} left",
                flush=True,
            )
        else:
            print(f"{w.title} on {where}: {count(run.total_points, 'point')}", flush=True)
    run.on_waiting = _waiting_printer()
    failed = 0
    stopped: KeyboardInterrupt | None = None
    said: set[RoofKey] = set()
    try:
        for event in run.events():
            if isinstance(event, Progress):
                continue
            # said once on stderr; a failure to measure or keep the ceilings comes with its point
            _say_roof_notices(run, said, with_point=str(event.extra.get(CEILINGS_NOTE, "")))
            # an error row, or ceilings measured again that a full disk kept from being stored
            failed += event.error is not None or CEILINGS_NOTE in event.extra
            if as_json:
                # every point names the machine it was measured on (null: this one)
                print(json.dumps({**event.to_dict(), "host": host}), flush=True)
            else:
                print(format_point(event), flush=True)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM or SIGHUP: the worker is stopped; keep what finished
        run.cancel()
        interrupts.ignore_further()
        stopped = exc
    wrote = ""
    whole = [*kept, *run.points]  # a resumed run's file holds the kept points and the new ones
    if csv_path and whole:
        export_csv(whole, csv_path)
        wrote = f"wrote {count(len(whole), 'point')} to {csv_path}"
    left = run.total_points - sum(p.ok for p in run.points)
    if stopped is not None:  # one line: what finished, what was written, how to go on
        finished = f"{len(run.points)} of {run.total_points} points finished"
        hint = _how_to_resume(left, csv_path, as_json, stopped=True)
        print(
            f"{interrupts.describe(stopped)}: {finished}"
            + (f"; {wrote}" if wrote else "")
            + (f"; {hint}" if hint else ""),
            file=sys.stderr,
        )
        return interrupts.exit_status(stopped)
    if wrote and not as_json:
        print(wrote, file=sys.stderr)
    hint = _how_to_resume(left, csv_path, as_json)
    if hint:
        print(hint, file=sys.stderr)
    return 1 if failed else 0


def _say_roof_notices(run: BenchRun, said: set[RoofKey], with_point: str = "") -> None:
    """What a device's roof must tell the user, once, on stderr (stdout stays the points): its
    stored ceilings were damaged and moved aside, a busy measurement did not replace a quiet one,
    the ceilings could not be measured. ``with_point``: a line the point being printed carries
    itself (its NOTE), not said twice."""
    for key, roof in run.roofs.items():
        if key not in said:
            said.add(key)
            notice = roof.notice.replace(with_point, "").strip() if with_point else roof.notice
            if notice:
                print(notice, file=sys.stderr, flush=True)


def _how_to_resume(left: int, csv_path: Path | None, as_json: bool, *, stopped: bool = False) -> str:
    """After a run with points left unmeasured, how to measure only those ("" when none are left,
    or when the run's points went nowhere they could be read back from)."""
    if left <= 0:
        return ""
    if csv_path:
        how = f"--resume {csv_path}"
    elif as_json:
        how = "--resume FILE, FILE holding these JSON lines"
    else:
        return ""  # the text lines cannot be read back: the hint would promise what cannot be done
    if stopped:
        return f"the same command with {how} measures the {left} left"
    return f"{count(left, 'point')} without a result; the same command with {how} measures only those"


def parse_l2(text: str | None, w: Workload, device: str) -> bool:
    """``--l2 cold|warm`` as ``BenchPlan.warm_l2`` (cold, flushed before each sample, when left
    out); named where it means nothing (a CPU, a workload that does not stream memory), refused in
    one line rather than silently ignored."""
    if text is None:
        return False
    choice = " ".join(str(text).split()).lower()
    if choice not in ("cold", "warm"):
        raise UserError(f"--l2 must be cold or warm; got {shown(text)}")
    refusal = w.l2_refusal(device)
    if refusal:
        raise UserError(f"--l2 {choice}: {refusal}; leave --l2 out")
    return choice == "warm"


def _parse_repeats(text: str | None) -> int | None:
    """``--repeats`` arrives as text so a typo gets our one-line message, not argparse's usage dump."""
    if text is None:
        return None
    return parse_whole(text, "repeats", minimum=1, maximum=MAX_REPEATS)
