"""One acceptance check in a process of its own: ``python -m explorer.acceptance.child NAME
MODULE:FUNCTION CONTEXT_JSON RESULT_PATH``. The parent (``runner``) starts it, reads the result
file it leaves, and keeps what it prints as the check's log.

Whatever the check raises becomes its result: ``CannotRun`` a ``skip`` with the reason, anything
else an ``error`` with one line (the traceback goes to the log). The process dies with its parent.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback
from pathlib import Path

from explorer.acceptance.context import CannotRun, CheckContext
from explorer.acceptance.records import CheckResult
from explorer.agent.serve import die_with_parent
from explorer.atomicwrite import write_text_atomic


def run_check(name: str, target: str, ctx: CheckContext) -> CheckResult:
    """Import ``target`` ("module:function") and run it on ``ctx``; never raises."""
    t0 = time.monotonic()
    try:
        module_name, _, func_name = target.partition(":")
        func = getattr(importlib.import_module(module_name), func_name)
        result = func(ctx)
        if not isinstance(result, CheckResult):
            raise TypeError(f"{target} returned {type(result).__name__}, not a CheckResult")
    except CannotRun as exc:
        result = CheckResult(name, "skip", str(exc))
    except Exception as exc:  # a check that breaks is that check's result, never a crash
        traceback.print_exc()
        first = (str(exc).strip().splitlines() or [""])[0]
        result = CheckResult(name, "error", f"{type(exc).__name__}: {first}"[:400])
    result.name = name
    result.duration_s = time.monotonic() - t0
    return result


def main(argv: list[str]) -> int:
    die_with_parent()
    name, target, context_json, result_path = argv
    result = run_check(name, target, CheckContext.from_json(context_json))
    write_text_atomic(Path(result_path), json.dumps(result.to_dict(), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
