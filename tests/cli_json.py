"""A sub-command's ``--json`` output, run in this process through the CLI's own parser and
handler: how the quiz and lesson tests check an answer against the command that prints it."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from explorer.cli import build_parser

PARSER = build_parser()


def run_json(argv: tuple[str, ...] | list[str]) -> Any:
    """``device-explorer ARGS --json``'s output, parsed; the command must succeed."""
    assert argv[0] == "device-explorer"
    args = PARSER.parse_args(list(argv[1:]))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert args.handler(args) == 0
    return json.loads(out.getvalue())
