"""A damaged ``measured-ceilings.json`` costs one line, never the benchmarks, and a
full disk while measuring them again is said, not swallowed.

Once: deep nesting gave ``devices`` a RecursionError traceback and every bench point an error row,
NaN or 400-digit values an OverflowError, a named pipe hung ``devices``, and the file was never
moved aside; a full disk exited 0 in silence and left a 0-byte ``.tmp`` file each time. Every kind
of damage is read through the store in tests/roofs/test_store.py; here, what the commands make of it."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import cli
from explorer.bench import ceilings, peaks
from explorer.bench.lines import format_point
from explorer.bench.results import CEILINGS_NOTE
from explorer.roofs import store
from explorer.roofs.model import Ceiling
from explorer.roofs.store import MeasuredRoof

pytestmark = pytest.mark.slow  # every test here starts a process

NESTED = "[" * 200_000 + "]" * 200_000


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("kind", ["deep nesting", "named pipe"])
def test_devices_lists_with_a_damaged_ceilings_file_and_says_so_once(home, tmp_path, kind):
    path = home / store.STORE_FILE
    if kind == "named pipe":
        os.mkfifo(path)
    else:
        path.write_text(NESTED)
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "devices"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DEVICE_EXPLORER_HOME": str(home)},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "Roofline ceilings:" in run.stdout
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"The measured ceilings in {path} could not be used (")
    assert list(home.glob(store.STORE_FILE + ".damaged-*"))


# --- a full disk -----------------------------------------------------------------------------------


@pytest.fixture
def full_home(tmp_path, monkeypatch):
    """A data folder on a real, full file system: a 64 KiB tmpfs filled to the last block."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    folder = tmp_path / "full"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"tmpfs could not be mounted here: {done.stderr.decode(errors='replace').strip()}")
    try:
        fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(folder))
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.fixture
def quick_measure(monkeypatch):
    """Measuring the CPU's ceilings takes seconds; what is stored afterwards is what is tested."""

    def measure(cpu, fingerprint, **_):
        return MeasuredRoof(
            "cpu", fingerprint, 1.7e9, 3.0, 2, "x", [Ceiling("compute", 9.0, "measured", "s", "b")]
        )

    monkeypatch.setattr(ceilings, "measure_cpu_roof", measure)


def _litter(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_devices_measure_on_a_full_disk_is_one_line_and_leaves_nothing(full_home, quick_measure, capsys):
    assert cli.main(["devices", "--measure"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"device-explorer: error: the ceilings of cpu were measured but could not be kept in "
        f"{full_home / store.STORE_FILE}: No space left on device; free some space and measure again"
    )
    assert _litter(full_home) == [] and not (full_home / store.STORE_FILE).exists()


def test_a_bench_point_on_a_full_disk_carries_the_note_that_is_printed(full_home, quick_measure):
    from explorer.bench.execute import PointSpec, run_point
    from explorer.bench.workloads import get_workload

    spec = PointSpec(
        index=0, workload="vector_add", device="cpu", variant="numpy", variant_key="numpy", size=1000,
        repeats=3, measure_roof=True, remeasure_roof=True,
    )  # fmt: skip
    point, fatal = run_point(spec, get_workload(spec.workload))
    assert point.error is None and not fatal
    note = point.extra[CEILINGS_NOTE]
    assert note == (
        f"the ceilings of cpu could not be kept in {full_home / store.STORE_FILE} (No space left on "
        "device); they are measured again next time"
    )
    assert f"NOTE: {note}" in format_point(point)
    assert _litter(full_home) == []
    assert peaks.ensure_measured_quietly("cpu", force=True) == (note, True)  # again: the same, nothing left
    assert _litter(full_home) == []
