"""Occupancy as the app computes it against the CUDA driver's, on kernels numba compiled here."""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def kernels(gpu):
    from explorer.acceptance.checks_occupancy import make_kernel
    from explorer.acceptance.cudadriver import KernelHandle
    from explorer.numbacuda import cuda

    cuda.select_device(gpu.index)
    fn = make_kernel(48)
    out = {}
    for cap in (32, 64, 0):
        dispatcher = cuda.jit("void(float32[::1], int32)", **({"max_registers": cap} if cap else {}))(fn)
        out[cap] = KernelHandle(next(iter(dispatcher.overloads.values())))
    return out


def test_max_registers_caps_the_registers_the_driver_reports(kernels):
    assert kernels[32].regs <= 32 < kernels[0].regs
    assert kernels[32].regs <= kernels[64].regs <= 64


def test_sixty_random_configurations_agree_with_the_driver(gpu, kernels):
    from explorer.acceptance.checks_occupancy import draw_configs
    from explorer.devices.limits import limits_for_cc
    from explorer.launch.occupancy import occupancy

    limits = limits_for_cc(gpu.compute_capability)
    configs = draw_configs(
        random.Random(7), {c: (k.max_threads, k.static_smem) for c, k in kernels.items()}, 60, 48 * 1024
    )
    wrong = []
    for cap, threads, smem in configs:
        k = kernels[cap]
        driver = k.active_blocks(threads, smem)
        model = occupancy(limits, threads, k.regs, k.static_smem + smem).active_blocks_per_sm
        if driver != model:
            wrong.append((cap, threads, k.regs, smem, driver, model))
    assert not wrong, wrong


def test_opting_in_to_more_shared_memory_agrees_with_the_driver_past_48_kib(gpu, kernels):
    from explorer.devices.limits import limits_for_cc
    from explorer.launch.occupancy import occupancy

    limits = limits_for_cc(gpu.compute_capability)
    k = kernels[0]
    for smem in (64 * 1024, 100 * 1024, limits.max_smem_per_block_optin_bytes - k.static_smem):
        k.allow_dynamic_smem(smem)
        for threads in (128, 256):
            model = occupancy(limits, threads, k.regs, k.static_smem + smem).active_blocks_per_sm
            assert k.active_blocks(threads, smem) == model, (smem, threads)
