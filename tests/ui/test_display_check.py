"""``DISPLAY`` pointing nowhere: one line and exit 2 before Qt loads, not Qt's abort (issue 12)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from explorer.commands.gui import x_display_answers


def _unused_display() -> str:
    for n in range(990, 1100):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and x_display_answers(f":{n}") is False:
            return f":{n}"
    pytest.skip("no unused X display number found")


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


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed")
def test_a_real_x_server_answers():
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()
        assert number.isdigit()
        assert x_display_answers(f":{number}") is True
    finally:
        server.terminate()
        server.wait(timeout=10)
