"""The commands against a stand-in ``pynvml`` whose ``nvmlInit`` sleeps a minute, in a real process.

``tests/devices/hung_nvml`` goes first on ``PYTHONPATH``, as the issue reproduced it: a GPU
that fell off the bus made ``devices`` and ``launch --device 1650`` take 63 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process

HUNG = Path(__file__).resolve().parent / "hung_nvml"
ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HUNG), str(ROOT), env.get("PYTHONPATH", "")])
    env["HUNG_NVML_SLEEP_S"] = "60"
    env.update(extra)
    return env


def _run(code: str, timeout: float = 50) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=timeout
    )
    return done, time.monotonic() - started


def test_devices_says_nvml_did_not_answer_and_lists_the_rest():
    done, took = _run("from explorer.cli import main; raise SystemExit(main(['devices', '--json']))")
    assert done.returncode == 0, done.stderr
    assert took < 40  # the stand-in sleeps 60 s: only the deadline can end it sooner
    data = json.loads(done.stdout)
    nvml = next(p for p in data["probes"] if p["probe"] == "nvml")
    assert nvml["message"] == "NVML did not answer within 3 s: the driver or a GPU may be hung."
    assert data["devices"][0]["kind"] == "cpu"
    assert "NVML did not answer within 3 s" in data["why_no_gpu"]
    assert "Traceback" not in done.stderr


def test_launch_on_a_catalog_gpu_asks_no_driver_and_imports_no_gpu_library():
    code = (
        "import sys\n"
        "from explorer.cli import main\n"
        "rc = main(['launch', '--device', '1650', '--grid', '98', '--block', '1024'])\n"
        "heavy = sorted(m for m in ('torch', 'numba', 'pynvml', 'cpuinfo') if m in sys.modules)\n"
        "print('IMPORTED', heavy, file=sys.stderr)\n"
        "raise SystemExit(rc)\n"
    )
    done, took = _run(code)
    assert done.returncode == 0, done.stderr
    assert "IMPORTED []" in done.stderr
    assert "GTX 1650" in done.stdout and "98" in done.stdout
    assert took < 40


def test_a_present_looking_key_still_goes_to_the_probes():
    """ "cuda:0" cannot be a catalog sheet: it needs the probes, which then answer by their deadline."""
    done, took = _run(
        "from explorer.cli import main; raise SystemExit(main(['launch', '--device', 'cuda:0', '--grid', '1', '--block', '32']))"
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "cuda:0" in done.stderr
    assert took < 40
