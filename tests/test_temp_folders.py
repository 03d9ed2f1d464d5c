"""Scripts the tests run leave nothing behind in the temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("home_given", [False, True])
def test_the_gpu_acceptance_script_leaves_no_folder_in_the_temporary_folder(tmp_path, home_given):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "DEVICE_EXPLORER_HOME"}
    env["TMPDIR"] = str(temp)
    if home_given:
        env["DEVICE_EXPLORER_HOME"] = str(tmp_path / "home")
    for argv in (["--list"], ["--out", str(tmp_path / "report")]):
        proc = subprocess.run(
            [sys.executable, "benchmarks/gpu_acceptance.py", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode in (0, 1, 2), proc.stderr
    left = sorted(p.name for p in temp.iterdir() if p.name.startswith("device-explorer-acceptance-"))
    assert left == []
