"""Entry script PyInstaller freezes: the bundle's ``device-explorer`` executable starts here.

It exists (rather than pointing PyInstaller at ``explorer/__main__.py``) so that settings only a
frozen app needs are made before anything heavy is imported: numba must not write its cache next
to its sources, which inside a bundle means inside the bundle folder a lab may have made read-only.
"""

from __future__ import annotations

import multiprocessing
import os
import sys


def _frozen_environment() -> None:
    if not getattr(sys, "frozen", False):
        return
    if "NUMBA_CACHE_DIR" not in os.environ:
        import platformdirs

        os.environ["NUMBA_CACHE_DIR"] = os.path.join(platformdirs.user_cache_dir("device-explorer"), "numba")


if __name__ == "__main__":
    # First, before any argument parsing: a frozen worker process started by multiprocessing
    # re-runs this executable, and freeze_support() turns it into the worker instead of the CLI.
    multiprocessing.freeze_support()
    _frozen_environment()
    from explorer.cli import main

    sys.exit(main())
