"""The last results kept across restarts: every damaged shape is moved aside and named, never
fatal, never deleted, and the next run saves afresh."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from explorer.bench import results as R
from explorer.bench.results import BenchPoint

GOOD = {"workload": "matmul", "variant": "cpu", "device": "cpu", "size": 64, "size_label": "n=64"}


def _with(**changes):
    return json.dumps({"points": [{**GOOD, **changes}]})


#: every shape the issue lists, and the words the notice must use for it
DAMAGED = {
    "string median": (_with(median_s="fast"), 'median_s is "fast"'),
    "string throughput": (_with(throughput="1 GFLOP/s"), 'throughput is "1 GFLOP/s"'),
    "bare list of numbers": ("[1, 2, 3]", "point 1"),
    "points not objects": ('{"points": [1]}', "point 1"),
    "a string": ('"hello"', "not a list of points"),
    "timestamp in words": (_with(timestamp="yesterday"), 'timestamp is "yesterday"'),
    "NaN": (_with(median_s=float("nan")), "NaN"),
    "Infinity": (_with(throughput=float("inf")), "Infinity"),
    "negative size": (_with(size=-64), "size is -64, less than 0"),
    "size in words": (_with(size="big"), 'size is "big"'),
    "size as float": (_with(size=64.0), "size is 64.0"),
    "boolean repeats": (_with(repeats=True), "repeats is true"),
    "timestamp past year 9999": (_with(timestamp=1e20), "the year 9999"),
    "missing device": (
        json.dumps({"points": [{k: v for k, v in GOOD.items() if k != "device"}]}),
        "device is missing",
    ),
    "versions not text": (_with(versions={"torch": 2}), "versions['torch'] is 2"),
    "no points key": ('{"format_version": 1}', "no list of points"),
    "deep nesting": ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
    # a 400-digit size disabled the Benchmarks panel at every start; huge values are
    # refused with the limit named, never carried into the table or the plot
    "400-digit size": (_with(size=10**400), "size is a 401-digit number"),
    "size past 64 bits": (_with(size=2**63), "size is 9223372036854775808, beyond"),
    "a 1e308 median": (_with(median_s=1e308), "median_s is 1e+308, more than 86,400"),
    "repeats of 10**400": (_with(repeats=10**400), "repeats is a 401-digit number"),
    "throughput 1e300": (_with(throughput=1e300), "throughput is 1e+300, more than"),
    "not JSON": ("{'points': []}", "not valid JSON"),
    "empty": ("", "empty"),
}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


def _damaged_files(home: Path) -> list[Path]:
    return sorted(home.glob(R.LAST_RESULTS_FILE + ".damaged-*"))


@pytest.mark.parametrize("name", list(DAMAGED))
def test_a_damaged_file_is_moved_aside_and_named_once(home, name):
    text, words = DAMAGED[name]
    path = home / R.LAST_RESULTS_FILE
    path.write_text(text, encoding="utf-8")

    loaded = R.load_last()

    assert loaded.value is None
    (aside,) = _damaged_files(home)
    assert aside.read_text(encoding="utf-8") == text  # never destroyed: the same bytes, renamed
    assert not path.exists()
    assert words in loaded.notice
    assert str(path) in loaded.notice and str(aside) in loaded.notice
    assert loaded.notice.count(". ") == 0 and loaded.notice.endswith(".")  # one sentence
    # once: the next start finds no damaged file and says nothing
    assert R.load_last().notice == ""
    # and the GUI can keep results again
    R.save_last([BenchPoint(**GOOD, median_s=0.001)])
    assert [p.median_s for p in R.load_last().value] == [0.001]


def test_good_results_come_back_with_no_notice(home):
    points = [BenchPoint(**GOOD, median_s=0.002, throughput=0.26, extra={"n": 4, "note": "x"})]
    R.save_last(points)
    loaded = R.load_last()
    assert loaded.notice == "" and loaded.value == points
    assert isinstance(loaded.value[0].extra["n"], float)  # declared float | str: an int becomes a float
    assert not _damaged_files(home) and not list(home.glob("*.tmp"))


def test_no_file_is_no_results_and_no_notice(home):
    assert R.load_last().value is None and R.load_last().notice == ""


def test_keys_from_a_newer_version_are_ignored_not_fatal(home):
    (home / R.LAST_RESULTS_FILE).write_text(_with(median_s=0.5, energy_j=3.0))
    loaded = R.load_last()
    assert loaded.notice == "" and loaded.value[0].median_s == 0.5


def test_two_damaged_files_in_the_same_minute_keep_both(home):
    path = home / R.LAST_RESULTS_FILE
    for text in ("[1]", "[2]"):
        path.write_text(text)
        R.load_last()
    assert sorted(p.read_text() for p in _damaged_files(home)) == ["[1]", "[2]"]


def test_a_named_pipe_is_moved_aside_without_blocking(home):
    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    os.mkfifo(home / R.LAST_RESULTS_FILE)
    loaded = R.load_last()  # a plain open() would wait for a writer forever
    assert loaded.value is None and "named pipe" in loaded.notice
    assert len(_damaged_files(home)) == 1


def test_a_folder_in_its_place_is_moved_aside(home):
    (home / R.LAST_RESULTS_FILE).mkdir()
    (home / R.LAST_RESULTS_FILE / "keep.txt").write_text("mine")
    loaded = R.load_last()
    assert "folder" in loaded.notice
    (aside,) = _damaged_files(home)
    assert (aside / "keep.txt").read_text() == "mine"


def test_an_oversized_file_is_refused_before_it_is_read(home, monkeypatch):
    monkeypatch.setattr(R, "MAX_RESULTS_BYTES", 100)
    (home / R.LAST_RESULTS_FILE).write_text(json.dumps({"points": [GOOD] * 10}))
    assert "more than the 100" in R.load_last().notice


def test_saving_refuses_a_non_finite_number_and_keeps_the_old_file(home):
    R.save_last([BenchPoint(**GOOD, median_s=0.001)])
    before = (home / R.LAST_RESULTS_FILE).read_bytes()
    with pytest.raises(ValueError):
        R.save_last([BenchPoint(**GOOD, median_s=float("nan"))])
    assert (home / R.LAST_RESULTS_FILE).read_bytes() == before
    assert not list(home.glob(".*.tmp"))


def test_every_declared_field_has_a_checkable_type():
    """A field added to BenchPoint (noise verdicts, ...) is checked from its annotation; a type
    the checker does not know fails here, not silently at a user's start-up."""
    from explorer.schema import check_value, field_types

    sample = BenchPoint(**GOOD)
    for name, tp in field_types(BenchPoint).items():
        check_value(getattr(sample, name), tp, name)


def test_ranges_name_only_declared_fields():
    assert set(R.FIELD_RANGES) <= set(R.CSV_COLUMNS)
