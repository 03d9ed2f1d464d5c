"""CSV / JSON export and the last results kept across restarts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.bench import results as R
from explorer.bench.lines import format_point
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
        noisy=True,
        noise_reason="other programs used 48% of the CPU during this point; the median is 2.1x the fastest sample",
        remeasured=2,
        others_cpu_share=0.48,
        waiting_share=0.3,
        steal_share=0.0,
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
    assert "128 GFLOP/s" in format_point(ok) and "threads=2" in format_point(ok)
    assert "ERROR: out of memory" in format_point(bad)


def test_noise_verdict_is_in_json_and_csv_under_its_documented_names(tmp_path):
    import csv
    import json

    R.write_json(sample_points(), tmp_path / "out.json")
    first = json.loads((tmp_path / "out.json").read_text())["points"][0]
    assert first["noisy"] is True and first["noise_reason"].startswith("other programs used 48%")
    R.write_csv(sample_points(), tmp_path / "out.csv")
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert (rows[0]["noisy"], rows[1]["noisy"]) == ("True", "False")
    assert rows[0]["noise_reason"].startswith("other programs used 48%") and rows[1]["noise_reason"] == ""


def test_results_saved_before_the_verdict_existed_load_as_not_noisy(tmp_path):
    import json

    old = sample_points()[0].to_dict()
    for key in ("noisy", "noise_reason", "remeasured", "others_cpu_share", "waiting_share", "steal_share"):
        del old[key]
    (tmp_path / "old.json").write_text(json.dumps({"format_version": 1, "points": [old]}))
    (back,) = R.read_json(tmp_path / "old.json")
    assert (back.noisy, back.noise_reason, back.remeasured, back.others_cpu_share) == (False, "", 0, None)


def test_the_cli_line_shows_min_beside_median_and_the_reason_of_a_noisy_point():
    noisy, _ = sample_points()
    line = format_point(noisy)
    assert "median 2.1 ms (min 2 ms," in line
    assert line.endswith(
        "NOISY: other programs used 48% of the CPU during this point; the median is 2.1x the fastest "
        "sample (still so after 2 re-measurements)"
    )
    quiet = replace(noisy, noisy=False, noise_reason="")
    assert "NOISY" not in format_point(quiet)


def test_a_negative_noise_figure_in_a_saved_file_is_refused_by_name(tmp_path):
    import json

    bad = sample_points()[0].to_dict()
    bad["others_cpu_share"] = -0.5
    (tmp_path / "bad.json").write_text(json.dumps({"format_version": 1, "points": [bad]}))
    with pytest.raises(ValueError, match="others_cpu_share"):
        R.read_json(tmp_path / "bad.json")


# --- spreadsheet formulas (OWASP's CSV injection) ----------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FORMULA_TEXT = st.text(alphabet=st.sampled_from("=+-@'\t\rab1 ,\"\n"), max_size=8) | st.text(max_size=8)


@given(FORMULA_TEXT)
def test_a_cell_never_starts_a_formula_and_reads_back_as_written(text):
    cell = R.spreadsheet_cell(text)
    assert not cell.startswith(R.FORMULA_STARTS)
    assert R.cell_text(cell) == text


@given(FORMULA_TEXT, FORMULA_TEXT)
def test_points_with_any_text_survive_the_csv_round_trip(variant_text, label):
    p = BenchPoint(
        workload="matmul", variant=variant_text or "cpu", device="cpu", size=1, size_label=label, median_s=1e-3,
        error=label or None,
    )  # fmt: skip
    import csv
    import io

    text = R.points_to_csv([p])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert not any(cell.startswith(("=", "+", "@")) for row in rows[1:] for cell in row)
    (back,) = R.points_from_csv(text)
    # the text comes back as the app shows it (control characters are taken out on reading)
    from explorer.cleantext import clean_text

    assert back.size_label == clean_text(label) and back.variant == clean_text(p.variant)
