"""`device-explorer tiling`: the JSON keys the issue lists, with the model's counts; text a person
reads; a tile the device cannot launch refused in one line naming the limit (exit 2)."""

from __future__ import annotations

import json

import pytest

from explorer import cli
from explorer.devices.limits import limits_for_cc
from explorer.devices.model import CatalogGpu
from explorer.launch.occupancy import occupancy
from tests.devices.fake_find import find_only

GTX = CatalogGpu(
    name="NVIDIA GeForce GTX 1650", key="catalog:gtx-1650", compute_capability=(7, 5), sm_count=16
)


@pytest.fixture(autouse=True)
def fake_devices(monkeypatch):
    find_only(monkeypatch, [GTX])


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


KEYS = (
    "global_loads",
    "global_stores",
    "shared_loads",
    "shared_stores",
    "barriers_per_block",
    "flops",
    "shared_bytes_per_block",
    "intensity_flop_per_byte",
)


def test_json_has_the_issue_s_keys_for_both_kernels(capsys):
    code, out, err = run(capsys, "tiling", "--m", "64", "--n", "64", "--k", "64", "--tile", "8", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    for key in KEYS:
        assert key in data and key in data["naive"], key
    assert (data["global_loads"], data["shared_loads"], data["barriers_per_block"]) == (65_536, 524_288, 16)
    assert data["naive"]["global_loads"] == 2 * 64**3
    assert data["flops"] == data["naive"]["flops"] == 2 * 64**3
    assert data["shared_bytes_per_block"] == 512 and data["naive"]["shared_bytes_per_block"] == 0
    assert data["intensity_flop_per_byte"] == pytest.approx(64 * 8 / (2 * (2 * 64 + 8)))
    assert [r["conflict_degree"] for r in data["shared_reads"]] == [1, 1]


def test_ragged_sizes_and_a_device_give_its_occupancy(capsys):
    code, out, _ = run(
        capsys, "tiling", "--m", "65", "--n", "100", "--k", "77", "--tile", "16", "--device", "1650", "--json"
    )
    assert code == 0
    data = json.loads(out)
    # each A element is loaded once per block column (7), each B element once per block row (5)
    assert data["global_loads"] == 65 * 77 * 7 + 77 * 100 * 5
    assert data["global_stores"] == 65 * 100
    assert data["grid"] == [7, 5] and data["phases"] == 5
    expected = occupancy(limits_for_cc((7, 5)), 256, 32, 2048)
    assert data["occupancy"]["occupancy"] == expected.occupancy
    assert data["limits_of"] == "NVIDIA GeForce GTX 1650" and data["compute_capability"] == "7.5"


def test_text_names_both_kernels_and_the_ragged_edge(capsys):
    code, out, _ = run(
        capsys, "tiling", "--m", "65", "--n", "100", "--k", "77", "--tile", "16", "--cc", "8.6"
    )
    assert code == 0
    assert "T = 16: 13.6x fewer global loads than the naive kernel, 10 barriers per block" in out
    assert "73,535 global loads instead of 1,001,000" in out
    assert "As[ty][k]: conflict-free" in out and "Bs[k][tx]: conflict-free" in out
    assert "does not divide every size" in out
    assert "on compute capability 8.6 (Ampere) (32 registers per thread assumed): T = 16: 256 threads" in out


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--tile", "33", "--device", "1650"],
            "device-explorer: error: a 33 x 33 tile needs a block of 1089 threads; NVIDIA GeForce GTX 1650 "
            "allows at most 1024 per block (T at most 32)",
        ),
        (
            ["--tile", "64"],
            "device-explorer: error: a 64 x 64 tile needs a block of 4096 threads; every GPU of compute "
            "capability 5.0 to 12.1 allows at most 1024 per block (T at most 32)",
        ),
        (["--tile", "0"], "device-explorer: error: --tile is 0; it must be at least 1"),
        (["--tile", "1e400"], "device-explorer: error: --tile is '1e400'; it must be at most 16777216"),
        (["--tile", "８"], "device-explorer: error: --tile is '８'; it must be a whole number written with"),
        (
            ["--tile", "8", "--cc", "9.9"],
            "device-explorer: error: compute capability 9.9 is not in the limits",
        ),
    ],
)
def test_bad_tiles_are_one_line_naming_the_limit(capsys, argv, line):
    code, out, err = run(capsys, "tiling", "--m", "64", "--n", "64", "--k", "64", *argv)
    assert code == 2 and out == ""
    assert err.startswith(line) and err.count("\n") == 1
