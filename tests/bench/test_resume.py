"""Resuming a run: only the points without a result are measured again; the finished ones are kept."""

from __future__ import annotations

import json

import pytest

from explorer.bench.results import BenchPoint, error_point, points_to_csv, points_to_json
from explorer.bench.resume import read_points, resume
from explorer.bench.runner import BenchPlan, plan_points
from explorer.errors import UserError
from explorer.remote.target import parse_remote


def _ok(size: int, host: str = "", stamp: float = 1000.0) -> BenchPoint:
    return BenchPoint(
        "matmul", "cpu", "cpu", size, f"n={size}", median_s=0.001, repeats=3, timestamp=stamp, host=host
    )


def _err(size: int, host: str = "") -> BenchPoint:
    p = error_point("matmul", "cpu", "cpu", size, f"n={size}", "the connection to gpu-lab dropped")
    p.host = host
    return p


PLAN = BenchPlan("matmul", ["cpu"], sizes=[32, 64, 128, 256], repeats=3)


def test_only_points_without_a_result_are_planned_and_the_rest_kept():
    earlier = [_ok(32), _err(64), _ok(128)]  # 256 was never reached
    resumed = resume(PLAN, earlier)
    assert [s["size"] for s in plan_points(resumed.plan)] == [64, 256]
    assert resumed.left == 2
    assert resumed.kept == [earlier[0], earlier[2]]  # the same records, untouched


def test_a_point_measured_again_later_is_kept_once_the_newest():
    old, new = _ok(32, stamp=1000.0), _ok(32, stamp=2000.0)
    resumed = resume(PLAN, [old, _err(64), new])
    assert resumed.kept == [new]
    assert [s["size"] for s in plan_points(resumed.plan)] == [64, 128, 256]


def test_a_finished_run_has_nothing_to_resume():
    with pytest.raises(UserError, match=r"all 4 point\(s\) of this matmul run were measured"):
        resume(PLAN, [_ok(n) for n in (32, 64, 128, 256)])


def test_points_of_another_workload_or_machine_are_refused_in_one_line():
    other = BenchPoint("vector_add", "cpu", "cpu", 1024, "1024")
    with pytest.raises(UserError, match="holds points of vector_add, not of matmul"):
        resume(PLAN, [other])
    remote = parse_remote("gpu-lab")
    with pytest.raises(
        UserError, match=r"measured on this machine, but this run is on gpu-lab.*without --host"
    ):
        resume(BenchPlan("matmul", ["cpu"], sizes=[32], remote=remote), [_err(32)])
    with pytest.raises(UserError, match=r"measured on gpu-lab.*\(--host gpu-lab\)"):
        resume(PLAN, [_ok(32, host="gpu-lab")])


def test_a_remote_runs_points_resume_on_that_remote():
    remote = parse_remote("gpu-lab")
    plan = BenchPlan("matmul", ["cpu"], sizes=[32, 64], remote=remote)
    resumed = resume(plan, [_ok(32, host="gpu-lab"), _err(64, host="gpu-lab")])
    assert resumed.plan.remote == remote
    assert [s["size"] for s in plan_points(resumed.plan)] == [64]


def test_remeasuring_the_ceilings_is_not_done_again_on_resume():
    plan = BenchPlan("matmul", ["cpu"], sizes=[32, 64], measure_roof=True, remeasure_roof=True)
    resumed = resume(plan, [_ok(32)])
    assert resumed.plan.measure_roof and not resumed.plan.remeasure_roof


@pytest.mark.parametrize("form", ["csv", "json", "jsonl", "jsonl-one"])
def test_every_file_the_app_writes_can_be_resumed_from(tmp_path, form):
    points = [_ok(32), _err(64)]
    if form == "csv":
        path = tmp_path / "run.csv"
        path.write_text(points_to_csv(points))
    elif form == "json":
        path = tmp_path / "run.json"
        path.write_text(points_to_json(points))
    else:  # what ``bench --json`` prints: one object per line, "host": null for this machine
        rows = points if form == "jsonl" else points[:1]
        path = tmp_path / "run.jsonl"
        path.write_text("".join(json.dumps({**p.to_dict(), "host": None}) + "\n" for p in rows))
    expected = points if form != "jsonl-one" else points[:1]
    assert [(p.size, p.ok, p.host) for p in read_points(path)] == [(p.size, p.ok, "") for p in expected]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "there is no such file"),
        (b"", "it is empty"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"points": [{"workload": "matmul"}]}', "point 1"),
        (b'{"workload": "matmul", "variant": "cpu"}\n{"nope": 1}\n', "line 1"),
        (b"hello\nworld\n", "not valid JSON"),
        (b"[]", "holds no points"),
    ],
)
def test_a_file_that_is_not_a_run_is_one_line(tmp_path, content, words):
    path = tmp_path / "run.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UserError) as info:
        read_points(path)
    assert words in str(info.value) and "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_folder_is_not_a_results_file(tmp_path):
    with pytest.raises(UserError, match="folder"):
        read_points(tmp_path)


def _csv_with(tmp_path, field: str) -> str:
    point = BenchPoint(
        workload="matmul", variant="cpu", device="cpu", size=16, size_label="n=16", median_s=1e-4
    )
    path = tmp_path / "run.csv"
    path.write_text(points_to_csv([point]).replace("n=16", field))
    return str(path)


def test_bench_resume_with_a_csv_field_over_131072_characters_is_one_line(tmp_path, capsys):
    """Once a traceback (_csv.Error: field larger than field limit), issue 23 item 8."""
    from explorer.cli import main

    words = "row 1 is not CSV the app writes (field larger than field limit (131072))"
    path = _csv_with(tmp_path, "x" * 131_073)
    assert main(["bench", "matmul", "--sizes", "16", "32", "--resume", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and words in err and path in err


def test_bench_resume_with_a_nul_in_the_name_is_one_line(capsys):
    """Found by benchmarks/fuzz_cli.py (seed 7, call 5922): os.open's ValueError was a traceback."""
    from explorer.cli import main

    assert main(["bench", "matmul", "--resume", "run\x00.csv"]) == 2
    assert capsys.readouterr().err == (
        "device-explorer: error: --resume 'run\\x00.csv': a file name cannot hold a NUL character\n"
    )


@pytest.mark.parametrize("text", ["~nosuchuser/x.csv", "~nosuchuser"])
def test_bench_resume_from_an_unknown_users_home_is_one_line(capsys, text):
    """Once a traceback (Path.expanduser's RuntimeError), issue 23 item 8."""
    from explorer.cli import main

    assert main(["bench", "matmul", "--resume", text]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"device-explorer: error: --resume {text!r}: there is no user 'nosuchuser' whose home '~' could mean\n"
    )


def test_a_csv_s_spreadsheet_quoted_cells_read_back_as_written(tmp_path):
    point = BenchPoint(
        workload="matmul", variant="cpu", device="cpu", size=16, size_label="=1+1", median_s=1e-4,
        throughput_unit="-x", model="''@y", dtype="'plain",
    )  # fmt: skip
    path = tmp_path / "run.csv"
    path.write_text(points_to_csv([point]))
    (back,) = read_points(path)
    assert (back.size_label, back.throughput_unit, back.model, back.dtype) == ("=1+1", "-x", "''@y", "'plain")
