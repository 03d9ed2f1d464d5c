"""Run slow calls (device discovery, which imports torch and numba) off the GUI thread.

superqt's workers deliver the result as a Qt signal on the GUI thread, which is the only
thread allowed to touch widgets. We keep a reference to each running worker: a worker the
garbage collector takes mid-run would drop its result silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from superqt.utils import FunctionWorker, create_worker

_running: set[FunctionWorker] = set()


def run_in_background(
    func: Callable[..., Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[BaseException], None] | None = None,
    *args: Any,
    **kwargs: Any,
) -> FunctionWorker:
    """Call ``func(*args, **kwargs)`` in a worker thread; ``on_done(result)`` runs on the GUI thread."""
    # With an error handler, the handler is the report; superqt would otherwise re-raise too.
    worker = create_worker(func, *args, _start_thread=False, _ignore_errors=on_error is not None, **kwargs)
    worker.returned.connect(on_done)
    if on_error is not None:
        worker.errored.connect(on_error)
    _running.add(worker)
    worker.finished.connect(lambda: _running.discard(worker))
    worker.start()
    return worker
