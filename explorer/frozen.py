"""Start a Python module in a child process, from source or from inside the PyInstaller bundle.

Several parts run work in a child process so a crash or a hung kernel never takes the window down,
and so numba's CUDA simulator can be switched on before numba is imported. From source the child is
``python -m some.module``. Inside the bundle ``sys.executable`` is the app itself, which has no
``-m``: the child is the same executable started with ``DEVICE_EXPLORER_RUN_MODULE`` naming the
module, and the bundle's entry script (packaging/entry.py) runs that module as ``__main__`` instead
of the command line. ``module_command`` hides the difference; callers pass its environment on.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Mapping, Sequence

RUN_MODULE_ENV = "DEVICE_EXPLORER_RUN_MODULE"


def is_frozen() -> bool:
    """True inside a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False))


def module_command(
    module: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The argv and the full environment that run ``python -m module args`` in a child process.

    ``env`` is the environment to start from (default: this process's); the returned one is a copy
    with the bundle's module switch set or cleared, so pass it to ``subprocess`` as ``env=``.
    """
    child_env = dict(os.environ if env is None else env)
    if is_frozen():
        child_env[RUN_MODULE_ENV] = module
        return [sys.executable, *args], child_env
    child_env.pop(RUN_MODULE_ENV, None)
    return [sys.executable, "-m", module, *args], child_env


def run_requested_module() -> None:
    """If this process was started by ``module_command`` inside the bundle, run that module and exit.

    Called first thing by the bundle's entry script. The variable is removed before the module runs
    so a grandchild started the ordinary way is the app again, not the same module.
    """
    module = os.environ.pop(RUN_MODULE_ENV, None)
    if not module:
        return
    if not module.startswith("explorer."):
        print(
            f"device-explorer: error: {RUN_MODULE_ENV} names {module!r}; only explorer modules run this way",
            file=sys.stderr,
        )
        raise SystemExit(2)
    sys.argv[0] = module
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    raise SystemExit(0)
