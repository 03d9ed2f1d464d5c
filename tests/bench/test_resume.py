"""Resuming a run: only the points without a result are measured again; the finished ones are kept."""

from __future__ import annotations

import dataclasses
import json

import pytest

from explorer.bench.results import BenchPoint, error_point, points_to_csv, points_to_json
from explorer.bench.resume import read_points, resume
from explorer.bench.runner import BenchPlan, plan_points
from explorer.errors import UserError
from explorer.remote.target import parse_remote


def _ok(size: int, host: str = "", stamp: float = 1000.0) -> BenchPoint:
    return BenchPoint(
        "matmul",
        "cpu",
        "cpu",
        size,
        f"n={size}",
        variant_key="plain",
        median_s=0.001,
        repeats=3,
        timestamp=stamp,
        host=host,
    )


def _err(size: int, host: str = "") -> BenchPoint:
    return error_point(
        "matmul", "cpu", "cpu", size, f"n={size}", "the connection to gpu-lab dropped", host=host
    )


PLAN = BenchPlan("matmul", ["cpu"], sizes=[32, 64, 128, 256], repeats=3)


def test_only_points_without_a_result_are_planned_and_the_rest_kept():
    earlier = [_ok(32), _err(64), _ok(128)]  # 256 was never reached
    resumed = resume(PLAN, earlier)
    assert [s.size for s in plan_points(resumed.plan)] == [64, 256]
    assert resumed.left == 2
    assert resumed.kept == [earlier[0], earlier[2]]  # the same records, untouched


def test_a_point_measured_again_later_is_kept_once_the_newest():
    old, new = _ok(32, stamp=1000.0), _ok(32, stamp=2000.0)
    resumed = resume(PLAN, [old, _err(64), new])
    assert resumed.kept == [new]
    assert [s.size for s in plan_points(resumed.plan)] == [64, 128, 256]


def test_a_finished_run_has_nothing_to_resume():
    with pytest.raises(UserError, match=r"this matmul run has 4 points, every one measured"):
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
    assert [s.size for s in plan_points(resumed.plan)] == [64]


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
    """Once a traceback (_csv.Error: field larger than field limit)."""
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
    """Once a traceback (Path.expanduser's RuntimeError)."""
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


# --- points are keyed by what they measure, never by their label ------------------------------


def _relabel(monkeypatch, module: str, name: str, key: str, label: str) -> None:
    """Reword one variant's label, as a teacher editing the text would: its key stays."""
    import dataclasses
    import importlib

    mod = importlib.import_module(f"explorer.bench.{module}")
    renamed = tuple(dataclasses.replace(v, label=label) if v.key == key else v for v in getattr(mod, name))
    monkeypatch.setattr(mod, name, renamed)


def _measured(plan: BenchPlan, sizes: set[int]) -> list[BenchPoint]:
    """The points a run of ``plan`` makes, measured at ``sizes`` and an error row elsewhere."""
    out = []
    for s in plan_points(plan):
        if s.size in sizes:
            out.append(
                BenchPoint(
                    s.workload,
                    s.variant,
                    s.device,
                    s.size,
                    f"N={s.size}",
                    variant_key=s.variant_key,
                    median_s=0.001,
                    repeats=3,
                )
            )
        else:
            out.append(
                error_point(s.workload, s.variant, s.device, s.size, "", "stopped", variant_key=s.variant_key)
            )
    return out


def test_a_relabelled_variant_keeps_every_finished_point_under_its_new_name(monkeypatch):
    plan = BenchPlan("matvec", ["cpu"], sizes=[1000, 2000, 4000], repeats=3)
    earlier = _measured(plan, {1000, 4000})
    assert {p.variant for p in earlier} == {"cpu numpy", "cpu torch"}
    _relabel(monkeypatch, "wl_numba", "MATVEC", "numpy", "numpy, reworded")
    resumed = resume(plan, earlier)
    assert len(resumed.kept) == 4 and resumed.left == 2 and resumed.unmatched == ""
    assert [(p.size, p.variant_key) for p in resumed.kept] == [
        (1000, "numpy"),
        (1000, "torch"),
        (4000, "numpy"),
        (4000, "torch"),
    ]
    # the kept points join the series the rest of the run draws, under the new label
    assert {p.variant for p in resumed.kept} == {"cpu numpy, reworded", "cpu torch"}
    left = plan_points(resumed.plan)
    assert [(s.size, s.variant_key, s.variant) for s in left] == [
        (2000, "numpy", "cpu numpy, reworded"),
        (2000, "torch", "cpu torch"),
    ]
    untouched = [p for p in resumed.kept if p.variant_key == "torch"]
    assert all(any(p is e for e in earlier) for p in untouched)  # a point already right is the same record


def _old_csv(points: list[BenchPoint]) -> str:
    """A CSV as versions before the variant keys wrote it: no ``variant_key`` column."""
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(points_to_csv(points))))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[k for k in rows[0] if k != "variant_key"])
    writer.writeheader()
    for row in rows:
        del row["variant_key"]
        writer.writerow(row)
    return out.getvalue()


@pytest.mark.parametrize("form", ["csv", "json"])
def test_a_file_of_an_earlier_version_resumes_by_its_labels_and_says_what_matched_nothing(tmp_path, form):
    plan = BenchPlan("matvec", ["cpu"], sizes=[1000, 2000], repeats=3)
    points = _measured(plan, {1000})
    gone = dataclasses.replace(points[0], variant="cpu a variant since removed", variant_key="")
    points = [dataclasses.replace(p, variant_key="") for p in points] + [gone]
    path = tmp_path / f"old.{form}"
    if form == "csv":
        path.write_text(_old_csv(points))
    else:
        rows = [{k: v for k, v in p.to_dict().items() if k != "variant_key"} for p in points]
        path.write_text(json.dumps({"format_version": 1, "points": rows}))
    earlier = read_points(path)
    assert {p.variant_key for p in earlier} == {""}
    resumed = resume(plan, earlier, source=str(path))
    assert [(p.size, p.variant_key) for p in resumed.kept] == [(1000, "numpy"), (1000, "torch")]
    assert [(s.size, s.variant_key) for s in plan_points(resumed.plan)] == [(2000, "numpy"), (2000, "torch")]
    assert resumed.unmatched == (
        f"{path}: 1 finished point of 'cpu a variant since removed' match no variant of matvec "
        "in this version and are not kept"
    )


@pytest.mark.slow  # starts processes (the bench worker, or an X server)
def test_bench_resume_keeps_every_finished_point_after_a_variant_is_relabelled(tmp_path, capsys, monkeypatch):
    from explorer.bench.results import read_csv
    from explorer.cli import main

    first_csv, second_csv = tmp_path / "first.csv", tmp_path / "second.csv"
    run = ["bench", "_oom_test", "--sizes", "1", "2", "3", "--repeats", "1"]
    assert main([*run, "--csv", str(first_csv)]) == 1  # size 2 runs out of memory: an error row
    first = read_csv(first_csv)
    assert [(p.size, p.ok, p.variant, p.variant_key) for p in first] == [
        (1, True, "cpu", "plain"),
        (2, False, "cpu", "plain"),
        (3, True, "cpu", "plain"),
    ]
    _relabel(monkeypatch, "wl_selftest", "OUT_OF_MEMORY", "plain", "renamed by a teacher")
    capsys.readouterr()
    assert main([*run, "--resume", str(first_csv), "--csv", str(second_csv)]) == 1
    out, err = capsys.readouterr()
    assert f"resuming {first_csv}, 2 points kept, 1 left" in out
    assert "match no variant" not in err
    again = read_csv(second_csv)
    assert [(p.size, p.ok) for p in again] == [(1, True), (3, True), (2, False)]
    assert {(p.variant, p.variant_key) for p in again} == {("cpu renamed by a teacher", "plain")}
    # the finished points were kept, not measured again
    assert [p.timestamp for p in again[:2]] == [first[0].timestamp, first[2].timestamp]
    assert [p.median_s for p in again[:2]] == [first[0].median_s, first[2].median_s]


@pytest.mark.slow  # starts processes (the bench worker, or an X server)
def test_bench_resume_says_in_one_line_which_finished_points_match_no_variant(tmp_path, capsys):
    from explorer.cli import main

    gone = BenchPoint(
        "_oom_test", "cpu a variant since removed", "cpu", 1, "size=1", median_s=0.001, repeats=1
    )
    old = tmp_path / "old.csv"
    old.write_text(_old_csv([gone]))
    assert main(["bench", "_oom_test", "--sizes", "1", "--repeats", "1", "--resume", str(old)]) == 0
    out, err = capsys.readouterr()
    assert f"resuming {old}, 0 points kept, 1 left" in out
    [line] = [ln for ln in err.splitlines() if "match no variant" in ln]
    assert line == (
        f"{old}: 1 finished point of 'cpu a variant since removed' match no variant of _oom_test "
        "in this version and are not kept"
    )
