"""``device-explorer bench``: listing, one line per point, JSON lines, CSV, and one-line errors."""

from __future__ import annotations

import json

import pytest

from explorer.bench.results import read_csv
from explorer.cli import main


def test_no_workload_lists_them(capsys):
    assert main(["bench"]) == 0
    out = capsys.readouterr().out
    for name in (
        "matmul",
        "vector_add",
        "matvec",
        "copies",
        "small_vs_big",
        "cnn_step",
        "timing_lesson",
        "two_gpus",
    ):
        assert name in out
    assert "_crash_test" not in out


def test_list_as_json(capsys):
    assert main(["bench", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w["name"] for w in data][:2] == ["matmul", "vector_add"]
    assert data[0]["unit"] == "GFLOP/s"


@pytest.mark.slow
def test_runs_one_line_per_point_and_writes_csv(capsys, tmp_path):
    csv_path = tmp_path / "r.csv"
    assert main(["bench", "matmul", "--sizes", "16", "32", "--repeats", "2", "--csv", str(csv_path)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("matmul")]
    assert len(lines) == 2 and "n=16" in lines[0] and "n=32" in lines[1] and "GFLOP/s" in lines[0]
    rows = read_csv(csv_path)
    assert [r.size for r in rows] == [16, 32] and all(r.repeats == 2 for r in rows)


@pytest.mark.slow
def test_sizes_are_printed_with_thousands_separators(capsys):
    """A size written "N=10000000" is hard to read off a projector; the CLI and the window share the label."""
    assert main(["bench", "vector_add", "--sizes", "12345", "--repeats", "2"]) == 0
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("vector_add")]
    assert "N=12,345 " in line and "12345" not in line
    from explorer.bench.workloads import get_workload

    assert get_workload("vector_add").size_label(10_000_000) == "N=10,000,000"
    assert get_workload("matmul").size_label(2048) == "n=2,048"
    assert get_workload("copies").size_label(4 << 20) == "4 MiB"


@pytest.mark.slow
def test_json_lines(capsys):
    assert main(["bench", "vector_add", "--sizes", "1K", "--repeats", "2", "--json"]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert len(rows) == 1 and rows[0]["size"] == 1024 and rows[0]["variant"] == "cpu numpy"
    assert rows[0]["throughput_unit"] == "GB/s" and rows[0]["median_s"] > 0


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["bench", "matmull"], "unknown workload 'matmull'"),
        (["bench", "matmul", "--sizes", "0"], "0; it must be at least 1"),
        (["bench", "matmul", "--sizes", "-5"], "-5; it must be at least 1"),
        (["bench", "matmul", "--sizes", "abc"], "'abc'; it must be a whole number"),
        (["bench", "matmul", "--sizes", "1.5"], "'1.5'; it must be a whole number"),
        (["bench", "matmul", "--device", "gpu"], "'gpu'"),
        (["bench", "matmul", "--device", "cuda:7"], "cuda:7 is not present"),
        (["bench", "matmul", "--repeats", "0"], "repeats is 0; it must be at least 1"),
        (["bench", "matmul", "--repeats", "abc"], "repeats is 'abc'; it must be a whole number"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_an_error_row_makes_the_exit_status_1(capsys):
    # the hidden test workload's size 2 asks for more memory than any machine has: an error row
    assert main(["bench", "_oom_test", "--sizes", "2", "--repeats", "1"]) == 1
    assert "ERROR: out of memory" in capsys.readouterr().out
