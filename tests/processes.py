"""What the child-process tests ask of the OS: has this process ended (within a moment)?"""

from __future__ import annotations

import time

import psutil


def gone(pid: int, within_s: float = 2.0) -> bool:
    """True once ``pid`` has exited within ``within_s`` seconds: no such process, or a zombie
    (exited, waiting for its parent to read its status)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False
