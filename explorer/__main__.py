"""``python -m explorer`` runs the same entry point as the console script."""

import multiprocessing
import sys

multiprocessing.freeze_support()

from explorer.cli import main  # noqa: E402 (freeze_support must run first)

sys.exit(main())
