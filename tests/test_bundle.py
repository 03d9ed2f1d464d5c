"""The built PyInstaller bundle works offscreen and writes nothing into its own folder.

Slow and opt-in: build first (packaging/build.sh), then
    DEVICE_EXPLORER_BUNDLE=dist/device-explorer python -m pytest tests/test_bundle.py -m slow
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = os.environ.get("DEVICE_EXPLORER_BUNDLE")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not BUNDLE, reason="set DEVICE_EXPLORER_BUNDLE to a built bundle folder (packaging/build.sh)"
    ),
]


def _bundle() -> Path:
    path = Path(BUNDLE or "").expanduser().resolve()
    assert (path / "device-explorer").is_file(), f"{path} holds no device-explorer executable"
    return path


def test_smoke_test_passes_against_the_bundle():
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "smoke_test.sh"), str(_bundle())],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    for step in ("self-test", "screenshot", "visualizer", "benchmarks", "devices", "bench", "read-only"):
        assert f"PASS  {step}" in proc.stdout


def test_bundle_carries_resources_and_leaves_out_build_and_test_tools():
    internal = _bundle() / "_internal"
    assert (internal / "resources" / "catalog.json").is_file()
    assert (internal / "resources" / "icons" / "device-explorer.png").is_file()
    platforms = {p.name for p in (internal / "PySide6" / "Qt" / "plugins" / "platforms").iterdir()}
    assert {"libqoffscreen.so", "libqxcb.so"} <= platforms
    for tool in ("pytest", "_pytest", "hypothesis", "PyInstaller", "ruff", "pytestqt"):
        assert not (internal / tool).exists(), f"{tool} was bundled"
    assert not list((internal / "torch").glob("bin/test_*")), "torch's C++ test programs were bundled"
    assert not (internal / "torch" / "include").exists(), "torch's C++ headers were bundled"
