"""numba's on-disk cache in the user's cache folder, and one notice before a compile a user waits for.

Every ``@njit`` function is ``cache=True``: the first run compiles it (the dispatch loop takes about
10 s of CPU) and writes the machine code to ``NUMBA_CACHE_DIR``; later runs load it in well under a
second. Without this module numba would cache next to its sources, which inside the bundle is a
folder a lab may have made read-only, and a first compile would pass in silence: a student assumes
the program hung. ``configure`` points the cache at the user's cache folder (before the module that
decorates is imported, since numba reads the folder when it decorates); ``first_compile`` says,
on stderr and through a callback the window shows, that a compile is coming, how long it takes
roughly, and how long it has run so far.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_ENV = "NUMBA_CACHE_DIR"
#: seconds between the "still compiling" lines
TICK_S = 5.0


@dataclass(frozen=True)
class CacheSetup:
    """Where numba caches, and ``note``: "" or the one line saying why it is not the usual folder."""

    folder: Path
    note: str = ""


_setup: CacheSetup | None = None
#: what is being compiled now (said once, however many threads wait for it)
_compiling: set[str] = set()
_lock = threading.Lock()


def _writable(folder: Path) -> str:
    """ "" when files can be written in ``folder`` (made if missing), else why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return ""


def configure(environ: dict[str, str] | None = None) -> CacheSetup:
    """Point numba's cache at the user's cache folder unless ``NUMBA_CACHE_DIR`` is already set;
    a folder that cannot be written falls back to one in the temporary folder, with a note.
    Cheap after the first call; sets numba's own setting too when numba is already imported."""
    global _setup
    env = os.environ if environ is None else environ
    if _setup is not None and env.get(CACHE_ENV) == str(_setup.folder):
        return _setup
    given = env.get(CACHE_ENV)
    if given:
        folder = Path(given)
    else:
        from explorer.userdirs import cache_dir

        folder = cache_dir() / "numba"
    note = ""
    why = _writable(folder)
    if why:
        fallback = (
            Path(tempfile.gettempdir())
            / f"device-explorer-numba-{os.getuid() if hasattr(os, 'getuid') else 0}"
        )
        note = (
            f"numba's cache folder {folder} cannot be written ({why}); compiled code is kept in "
            f"{fallback} instead"
        )
        folder = fallback
        if _writable(folder):
            note = f"numba's cache folder {folder} cannot be written ({why}); every run compiles again"
    env[CACHE_ENV] = str(folder)
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:
        numba_config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    _setup = CacheSetup(folder, note)
    return _setup


def is_cached(dispatcher: Any) -> bool | None:
    """Whether numba's cache holds compiled code for ``dispatcher`` that matches its source (its
    index file exists and was written for this very source file); None when it cannot tell."""
    try:
        cache = dispatcher._cache
        return bool(cache._cache_file._load_index())
    except Exception:  # numba's internals: not knowing is an answer, never a failure
        return None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class CompileNotice:
    """What a caller shows: ``kind`` "start" (``text`` the notice), "tick" (still compiling,
    ``elapsed_s`` so far) or "done" (``elapsed_s`` it took)."""

    kind: str
    text: str
    elapsed_s: float = 0.0


def notice_text(what: str, about_s: float) -> str:
    return f"compiling {what} once, about {about_s:.0f} s; later runs are instant"


@contextmanager
def first_compile(
    dispatcher: Any,
    what: str,
    about_s: float,
    *,
    say: Callable[[CompileNotice], None] | None = None,
    to_stderr: bool = True,
    tick_s: float = TICK_S,
) -> Iterator[bool]:
    """Around the first call of ``dispatcher``: when its cache is cold, say so before (on stderr
    and to ``say``), every ``tick_s`` while it compiles, and when it is done. Yields whether a
    compile is expected. Nothing is said when the cache is warm or numba already compiled it in
    this process."""
    cold = not getattr(dispatcher, "overloads", None) and is_cached(dispatcher) is False
    with _lock:
        told = cold and what not in _compiling
        if told:
            _compiling.add(what)
    if not told:  # warm, or another thread of this process is compiling it and said so
        yield False
        return
    setup = configure()

    def tell(notice: CompileNotice) -> None:
        if to_stderr:
            _stderr(notice.text)
        if say is not None:
            say(notice)

    tell(CompileNotice("start", notice_text(what, about_s)))
    if setup.note:
        tell(CompileNotice("start", setup.note))
    started = time.perf_counter()
    done = threading.Event()

    def ticker() -> None:
        while not done.wait(tick_s):
            elapsed = time.perf_counter() - started
            tell(CompileNotice("tick", f"  still compiling {what}: {elapsed:.0f} s so far", elapsed))

    thread = threading.Thread(target=ticker, name="compile notice", daemon=True)
    thread.start()
    try:
        yield True
    finally:
        done.set()
        thread.join()
        with _lock:
            _compiling.discard(what)
    elapsed = time.perf_counter() - started
    tell(
        CompileNotice(
            "done", f"  compiled {what} in {elapsed:.1f} s; kept in {setup.folder} for later runs", elapsed
        )
    )
