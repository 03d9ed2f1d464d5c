"""Keep Python exceptions out of Qt: every override Qt calls from C++ is wrapped in ``qt_guard``.

When Qt calls a Python override (a model's ``data()``, ``paintEvent``, ``eventFilter``, ...) and
it raises, PySide has no caller to hand the exception to. It prints it and returns a default, or
in some paths (a model's ``data()`` while a view paints) the process dies with a segfault: one
bad value in a saved result took the whole app down at every start. ``qt_guard`` catches the
exception, logs it once per method (a paint loop would otherwise repeat it 60 times a second) and
returns a safe value instead:

* ``data()``: ``error: bad value`` in the cell and the exception as its tooltip, so the bad value
  is *seen* where it is, as the error it is;
* an event handler (``paintEvent``, ``resizeEvent``, ...): nothing (the event is dropped);
* ``eventFilter``: ``False`` (the event goes on to its target);
* anything else (``sizeHint``, ``headerData``, ``rowCount``...): what the Qt base class returns.

``tests/ui/test_qt_guard.py`` walks every class in ``explorer.ui`` and fails on an override of a
Qt method that is not guarded, so new code cannot forget it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: the attribute that marks a guarded function (the walker test looks for it)
GUARDED = "__qt_guarded__"
#: what a model cell shows when computing its text raised (the exception is its tooltip)
ERROR_CELL_TEXT = "error: bad value"
#: where a model remembers its failed cells' messages (for their tooltips), and how many at most
CELL_ERRORS = "_qt_guard_cell_errors"
MAX_CELL_ERRORS = 1000

_reported: set[str] = set()


def _base_result(func: Callable[..., Any], obj: Any, args: tuple, kwargs: dict) -> Any:
    """What the next class after the one defining ``func`` returns (the Qt base's behaviour)."""
    name = func.__name__
    for cls in type(obj).__mro__:
        found = cls.__dict__.get(name)
        if getattr(found, "__wrapped__", None) is func:
            return getattr(super(cls, obj), name)(*args, **kwargs)
    return None


def _safe_value(func: Callable[..., Any], obj: Any, args: tuple, kwargs: dict, exc: BaseException) -> Any:
    name = func.__name__
    if name == "data":
        return _error_cell(obj, args, kwargs, exc)
    if name == "eventFilter":
        return False
    if name.endswith("Event"):
        return None
    try:
        return _base_result(func, obj, args, kwargs)
    except Exception:  # the base failed too: nothing better to return
        return None


def _role(args: tuple, kwargs: dict) -> Any:
    from PySide6.QtCore import Qt

    return args[1] if len(args) > 1 else kwargs.get("role", Qt.ItemDataRole.DisplayRole)


def _cell_key(args: tuple, kwargs: dict) -> tuple[int, int] | None:
    index: Any = args[0] if args else kwargs.get("index")
    try:
        return (index.row(), index.column())
    except Exception:
        return None


def _error_cell(obj: Any, args: tuple, kwargs: dict, exc: BaseException) -> Any:
    """``error: bad value`` in the cell; the exception, in one line, as its tooltip."""
    from PySide6.QtCore import Qt

    message = " ".join(str(exc).split())
    errors = obj.__dict__.setdefault(CELL_ERRORS, {})
    key = _cell_key(args, kwargs)
    if key is not None and len(errors) < MAX_CELL_ERRORS:
        errors[key] = f"This value could not be shown ({type(exc).__name__}: {message})"
    role = _role(args, kwargs)
    if role == Qt.ItemDataRole.DisplayRole:
        return ERROR_CELL_TEXT
    if role == Qt.ItemDataRole.ToolTipRole:
        return errors.get(key)
    return None


def _cell_tooltip(obj: Any, args: tuple, kwargs: dict) -> str | None:
    """The remembered error of a cell whose display text failed, when its tooltip is asked for."""
    from PySide6.QtCore import Qt

    errors = obj.__dict__.get(CELL_ERRORS)
    if not errors or _role(args, kwargs) != Qt.ItemDataRole.ToolTipRole:
        return None
    return errors.get(_cell_key(args, kwargs))


def _report(func: Callable[..., Any], obj: Any) -> None:
    where = f"{type(obj).__module__}.{type(obj).__qualname__}.{func.__name__}"
    if where in _reported:
        return
    _reported.add(where)
    log.exception("%s raised; Qt gets a safe value instead (reported once per method)", where)


def qt_guard(func: F) -> F:
    """Wrap a Qt override so no exception escapes into C++ (see the module docstring)."""

    is_data = func.__name__ == "data"

    @functools.wraps(func)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            if is_data:
                tooltip = _cell_tooltip(self, args, kwargs)
                if tooltip is not None:
                    return tooltip
            return func(self, *args, **kwargs)
        except Exception as exc:
            _report(func, self)
            try:
                return _safe_value(func, self, args, kwargs, exc)
            finally:
                # The traceback holds the frame's locals: a QPainter left alive there would
                # keep painting the widget (and warn) until the next garbage collection.
                exc.__traceback__ = None

    setattr(guarded, GUARDED, True)
    return guarded  # type: ignore[return-value]


def reported_errors() -> frozenset[str]:
    """The methods that have raised under a guard in this process (for tests and the self-test)."""
    return frozenset(_reported)


__all__ = ["GUARDED", "qt_guard", "reported_errors"]
