"""Parsing and validating launches: one line per broken limit, naming limit, value and device limit."""

from __future__ import annotations

import pytest

from explorer.devices.limits import limits_for_cc
from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, notes, parse_launch, validate

GTX = "NVIDIA GeForce GTX 1650"
TURING = limits_for_cc((7, 5))


def problems(grid="1", block="256", smem="0", regs="32", n=None, limits=TURING):
    return validate(parse_launch(grid, block, smem, regs, n), limits, GTX)


def test_dim3_parse_forms():
    assert Dim3.parse("64") == Dim3(64, 1, 1)
    assert Dim3.parse("64,2") == Dim3(64, 2, 1)
    assert Dim3.parse(" 16 x 16 x 4 ") == Dim3(16, 16, 4)
    assert Dim3.parse("(8, 8)") == Dim3(8, 8, 1)
    assert Dim3.parse(128) == Dim3(128)
    assert Dim3.parse((2, 3, 4)).count == 24
    assert str(Dim3(64, 2)) == "(64, 2, 1)"


@pytest.mark.parametrize("text", ["abc", "3.5", "", "1,2,3,4", "64,,", "1e-3", "0x40", "6²", "1_0"])
def test_dim3_parse_rejects_non_integers(text):
    with pytest.raises(LaunchValidationError) as info:
        Dim3.parse(text, "block")
    assert "block" in str(info.value)


def test_parse_reports_every_bad_field_at_once():
    with pytest.raises(LaunchValidationError) as info:
        parse_launch("abc", "3.5", "lots", "x", "n?")
    err = info.value
    assert isinstance(err, UserError)
    assert len(err.problems) == 5
    assert str(err) == "; ".join(err.problems)
    assert "grid x is 'abc'; it must be a whole number" in err.problems
    assert "block x is '3.5'; it must be a whole number" in err.problems


def test_valid_launch_has_no_problems():
    assert problems("98", "1024", n="100000") == []
    assert problems("2147483647,65535,65535", "1024") == []


def test_block_over_1024_threads_the_design_message():
    assert problems(block="2048") == [f"block has 2048 threads; {GTX} allows at most 1024 per block"]
    assert problems(block="32,32,2") == [f"block has 2048 threads; {GTX} allows at most 1024 per block"]


def test_dimension_limits():
    assert problems(block="1,1,65") == [f"block z is 65; {GTX} allows at most 64 threads in z"]
    assert problems(grid="2147483648") == [
        f"grid x is 2147483648; {GTX} allows at most 2147483647 blocks in x"
    ]
    assert problems(grid="1,65536") == [f"grid y is 65536; {GTX} allows at most 65535 blocks in y"]
    assert problems(grid="1,1,70000") == [f"grid z is 70000; {GTX} allows at most 65535 blocks in z"]


def test_zero_and_negative():
    assert problems(grid="0") == ["grid x is 0; it must be at least 1"]
    assert problems(block="-32") == ["block x is -32; it must be at least 1"]
    assert problems(regs="0") == ["registers per thread is 0; it must be at least 1"]
    assert problems(smem="-1") == ["shared memory per block is -1 bytes; it cannot be negative"]
    assert problems(n="0") == ["problem size n is 0; it must be at least 1"]


def test_registers_over_255_and_per_block():
    assert problems(regs="256") == [f"registers per thread is 256; {GTX} allows at most 255 per thread"]
    (msg,) = problems(block="1024", regs="255")
    assert msg.startswith("block needs 262144 registers (1024 threads x 255 per thread")
    assert msg.endswith(f"{GTX} allows at most 65536 per block")


def test_shared_memory_over_the_maximum_mentions_the_opt_in():
    (msg,) = problems(smem="70000")
    assert msg.startswith(f"shared memory per block is 70000 bytes; {GTX} allows at most 65536 bytes")
    assert "opt-in" in msg and "49152 without" in msg
    # Maxwell has no opt-in: no mention of it
    (msg,) = problems(smem="50000", limits=limits_for_cc((5, 2)))
    assert msg == f"shared memory per block is 50000 bytes; {GTX} allows at most 49152 bytes per block"


def test_opt_in_shared_memory_is_allowed_with_a_note():
    cfg = parse_launch("1", "256", "60000")
    assert validate(cfg, TURING, GTX) == []
    (note,) = notes(cfg, TURING)
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 60000" in note


def test_several_problems_all_listed():
    found = problems(grid="0,70000", block="2048", smem="100000", regs="300")
    assert len(found) == 5


def test_without_a_device_name_the_cc_is_named():
    (msg,) = validate(LaunchConfig(Dim3(1), Dim3(2048)), TURING)
    assert msg == "block has 2048 threads; compute capability 7.5 (Turing) allows at most 1024 per block"


def test_non_integer_values_in_a_config_do_not_crash():
    cfg = LaunchConfig(Dim3(1.5, 1, 1), Dim3(True), 3.5, "32")  # type: ignore[arg-type]
    found = validate(cfg, TURING, GTX)
    assert len(found) == 4 and all("whole number" in p for p in found)
