"""Every page and every built-in lesson step, on each screen and text size of a classroom
(``render_walk.CONFIGS``: 1024x768 to 1920x1080, 100% to 250%), rendered by the real window in
one process per screen (tests/ui/render_walk.py): nothing clipped (the children of scroll areas
included), nothing overlapping, the window the screen's size, every figure's painted text at
least as tall as the text scale asks (measured from the painters' own calls), the narration in
full or scrolling, and what each step points at in view.
The walk's own run time is printed (``-s``) for each screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.render_walk import CONFIGS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # one process per screen: the full loop's, not the fast one's
@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_page_and_lesson_step_renders_whole(name):
    (width, height), scale, presenting = CONFIGS[name]
    argv = [
        sys.executable,
        "-m",
        "tests.ui.render_walk",
        "--size",
        f"{width}x{height}",
        "--scale",
        str(scale),
    ]
    if presenting:
        argv.append("--presentation")
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}  # the walk has its own screen
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    print(f"\n{name}: {report['states']} states in {report['seconds']} s")
    assert report["states"] >= 60  # every page, view, opened column and lesson step
    problems = [f"{state}: {p}" for state, found in report["problems"].items() for p in found]
    assert not problems, "\n".join(problems)
