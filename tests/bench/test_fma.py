"""The FP32 FMA ceiling's kernels: the CPU loop computes exactly the chains it claims (so none was
folded or dropped) with vectors of the lanes asked for, its measurement runs on every thread; the
GPU loop checked on numba's CUDA simulator (it has not yet run on a GPU)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from explorer.bench import fma
from tests.simulator import run_on_simulator


@pytest.mark.parametrize(("accumulators", "lanes"), [(12, 4), (12, 8), (16, 16)])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_the_fma_loop_returns_what_its_chains_compute(accumulators, lanes, n):
    kernel = fma.fma_kernel(accumulators, lanes)
    got = float(kernel(np.int64(n), np.float32(fma.B), np.float32(fma.C)))
    # float32 sums of up to 256 values each rounded once per step: a few ulps of the total
    assert got == pytest.approx(fma.fma_reference(n, accumulators, lanes), rel=1e-5)


def test_other_multipliers_and_addends_give_other_sums():
    """``b`` and ``c`` are run-time values in the loop, not constants folded into it."""
    kernel = fma.fma_kernel(12, 8)
    a = float(kernel(np.int64(50), np.float32(0.5), np.float32(1.0)))
    assert a == pytest.approx(fma.fma_reference(50, 12, 8, b=0.5, c=1.0), rel=1e-5)
    assert a != pytest.approx(float(kernel(np.int64(50), np.float32(fma.B), np.float32(fma.C))), rel=1e-3)


def test_the_widest_vectors_the_flags_promise_and_enough_accumulators():
    assert fma.vector_lanes(["avx", "avx2", "fma", "avx512f"]) == 16
    assert fma.vector_lanes(["AVX", "fma"]) == 8
    assert fma.vector_lanes(["asimd"]) == 4 and fma.vector_lanes([]) == 4
    assert fma.accumulators_for(16) == 16 and fma.accumulators_for(8) == 12


def test_on_an_fma_cpu_the_loop_is_vector_fmas_of_that_width():
    import platform

    from explorer.devices.cpu import probe_cpu

    flags = probe_cpu().isa_flags
    if platform.machine().lower() not in ("x86_64", "amd64") or "fma" not in flags:
        pytest.skip("the instruction names checked are x86's with FMA")
    lanes = 16 if "avx512f" in flags else 8
    register = "%zmm" if lanes == 16 else "%ymm"
    asm = next(iter(fma.fma_kernel(fma.accumulators_for(lanes), lanes).inspect_asm().values()))
    fmas = [line for line in asm.splitlines() if "vfmadd" in line and "ps" in line]
    assert fmas and all(register in line for line in fmas)


def test_the_measurement_runs_every_thread_at_once_and_says_how():
    m = fma.measure_fma(["avx"], threads=2, samples=3, sample_s=0.001, warmup_s=0.0)
    assert m.gflops > 0 and m.threads == 2 and len(m.per_thread_gflops) == 2
    assert (m.lanes, m.accumulators, m.samples) == (8, 12, 3)
    assert "12 independent 8-lane FP32 accumulators per thread on 2 threads" in m.basis
    assert m.method.threads == 2 and m.method.repeats == 3 and "fastest of 3" in m.method.best_of


SCRIPT = textwrap.dedent(
    """
    import json
    from explorer.bench import ceilings

    print("RESULT" + json.dumps(ceilings.check_gpu_fma(n=5, blocks=2, threads=4)))
    """
)


@pytest.mark.slow
def test_the_gpu_fma_loop_computes_its_chains_on_the_simulator():
    pairs = run_on_simulator(SCRIPT)
    assert len(pairs) == 8
    for got, expected in pairs:
        assert got == pytest.approx(expected, rel=1e-5)
    assert len({round(g, 6) for g, _ in pairs}) > 1  # each thread starts from its own values
