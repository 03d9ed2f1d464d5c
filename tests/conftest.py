"""Test-wide settings: Qt renders offscreen, numba's CUDA simulator is never on by accident."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Keep any settings/results a test writes out of the user's real folders.
os.environ.setdefault(
    "DEVICE_EXPLORER_HOME", os.path.join(os.environ.get("TMPDIR", "/tmp"), "device-explorer-tests")
)
