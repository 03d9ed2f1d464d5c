"""The naive and tiled matmul kernels compute numpy's A @ B on numba's CUDA simulator (a fresh
process: the simulator must be on before numba is first imported), for shapes no tile divides:
the zero-padded edges must change nothing. Speed needs a real GPU."""

from __future__ import annotations

import textwrap

import pytest

from tests.simulator import run_on_simulator

pytestmark = pytest.mark.slow  # every test here starts a process

SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.memory import tiling_kernels as K

    rng = np.random.default_rng(5)
    out = {}
    for m, n, k in ((21, 13, 35), (8, 40, 3)):  # ragged for every tile; K smaller than a tile
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        for tile in (None, *K.BENCH_TILES):
            c = cuda.to_device(np.full((m, n), np.nan, dtype=np.float32))  # every element must be written
            if tile is None:
                grid = K.launch_naive(cuda.to_device(a), cuda.to_device(b), c)
            else:
                grid = K.launch_tiled(cuda.to_device(a), cuda.to_device(b), c, tile)
            got = c.copy_to_host()
            out[f"{m}x{n}x{k} {tile}"] = [float(np.max(np.abs(got - expected))), list(grid)]
    print("RESULT" + json.dumps(out))
    """
)


def test_the_kernels_match_numpy_on_the_simulator():
    out = run_on_simulator(SCRIPT)
    assert len(out) == 8
    for name, (error, _grid) in out.items():
        assert error < 1e-4, name  # NaN (an element never written) fails here too
    assert out["21x13x35 None"][1] == [1, 2]  # 16 x 16 blocks
    assert out["21x13x35 8"][1] == [2, 3] and out["21x13x35 32"][1] == [1, 1]
