"""`device-explorer memory` and `divergence`: JSON a script can check against its own reference,
text a person can read, and one line naming the value and the limit for bad input."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from explorer.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_global_json_matches_an_independent_count(capsys):
    rng = random.Random(7)
    for _ in range(40):
        elem, stride, offset, active = (
            rng.choice([1, 2, 4, 8, 16]),
            rng.randint(1, 70),
            rng.randint(0, 99),
            rng.randint(1, 32),
        )
        code, out, _ = run(
            capsys,
            "memory",
            "--space",
            "global",
            "--elem",
            str(elem),
            "--stride",
            str(stride),
            "--offset",
            str(offset),
            "--active",
            str(active),
            "--json",
        )
        assert code == 0
        data = json.loads(out)
        addresses = [(offset + lane * stride) * elem for lane in range(active)]
        sectors = {b // 32 for a in addresses for b in range(a, a + elem)}
        assert [la["address"] for la in data["lanes"]] == addresses
        assert data["sectors_per_request"] == len(sectors)
        assert data["lines_per_request"] == len({b // 128 for a in addresses for b in range(a, a + elem)})
        assert data["bytes_requested"] == active * elem
        assert data["bytes_fetched"] == 32 * len(sectors)
        assert data["efficiency"] == pytest.approx(active * elem / (32 * len(sectors)))


def test_shared_json_names_bank_and_word_per_lane(capsys):
    code, out, _ = run(capsys, "memory", "--space", "shared", "--elem", "4", "--stride", "32", "--json")
    data = json.loads(out)
    assert code == 0 and data["conflict_degree"] == 32 and data["wavefronts"] == 32
    assert [la["bank"] for la in data["lanes"]] == [0] * 32
    assert [la["word"] for la in data["lanes"]] == [32 * i for i in range(32)]
    code, out, _ = run(capsys, "memory", "--space", "shared", "--stride", "33", "--json")
    assert json.loads(out)["conflict_degree"] == 1


def test_divergence_json_and_text(capsys):
    code, out, _ = run(capsys, "divergence", "--block", "100", "--branch", "mod:2", "--json")
    data = json.loads(out)
    assert code == 0
    assert [w["paths"] for w in data["warps"]] == [2, 2, 2, 2]
    assert [w["active_lanes"] for w in data["warps"]] == [[16, 16]] * 3 + [[2, 2]]
    assert data["warps"][3]["simt_efficiency"] == pytest.approx(4 / 64)
    code, out, _ = run(capsys, "divergence", "--block", "256", "--branch", "warp:2")
    assert code == 0 and "0 of 8 warps diverge" in out and "SIMT efficiency 100%" in out
    code, out, _ = run(
        capsys, "divergence", "--block", "64", "--branch", "random:0.5", "--seed", "3", "--json"
    )
    again = main(["divergence", "--block", "64", "--branch", "random:0.5", "--seed", "3", "--json"])
    assert again == 0 and capsys.readouterr().out == out  # the same seed draws the same data


def test_text_output_reads_like_the_lesson(capsys):
    code, out, _ = run(capsys, "memory", "--space", "global", "--stride", "32")
    assert code == 0
    assert "32 sectors of 32 B" in out and "12.5% of the fetched bytes used" in out
    code, out, _ = run(capsys, "memory", "--space", "shared", "--elem", "8", "--stride", "1")
    assert "two half-warp requests" in out and "wavefronts: 2 (fewest possible: 2)" in out


def test_a_uniform_load_in_global_memory_is_one_sector(capsys):
    """``--stride 0`` (every lane reads one element, as ``x = a[0]`` or a loop bound
    does in real code) was refused for global memory while shared memory allowed it."""
    code, out, _ = run(capsys, "memory", "--space", "global", "--stride", "0")
    assert code == 0
    assert "32 lanes read one 4-byte element (a uniform load" in out
    assert "1 sector of 32 B (1 line of 128 B)" in out and "(fewest possible: 1)" in out
    code, out, _ = run(capsys, "memory", "--space", "global", "--stride", "0", "--json")
    data = json.loads(out)
    assert (data["sectors_per_request"], data["bytes_requested"], data["bytes_fetched"]) == (1, 4, 32)


def test_counts_agree_with_their_nouns(capsys):
    """Plurals: "1 lines of 128 B" and "1 lanes take the branch"."""
    _, out, _ = run(capsys, "memory", "--space", "global", "--active", "1")
    assert "1 lane reads one 4-byte element: 1 sector of 32 B (1 line of 128 B)" in out
    _, out, _ = run(capsys, "divergence", "--block", "64", "--branch", "lt:1")
    assert "1 lane takes the branch, then 31 run the other path" in out


def test_a_partial_warp_and_the_equal_cost_assumption_are_said(capsys):
    """``--block 100 --branch warp:2`` said "warp 3: no divergence ... 12.5%" without a
    word about the partial warp, and nothing said the efficiency assumes an equal-cost if/else."""
    _, out, _ = run(capsys, "divergence", "--block", "100", "--branch", "warp:2")
    line = next(x for x in out.splitlines() if "warp 3" in x)
    assert "partial: 4 threads in its 32 lanes" in line and "12.5%" in line
    assert "28 lanes without a thread" in line
    assert "assumes an if and an else of equal cost" in out
    _, out, _ = run(capsys, "divergence", "--block", "100", "--branch", "warp:2", "--json")
    assert "equal cost" in json.loads(out)["assumption"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["memory", "--space", "global", "--elem", "3"], "element size 3"),
        (["memory", "--space", "global", "--stride", "-4"], "--stride is -4"),
        (["memory", "--space", "shared", "--active", "33"], "--active is 33"),
        (["memory", "--space", "global", "--stride", "1e400"], "--stride"),
        (["memory", "--space", "shared", "--warp", "3"], "--warp applies to --space global"),
        (["divergence", "--block", "2048", "--branch", "mod:2"], "--block is 2048"),
        (["divergence", "--block", "64", "--branch", "odd:2"], "odd:2"),
        (["divergence", "--block", "64", "--branch", "random:2"], "P of random:P is '2'"),
        (["divergence", "--block", "64", "--branch", "mod:²"], "K of mod:K"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, named):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert named in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_a_real_invocation_exits_2_without_a_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "memory", "--space", "global", "--elem", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "element size 3" in proc.stderr
