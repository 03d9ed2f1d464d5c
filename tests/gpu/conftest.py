"""The GPU-marked suite: every GPU path of the app on a real NVIDIA GPU.

Run on a machine with a GPU, from the repository root, with nothing but its Python (no Qt):
``python3 -m pytest -m gpu tests/gpu``. Elsewhere every test skips with the reason (discovery's
own words for why there is no GPU). Kernels, NVML and the driver are the real ones here: the
stand-ins the rest of the suite uses are exactly what these tests check against reality.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def gpu() -> Any:
    """The first usable GPU's record (discovery's), or a skip saying why there is none."""
    from explorer.devices.discover import discover

    found = discover(include_catalog=False)
    gpus = found.present_gpus
    if not gpus:
        pytest.skip(f"needs an NVIDIA GPU: {' '.join((found.why_no_gpu() or 'none found').split())}")
    return gpus[0]


@pytest.fixture(autouse=True)
def _every_test_needs_the_gpu(gpu: Any) -> None:
    """Each test here runs on the GPU or skips with the reason."""


@pytest.fixture
def hopper(gpu: Any) -> Any:
    """The GPU when it has NVML's GPM metrics (compute capability 9.0 and newer)."""
    if gpu.compute_capability is None or gpu.compute_capability < (9, 0):
        pytest.skip(f"needs a Hopper or newer GPU for NVML's GPM metrics; {gpu.name} is CC {gpu.cc_string}")
    return gpu
