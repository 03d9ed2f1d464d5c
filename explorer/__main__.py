"""``python -m explorer`` runs the same entry point as the console script (never frozen: the
bundle starts at ``packaging/entry.py``, and ``cli.main`` calls ``freeze_support`` when frozen)."""

import sys

from explorer.cli import main

sys.exit(main())
