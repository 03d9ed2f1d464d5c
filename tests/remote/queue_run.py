"""One run in a GPU's line, driven line by line on stdin, for the queue tests (run as real users too).

    python tests/remote/queue_run.py FOLDER KEY WORKLOAD

Commands on stdin: ``take`` (take or keep the turn, as an agent does before each point; on a
thread, answered with ``held``), ``busy``
(measure: the heartbeat is renewed until ``idle``), ``idle``, ``leave``, ``try CODE`` (run a Python
statement as this user, e.g. an attack on another user's files, and report what it raised).
Each outcome is one JSON line on stdout: ``{"event": "wait"|"held"|"ok"|"raised"|...}``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from explorer.errors import UserError
from explorer.gpuqueue import share as gpushare


def say(**data: object) -> None:
    print(json.dumps(data), flush=True)


def take(folder: Path, key: str, workload: str) -> None:
    try:
        waited = gpushare.hold_gpu_lock(
            key,
            lambda w: say(event="wait", message=w.message, holder=w.holder, ahead=w.ahead, stalled=w.stalled),
            workload=workload,
            directory=folder,
            poll_s=0.2,
        )
    except UserError as exc:
        say(event="refused", message=str(exc))
        return
    say(event="held", waited=waited, lapse=gpushare.take_lapse())


def main() -> None:
    folder, key, workload = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    busy: list[tuple[threading.Event, threading.Thread]] = []
    say(event="ready", pid=os.getpid(), uid=os.getuid())
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "take":  # on a thread of its own: the other commands go on while it waits
            threading.Thread(target=take, args=(folder, key, workload), daemon=True).start()
        elif command == "busy":
            stop = threading.Event()
            entered = threading.Event()

            def measure(stop: threading.Event = stop, entered: threading.Event = entered) -> None:
                with gpushare.gpu_busy():
                    entered.set()
                    stop.wait()

            thread = threading.Thread(target=measure, daemon=True)
            thread.start()
            busy.append((stop, thread))
            entered.wait()
            say(event="busy")
        elif command == "idle":
            for stop, thread in busy:  # the measurement ends, its last heartbeat included
                stop.set()
                thread.join()
            busy.clear()
            say(event="idle", lapse=gpushare.take_lapse())
        elif command == "leave":
            gpushare.release_gpu_locks()
            say(event="left")
        elif command == "try":
            try:
                exec(rest, {"os": os, "folder": folder})  # the test's own statement
            except OSError as exc:
                say(event="raised", errno=exc.errno, error=type(exc).__name__)
            else:
                say(event="ok")


if __name__ == "__main__":
    main()
