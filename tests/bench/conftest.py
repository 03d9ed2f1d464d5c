"""Fixtures the benchmark tests share."""

from __future__ import annotations

import pytest


@pytest.fixture
def gpu_here():
    from explorer.commands.bench import gpus_here

    count, why = gpus_here()
    if not count:
        pytest.skip(f"needs an NVIDIA GPU: {why}")
