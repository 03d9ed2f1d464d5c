"""Events a Qt-free model emits and its views subscribe to (napari's model/view split, without Qt).

A model in the core owns the state a page shows; when that state changes it emits an ``Event``,
and every view connected to it reads what it needs from the model again. The callbacks take no
arguments on purpose: a view never learns the new state from the event, only that it is time to
look, so a view added later (another picture of the same model) cannot disagree with the others.

Base module: imports nothing from explorer.
"""

from __future__ import annotations

from collections.abc import Callable

Callback = Callable[[], object]


class Event:
    """``connect`` a callback; ``emit`` calls every connected one, in the order they connected."""

    def __init__(self, name: str) -> None:
        self.name = name  # for reprs and error messages only
        self._callbacks: list[Callback] = []

    def connect(self, callback: Callback) -> Callback:
        """Call ``callback`` on every ``emit`` from now on; returns it (usable as a decorator)."""
        if callback not in self._callbacks:
            self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callback) -> None:
        """Stop calling ``callback``; one that was never connected is ignored."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self) -> None:
        """Call the callbacks (a copy of the list: one may connect or disconnect another)."""
        for callback in list(self._callbacks):
            callback()

    def __repr__(self) -> str:
        return f"Event({self.name!r}, {len(self._callbacks)} connected)"
