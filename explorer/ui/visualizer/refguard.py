"""Keep ``None`` alive under PySide6 6.12 on Python 3.11.

Measured in this project's environment (PySide6-Essentials 6.12.0, CPython 3.11.7): every call
from Python to a Qt method that returns ``void`` (``QPainter.drawRect``, ``setPen``, ...) takes
one reference from ``None`` without having given one; after some ten thousand calls the
interpreter aborts with "Fatal Python error: none_dealloc". Python 3.12 made ``None`` immortal,
which hides the bug there. Until the binding is fixed, the animation tops ``None``'s count up
with references it holds itself (8 bytes each); this costs nothing where the bug is absent.
"""

from __future__ import annotations

import ctypes
import sys

_RESERVE: list[list[None]] = []
LOW_WATER = 200_000
TOP_UP = 1_000_000


def top_up_none() -> None:
    """Call regularly (each animation frame): cheap when the count is healthy."""
    if sys.version_info >= (3, 12):
        return
    if sys.getrefcount(None) < LOW_WATER:
        reserve = [None] * TOP_UP
        # never freed, not even at interpreter exit: freeing it would hand back references the
        # binding already took, and None would be deallocated during finalization
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(reserve))
        _RESERVE.append(reserve)
