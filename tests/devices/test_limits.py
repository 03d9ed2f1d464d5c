"""The per-CC limits table: complete, sourced, and overridden by what a driver reports."""

from __future__ import annotations

import pytest

from explorer.devices.limits import known_ccs, limits_for_cc, limits_for_device, parse_cc
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu, CudaLimits
from explorer.errors import UserError

EXPECTED_CCS = [
    (5, 0),
    (5, 2),
    (5, 3),
    (6, 0),
    (6, 1),
    (6, 2),
    (7, 0),
    (7, 2),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 7),
    (8, 9),
    (9, 0),
    (10, 0),
    (10, 3),
    (11, 0),
    (12, 0),
    (12, 1),
]


def test_every_compute_capability_from_maxwell_to_blackwell():
    assert known_ccs() == EXPECTED_CCS


@pytest.mark.parametrize("cc", EXPECTED_CCS)
def test_every_value_has_a_source(cc):
    lim = limits_for_cc(cc)
    for name in (
        "warp_size",
        "max_threads_per_block",
        "max_threads_per_sm",
        "max_warps_per_sm",
        "max_blocks_per_sm",
        "regs_per_sm",
        "max_regs_per_block",
        "max_regs_per_thread",
        "reg_alloc_unit",
        "smem_per_sm_bytes",
        "smem_carveouts_bytes",
        "max_smem_per_block_bytes",
        "max_smem_per_block_optin_bytes",
        "smem_alloc_unit_bytes",
        "reserved_smem_per_block_bytes",
        "max_block_dim",
        "max_grid_dim",
        "reg_sub_partitions",
    ):
        assert lim.sources.get(name), f"{cc} {name} has no source"
    assert lim.max_warps_per_sm * lim.warp_size == lim.max_threads_per_sm
    assert lim.smem_carveouts_bytes[-1] == lim.smem_per_sm_bytes
    assert lim.max_smem_per_block_bytes <= lim.max_smem_per_block_optin_bytes <= lim.smem_per_sm_bytes


def test_well_known_values():
    t = limits_for_cc((7, 5))
    assert (t.max_warps_per_sm, t.max_blocks_per_sm, t.max_smem_per_block_optin_bytes) == (32, 16, 65536)
    a = limits_for_cc((8, 0))
    assert (a.smem_per_sm_bytes, a.max_smem_per_block_optin_bytes, a.reserved_smem_per_block_bytes) == (
        167936,
        166912,
        1024,
    )
    assert limits_for_cc((8, 6)).max_warps_per_sm == 48
    assert limits_for_cc((8, 9)).max_blocks_per_sm == 24
    assert limits_for_cc((9, 0)).max_smem_per_block_optin_bytes == 227 * 1024
    assert limits_for_cc((12, 0)).smem_per_sm_bytes == 100 * 1024
    assert limits_for_cc((5, 3)).max_regs_per_block == 32768
    assert limits_for_cc((6, 0)).reg_sub_partitions == 2
    assert limits_for_cc((7, 5)).max_grid_dim == (2**31 - 1, 65535, 65535)
    assert limits_for_cc((7, 5)).max_block_dim == (1024, 1024, 64)
    # the driver reserves 1 KB of shared memory per block from Ampere on, never before
    for cc in EXPECTED_CCS:
        assert limits_for_cc(cc).reserved_smem_per_block_bytes == (1024 if cc[0] >= 8 else 0)
        assert limits_for_cc(cc).smem_alloc_unit_bytes == (128 if cc[0] >= 8 else 256)


def test_old_thor_name_is_an_alias():
    assert limits_for_cc((10, 1)).max_blocks_per_sm == limits_for_cc((11, 0)).max_blocks_per_sm


def test_unknown_cc_is_a_user_error():
    with pytest.raises(UserError, match="3.5 is not in the limits table"):
        limits_for_cc((3, 5))
    with pytest.raises(UserError, match="not of the form"):
        parse_cc("eight")
    assert parse_cc(" 8.6 ") == (8, 6)


def test_catalog_device_takes_the_table():
    dev = CatalogGpu(name="NVIDIA GeForce GTX 1650", compute_capability=(7, 5), sm_count=16)
    assert limits_for_device(dev) == limits_for_cc((7, 5))


def test_driver_reported_values_win():
    dev = CudaGpu(
        name="Some GPU",
        compute_capability=(8, 6),
        sm_count=28,
        source="torch",
        limits=CudaLimits(max_threads_per_sm=1024, smem_per_sm_bytes=64 * 1024, max_regs_per_block=None),
    )
    lim = limits_for_device(dev)
    assert lim.max_threads_per_sm == 1024 and lim.max_warps_per_sm == 32
    assert lim.smem_per_sm_bytes == 64 * 1024 and lim.smem_carveouts_bytes[-1] == 64 * 1024
    assert "Some GPU" in lim.sources["max_threads_per_sm"]
    assert lim.max_regs_per_block == 65536  # not reported: the table's


def test_cpu_has_no_launch_limits():
    with pytest.raises(UserError, match="no CUDA compute capability"):
        limits_for_device(CpuDevice(name="Some CPU"))


def test_zero_or_missing_driver_answers_do_not_override():
    dev = CudaGpu(
        name="Old GPU",
        compute_capability=(5, 2),
        sm_count=16,
        limits=CudaLimits(max_smem_per_block_optin_bytes=0, max_blocks_per_sm=0, regs_per_sm=65536),
    )
    lim = limits_for_device(dev)
    assert lim.max_smem_per_block_optin_bytes == 49152 and lim.max_blocks_per_sm == 32


def test_every_reported_limit_overrides_its_table_field():
    """The limits a driver reports are fields of the one limits record, under the same names (the
    cache size aside); a GPU reporting all of them (as a present GPU's driver does) sees each of
    its own values, sourced to it."""
    import dataclasses

    from explorer.devices.limits import ArchLimits

    names = {f.name for f in dataclasses.fields(ArchLimits)}
    reported_names = {f.name for f in dataclasses.fields(CudaLimits)} - CudaLimits.REPORTED_ONLY
    assert reported_names <= names and CudaLimits.REPORTED_ONLY == {"l2_cache_bytes"}
    base = limits_for_cc((8, 0))
    reported = {
        name: (
            tuple(v - 1 for v in getattr(base, name))
            if isinstance(getattr(base, name), tuple)
            else getattr(base, name) // 2
        )
        for name in reported_names
    }
    lim = limits_for_device(
        CudaGpu(name="A GPU", compute_capability=(8, 0), source="torch", limits=CudaLimits(**reported))
    )
    for name in reported_names:
        assert getattr(lim, name) == reported[name], name
        assert lim.sources[name] == "reported for A GPU (torch)"
