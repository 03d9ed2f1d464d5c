"""A student's script traced on the simulator: golden kernels whose counts are known by hand, and
hostile scripts that get one line each while the caller lives on. Each starts a simulator child."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from explorer.errors import UserError
from explorer.kernels.run import KernelReport, LineFigures, trace_script
from explorer.resources import resource_path

pytestmark = pytest.mark.slow

HEADER = "import numpy as np\nfrom numba import cuda, float32\n\n"


def _script(tmp_path: Path, body: str, name: str = "student.py") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return path


def _line(report: KernelReport, launch: int, text: str) -> LineFigures:
    (found,) = [ln for ln in report.launches[launch].lines if text in ln.source]
    return found


def test_golden_global_kernels_copy_stride_two_and_a_partial_2d_block(tmp_path):
    path = _script(
        tmp_path,
        """
        @cuda.jit
        def copy(a, out):
            i = cuda.grid(1)
            out[i] = a[i]

        @cuda.jit
        def gather2(a, out):
            i = cuda.grid(1)
            out[i] = a[2 * i]

        @cuda.jit
        def fill2d(out):
            x, y = cuda.grid(2)
            if x < out.shape[1] and y < out.shape[0]:
                out[y, x] = x + y

        if __name__ == "__main__":
            a = np.arange(512, dtype=np.float32)
            out = np.zeros(256, dtype=np.float32)
            copy[2, 128](a, out)
            gather2[2, 128](a, out)
            img = np.zeros((5, 40), dtype=np.float32)   # 40 wide: a 32 x 4 grid of 2 x 2 blocks
            fill2d[(2, 2), (32, 4)](img)
            print("done")
        """,
    )
    report = trace_script(str(path))
    assert report.error is None and report.output.strip() == "done"
    assert [launch.kernel for launch in report.launches] == ["copy", "gather2", "fill2d"]
    copy = _line(report, 0, "out[i] = a[i]")
    assert (copy.global_load_requests, copy.global_load_sectors, copy.global_load_sectors_ideal) == (
        8,
        32,
        32,
    )
    assert copy.global_store_sectors == copy.global_store_sectors_ideal == 32
    gather = _line(report, 1, "a[2 * i]")
    assert gather.global_load_sectors == 2 * gather.global_load_sectors_ideal == 64
    fill = _line(report, 2, "out[y, x] = x + y")
    # 5 rows x 40 columns written: rows of 32 (4 sectors) and rows of 8 (1 sector), by warps of one row each
    assert fill.global_store_requests == 10 and fill.global_store_sectors == 5 * 4 + 5 * 1
    assert fill.active_lanes_mean == pytest.approx(200 / 10)
    branch = _line(report, 2, "if x < out.shape[1]")
    assert branch.warp_executions == 16 and branch.divergent_warps == 5  # the x = 32..63 warps of rows 0-4


def test_golden_shared_transpose_and_even_odd_branch_from_the_shipped_examples():
    report = trace_script(str(resource_path("examples", "transpose_shared.py")))
    # every lane of a block shares one tile (allocated once, though 1,024 threads reach it at once)
    assert report.output.count("correct: True") == 2, report.output
    naive = _line(report, 0, "out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]")
    assert naive.shared_load_requests == 32 and naive.shared_load_wavefronts == 32 * 32
    assert naive.shared_load_wavefronts_ideal == 32
    padded = _line(report, 1, "out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]")
    assert padded.shared_load_wavefronts == padded.shared_load_wavefronts_ideal == 32
    report = trace_script(str(resource_path("examples", "even_odd_branch.py")))
    branch = _line(report, 0, "if i % 2 == 0")
    assert branch.warp_executions == 4 and branch.divergent_warps == 4
    assert _line(report, 0, "out[i] = i * 2").active_lanes_mean == 16
    assert _line(report, 0, "out[i] = -i").active_lanes_mean == 16


def test_the_matvec_lesson_pair_shows_the_uncoalesced_and_the_coalesced_read():
    naive = trace_script(str(resource_path("examples", "matvec_row_per_thread.py")))
    row = _line(naive, 0, "total += m[row, col] * x[col]")
    assert row.global_load_sectors > 6 * row.global_load_sectors_ideal
    good = trace_script(str(resource_path("examples", "matvec_coalesced.py")))
    row = _line(good, 0, "total += m[row, col] * x[col]")
    assert row.global_load_sectors == row.global_load_sectors_ideal


HOSTILE = {
    "loops": ("@cuda.jit\ndef k(a):\n    while True:\n        a[0] += 1\n\nk[1, 1](np.zeros(1))\n", "budget"),
    "huge": ("@cuda.jit\ndef k(a):\n    a[0] = 1\n\nk[100000, 1024](np.zeros(1))\n", "threads per launch"),
    "fault": (
        "@cuda.jit\ndef k(a):\n    a[cuda.threadIdx.x + 10] = 1\n\nk[1, 32](np.zeros(8))\n",
        "kernel k faulted at line 6: IndexError",
    ),
    "exits": ("import sys\nprint('bye')\nsys.exit(3)\n", "exited with status 3"),
    "raises": ("raise RuntimeError('the student broke it')\n", "the script raised at line 4: RuntimeError"),
    "big-file": (
        "with open('big.bin', 'wb') as f:\n    for _ in range(2048):\n        f.write(b'0' * (1 << 20))\n",
        "OSError",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_script_is_one_line_and_the_caller_lives_on(tmp_path, name):
    body, said = HOSTILE[name]
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + body, encoding="utf-8")
    try:
        # the endless loop is stopped at the budget; the others end by themselves, but their child
        # imports numba first, which a loaded machine may take many seconds to do
        report = trace_script(str(path), timeout_s=20 if said == "budget" else 120)
        message = report.error or ""
    except UserError as exc:
        message = str(exc)
    assert said in message and "\n" not in message, message
    if name == "big-file":
        assert (tmp_path / "big.bin").stat().st_size <= 64 * 1024 * 1024


def test_a_script_that_forks_leaves_no_process_behind(tmp_path):
    marker = tmp_path / "child.pid"
    path = _script(
        tmp_path,
        f"""
        import os, time
        pid = os.fork()
        if pid == 0:
            open({str(marker)!r}, "w").write(str(os.getpid()))
            time.sleep(600)
            os._exit(0)
        time.sleep(600)
        """,
    )
    with pytest.raises(UserError, match="ran past the 5 s budget"):
        trace_script(str(path), timeout_s=5)
    pid = int(marker.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_memory_hog_is_stopped_at_the_memory_budget(tmp_path):
    path = _script(
        tmp_path,
        "import time\nhog = []\nfor _ in range(40):\n    hog.append(np.ones(1 << 24))\n    time.sleep(0.05)\n",
    )
    with pytest.raises(UserError, match="used more than 600 MiB"):
        trace_script(str(path), max_memory_bytes=600 * 1024**2, timeout_s=120)


def test_the_cli_passes_the_scripts_output_through_escaped(tmp_path):
    path = _script(
        tmp_path,
        "print('\\x1b]0;pwned\\x07\\x1b[2Jhello')\n@cuda.jit\ndef k(a):\n    a[0] = 1\n\nk[1, 1](np.zeros(1))\n",
    )
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "kernel", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout and "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "kernel k: grid (1, 1, 1), block (1, 1, 1)" in done.stdout


@pytest.mark.parametrize(
    ("arg", "said"),
    [
        ("nope.py", "no file 'nope.py'"),
        ("notes.txt", "is not a Python file"),
        ("/dev", "is not a Python file"),
    ],
)
def test_bad_files_are_one_line(tmp_path, arg, said):
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "kernel", arg],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
