"""Recorded points are judged again against the hardware's limit when a lesson loads them: a
lesson recorded before the invalid rule must not show a naive timing at 260% of a GPU's peak as
a figure with a share."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

from explorer.bench.judge import flag_recorded
from explorer.lessons.files import parse_recorded
from explorer.roofs.model import ABOVE_HARDWARE, INVALID_WORDS
from tests.points import cpu_matmul_point

LESSONS = Path(__file__).resolve().parents[2] / "resources" / "lessons"


def _gpu_point(n: int, gflops: float, peak: float, **fields: object):
    values = {
        "device": "cuda:0",
        "variant": "cuda:0",
        "peak": peak,
        "peak_kind": "theoretical",
        "roof_share": gflops / peak,
    }
    values.update(fields)
    return replace(cpu_matmul_point(n, gflops, **values), gflops=gflops)


def test_the_timing_trap_lessons_naive_gpu_points_load_as_invalid_and_the_synchronized_ones_do_not():
    lesson = json.loads((LESSONS / "04-timing-trap.json").read_text())
    recorded = parse_recorded(lesson["steps"][0]["state"]["recorded"])
    for p in recorded.points:
        if p.variant.endswith("naive (no sync)"):
            assert p.invalid and p.invalid_reason.startswith(INVALID_WORDS), p
            assert p.roof_share is None and p.roof_note == ""
        else:
            assert not p.invalid and p.roof_share is not None


def test_a_gpu_point_is_flagged_exactly_when_above_the_limit_of_its_fp32_peak():
    rng = random.Random(7)
    for _ in range(3000):
        peak = rng.uniform(1.0, 1e5)
        ratio = rng.choice([rng.uniform(0.0, 3.0), ABOVE_HARDWARE, rng.uniform(1.04, 1.06)])
        gflops = peak * ratio
        (p,) = flag_recorded([_gpu_point(1024, gflops, peak)])
        assert p.invalid == (gflops > ABOVE_HARDWARE * peak), (gflops, peak)
        assert (p.roof_share is None) == p.invalid


def test_half_precision_a_cpu_without_a_boost_peak_and_error_rows_are_left_as_they_were():
    half = _gpu_point(1024, 300.0, 100.0, dtype="float16")
    cpu = replace(cpu_matmul_point(256, 900.0, peak=100.0, peak_kind="theoretical"), gflops=900.0)
    broken = _gpu_point(1024, 300.0, 100.0, error="the kernel failed")
    assert flag_recorded([half, cpu, broken]) == (half, cpu, broken)
