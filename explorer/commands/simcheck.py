"""The self-test's kernel under numba's CUDA simulator, run inside an agent started with it on.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, at import, so the self-test cannot switch the simulator
on in its own process (it may have imported numba already); it asks an agent started with the
switch set (``selftest.simulator``), which calls ``simulator_kernel_check`` here.
"""

from __future__ import annotations

import os
import time
from typing import Any

SIM_N = 1000  # elements of the simulator's vector add: 4 blocks of 256 threads, the last one partly idle
SIM_BLOCK = 256

# numba.cuda, bound in the agent. The kernel reaches it as a module global because the simulator
# swaps the globals a kernel sees for its own fake ``cuda`` module; a closure would escape that.
cuda: Any = None


def _vector_add(a, b, out, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


def simulator_kernel_check() -> dict[str, Any]:
    """Run a vector add under the simulator; the answer of the agent's ``selftest.simulator``."""
    global cuda
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        return {"ok": False, "error": "NUMBA_ENABLE_CUDASIM=1 was not set in the child"}
    try:
        import numba
        import numpy as np

        from explorer.numbacuda import cuda as numba_cuda

        cuda = numba_cuda
        kernel = numba_cuda.jit(_vector_add)
        rng = np.random.default_rng(2)
        a = rng.standard_normal(SIM_N).astype(np.float32)
        b = rng.standard_normal(SIM_N).astype(np.float32)
        out = np.full(SIM_N, np.nan, dtype=np.float32)
        blocks = (SIM_N + SIM_BLOCK - 1) // SIM_BLOCK
        t0 = time.perf_counter()
        kernel[blocks, SIM_BLOCK](a, b, out, SIM_N)
        numba_cuda.synchronize()
        kernel_s = time.perf_counter() - t0
        ok = bool(np.array_equal(out, a + b))
        result = {"ok": ok, "numba": numba.__version__, "n": SIM_N, "blocks": blocks, "kernel_s": kernel_s}
        if not ok:
            result["error"] = (
                f"{int(np.sum(out != a + b))} of {SIM_N} elements wrong after the simulated kernel"
            )
    except Exception as exc:  # the parent turns this into its FAIL line
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return result
