"""CSV / JSON export and the last results kept across restarts."""

from __future__ import annotations

import pytest

from explorer.bench import results as R
from explorer.bench.results import BenchPoint, error_point


def sample_points() -> list[BenchPoint]:
    ok = BenchPoint(
        workload="matmul",
        variant="cpu",
        device="cpu",
        size=512,
        size_label="n=512",
        median_s=0.0021,
        spread_s=0.0001,
        min_s=0.002,
        repeats=9,
        throughput=127.8,
        throughput_unit="GFLOP/s",
        peak=None,
        threads=2,
        dtype="float32",
        versions={"torch": "2.13.0", "python": "3.11.7"},
        extra={"copy_share": 0.31, "note": 'a, b "quoted"'},
    )
    bad = error_point(
        "matmul", "cuda:0", "cuda:0", 8192, "n=8192", "out of memory: tried to allocate 256 MiB", "GFLOP/s"
    )
    return [ok, bad]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_round_trip_keeps_every_field(tmp_path, fmt):
    points = sample_points()
    path = tmp_path / f"out.{fmt}"
    if fmt == "json":
        R.write_json(points, path)
        back = R.read_json(path)
    else:
        R.write_csv(points, path)
        back = R.read_csv(path)
    assert back == points
    assert back[1].error.startswith("out of memory") and back[1].median_s is None


def test_csv_has_a_header_a_spreadsheet_can_read(tmp_path):
    path = tmp_path / "out.csv"
    R.write_csv(sample_points(), path)
    header = path.read_text().splitlines()[0].split(",")
    assert header[:5] == ["workload", "variant", "device", "size", "size_label"]
    assert "throughput_unit" in header and "error" in header


def test_last_results_live_under_the_home_override(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    assert R.last_results_path().parent == tmp_path / "home"
    assert R.load_last().value is None  # nothing saved yet
    points = sample_points()
    R.save_last(points)
    assert R.load_last().value == points


def test_unreadable_last_results_give_no_points_and_a_notice(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    R.last_results_path().write_text("{ not json")
    loaded = R.load_last()
    assert loaded.value is None and "not valid JSON" in loaded.notice


def test_text_line_names_the_error_or_the_figures():
    ok, bad = sample_points()
    assert "128 GFLOP/s" in R.format_point(ok) and "threads=2" in R.format_point(ok)
    assert "ERROR: out of memory" in R.format_point(bad)
