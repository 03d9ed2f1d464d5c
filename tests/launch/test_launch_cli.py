"""The occupancy and launch sub-commands: text, JSON keys, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest

from explorer import cli

pytestmark = pytest.mark.usefixtures("fake_devices")


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_occupancy_by_cc_text(capsys):
    code, out, err = run(capsys, "occupancy", "--cc", "7.5", "--threads", "256")
    assert code == 0 and err == ""
    assert "compute capability 7.5 (Turing)" in out
    assert "100% theoretical occupancy" in out and "limited by: warps" in out


def test_occupancy_json_keys(capsys):
    code, out, _ = run(capsys, "occupancy", "--device", "1650", "--threads", "256", "--regs", "64", "--json")
    data = json.loads(out)
    assert code == 0
    for key in (
        "warps_per_block",
        "active_blocks_per_sm",
        "active_warps_per_sm",
        "max_warps_per_sm",
        "occupancy",
        "limiter",
        "blocks_limit_warps",
        "blocks_limit_blocks",
        "blocks_limit_regs",
        "blocks_limit_smem",
    ):
        assert key in data
    assert data["device"] == "NVIDIA GeForce GTX 1650" and data["compute_capability"] == "7.5"
    assert data["active_blocks_per_sm"] == 4 and data["occupancy"] == 1.0
    assert data["blocks_limit_smem"] is None  # no shared memory: no limit


def test_occupancy_shared_memory_limited_on_h100(capsys):
    code, out, _ = run(
        capsys, "occupancy", "--device", "H100", "--threads", "128", "--smem", "100000", "--json"
    )
    data = json.loads(out)
    assert data["active_blocks_per_sm"] == 2 and data["limiter"] == "shared_memory"
    assert data["notes"] and "opt" in data["notes"][0]


def test_launch_text_numba_lesson(capsys):
    code, out, _ = run(capsys, "launch", "--device", "1650", "--grid", "6", "--block", "1024", "--n", "5466")
    assert code == 0
    assert "blocks: 6" in out and "idle threads (global index >= n): 678" in out
    assert "round-robin" in out


def test_launch_json_keys(capsys):
    code, out, _ = run(
        capsys, "launch", "--device", "1650", "--grid", "98", "--block", "1024", "--n", "100000", "--json"
    )
    data = json.loads(out)
    assert code == 0
    expected = {
        "total_blocks": 98,
        "total_threads": 100352,
        "warps_per_block": 32,
        "idle_threads": 352,
        "resident_blocks_per_sm": 1,
        "waves": 7,
        "last_wave_blocks": 2,
    }
    assert {k: data[k] for k in expected} == expected


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["launch", "--device", "1650", "--grid", "1", "--block", "2048"],
            "block has 2048 threads; NVIDIA GeForce GTX 1650 allows at most 1024 per block",
        ),
        (
            ["launch", "--device", "1650", "--grid", "abc", "--block", "32"],
            "grid x is 'abc'; it must be a whole number",
        ),
        (
            ["launch", "--device", "1650", "--grid", "1,65536", "--block", "32"],
            "allows at most 65535 blocks in y",
        ),
        (
            ["occupancy", "--cc", "7.5", "--threads", "3.5"],
            "threads per block is '3.5'; it must be a whole number",
        ),
        (["occupancy", "--cc", "7.5", "--threads", "0"], "--threads 0: a block needs at least 1 thread"),
        (["occupancy", "--cc", "7.5", "--threads", "64", "--regs", "300"], "allows at most 255 per thread"),
        (
            ["occupancy", "--cc", "4.0", "--threads", "64"],
            "compute capability 4.0 is not in the limits table",
        ),
        (["occupancy", "--device", "cpu", "--threads", "64"], "Some CPU is not an NVIDIA GPU"),
        (["occupancy", "--device", "nothing", "--threads", "64"], "no single device matches 'nothing'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.slow
def test_real_command_line_with_the_catalog(monkeypatch):
    """End to end through the real device discovery: "1650" names the catalog's GTX 1650."""
    import subprocess
    import sys

    monkeypatch.undo()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "launch",
            "--device",
            "1650",
            "--grid",
            "6",
            "--block",
            "1024",
            "--n",
            "5466",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["total_blocks"], data["idle_threads"]) == (6, 678)
    assert "1650" in data["device"]
    bad = subprocess.run(
        [sys.executable, "-m", "explorer", "occupancy", "--device", "h100", "--threads", "2048"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert "block has 2048 threads" in bad.stderr and "H100" in bad.stderr and "Traceback" not in bad.stderr


def test_launch_with_a_2d_problem_size(capsys):
    code, out, _ = run(
        capsys,
        "launch",
        "--device",
        "1650",
        "--grid",
        "120,68",
        "--block",
        "16,16",
        "--n",
        "1920,1080",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["idle_threads"] == 15_360 and data["total_threads"] == 2_088_960
    assert data["config"]["extent"] == [1920, 1080, 1] and data["config"]["n"] == 1920 * 1080
    code, out, _ = run(
        capsys, "launch", "--device", "1650", "--grid", "120,68", "--block", "16,16", "--n", "1920,1080"
    )
    assert code == 0 and "problem 1,920 x 1,080 = 2,073,600 elements" in out
    assert "idle threads (outside the problem on some axis): 15,360" in out


def test_launch_with_a_bad_2d_problem_size_is_one_line(capsys):
    code, out, err = run(
        capsys, "launch", "--device", "1650", "--grid", "120,68", "--block", "16,16", "--n", "1920,0"
    )
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "problem size y is 0; it must be at least 1" in err


def test_launch_thread_describes_one_thread_of_a_2d_launch(capsys):
    """Per-axis position, the index over the extent with its formula, warp, lane, SM, wave."""
    argv = ["launch", "--device", "1650", "--grid", "120,68", "--block", "16,16", "--n", "1920,1080"]
    code, out, err = run(capsys, *argv, "--thread", "48,2,0:4,5,0")
    assert code == 0 and err == ""
    assert "blockIdx:" in out and "(48, 2, 0)" in out and "(4, 5, 0)" in out
    assert "x = blockIdx.x * blockDim.x + threadIdx.x = 48 * 16 + 4 = 772" in out
    assert "y = blockIdx.y * blockDim.y + threadIdx.y = 2 * 16 + 5 = 37" in out
    assert "index = y * width + x = 37 * 1920 + 772 = 71812" in out
    assert "linear thread number:" in out and "288 * 256 + 84 = 73812" in out
    assert "warp 2 of its block, lane 20" in out and "SM 0, wave 5" in out
    assert "works on element (772, 37)" in out
    code, out, _ = run(capsys, *argv, "--thread", "48,2:4,5", "--json")
    t = json.loads(out)["thread"]
    assert code == 0
    assert (t["position"], t["extent_index"], t["global_linear"]) == ([772, 37, 0], 71812, 73812)
    assert (t["warp"], t["lane"], t["sm"], t["wave"], t["idle"]) == (2, 20, 0, 4, False)
    assert t["extent_index_formula"] == "index = y * width + x = 37 * 1920 + 772 = 71812"
    # below the image: idle, no index
    code, out, _ = run(capsys, *argv, "--thread", "0,67:3,10", "--json")
    t = json.loads(out)["thread"]
    assert t["idle"] is True and t["position"] == [3, 1082, 0] and t["extent_index"] is None


@pytest.mark.parametrize(
    "thread,message",
    [
        ("98:0", "blockIdx (98, 0, 0) is outside the grid (98, 1, 1)"),
        ("0:1024", "threadIdx (1024, 0, 0) is outside the block (1024, 1, 1)"),
        ("3", "--thread is '3'; give blockIdx:threadIdx"),
        ("1,a:0", "--thread blockIdx y is 'a'; it must be a whole number"),
    ],
)
def test_launch_thread_out_of_range_is_one_line(capsys, thread, message):
    code, out, err = run(
        capsys, "launch", "--device", "1650", "--grid", "98", "--block", "1024", "--thread", thread
    )
    assert code == 2 and out == "" and message in err and err.strip().count("\n") == 0


def test_one_small_block_says_how_little_of_the_gpu_it_fills(capsys):
    code, out, _ = run(capsys, "launch", "--device", "1650", "--grid", "1", "--block", "33")
    assert code == 0
    assert "100% theoretical occupancy" in out
    assert "fills 2 of the GPU's 512 warp slots (0.4%)" in out
