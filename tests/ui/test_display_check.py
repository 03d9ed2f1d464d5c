"""``DISPLAY`` pointing nowhere: one line and exit 2 before Qt loads, not Qt's abort."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer.commands.gui import x_display_answers


def _unused_display() -> str:
    for n in range(990, 1100):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and x_display_answers(f":{n}") is False:
            return f":{n}"
    pytest.skip("no unused X display number found")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 displays are a Linux matter here")
def test_gui_on_a_display_nobody_serves_is_one_line(tmp_path):
    display = _unused_display()
    env = {**os.environ, "DISPLAY": display, "DEVICE_EXPLORER_HOME": str(tmp_path)}
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "gui"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"cannot open display '{display}'" in proc.stderr and "screenshot --out" in proc.stderr


def test_a_real_x_server_answers(display):
    assert x_display_answers(display) is True
