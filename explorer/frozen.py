"""Whether this is the PyInstaller bundle, for the few places that start the app differently there.

The app runs its child processes one way: an agent (``explorer.agent``), started from source as
``python -m explorer agent`` and inside the bundle, whose ``sys.executable`` is the app itself and
has no ``-m``, as that executable with ``agent`` (``explorer.agent.child.local_agent_argv``).
"""

from __future__ import annotations

import sys


def is_frozen() -> bool:
    """True inside a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False))
