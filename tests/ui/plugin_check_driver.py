"""Run ``device-explorer`` with the loader's library folders replaced by one folder: what a machine
without some libraries looks like to the platform-plugin check (tests/ui/test_platform_plugin.py).

``python plugin_check_driver.py FOLDER ARGS...``: the check looks for shared libraries only in FOLDER
(and LD_LIBRARY_PATH, and the plugins' own RUNPATH), and the loader is taken to find no more than
that, then ``cli.main(ARGS)`` runs; the last line on
stdout says whether Qt's GUI module was loaded, and the exit status is the command's.
"""

from __future__ import annotations

import sys

from explorer import qtcheck, sharedlibs


def main() -> int:
    folder, argv = sys.argv[1], sys.argv[2:]
    sharedlibs.ld_so_conf_dirs = lambda conf="/etc/ld.so.conf": [folder]  # type: ignore[assignment]
    sharedlibs.trusted_dirs = lambda info=None: []  # type: ignore[assignment]
    qtcheck.loader_finds = lambda library: False  # nor does the loader find them, on that machine
    from explorer.cli import main as cli_main

    code = cli_main(argv)
    print("qt-loaded" if "PySide6.QtGui" in sys.modules else "qt-not-loaded")
    return code


if __name__ == "__main__":
    sys.exit(main())
