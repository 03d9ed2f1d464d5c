"""Problems with a size per axis (an image, a volume): idle threads, busy lanes and edge blocks."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.devices.model import CatalogGpu
from explorer.launch.config import Dim3, LaunchConfig, parse_launch
from explorer.launch.schedule import blocks_for, plan_launch

GTX1650 = CatalogGpu(name="NVIDIA GeForce GTX 1650", compute_capability=(7, 5), sm_count=16)
SMALL = CatalogGpu(name="Test GPU", compute_capability=(8, 6), sm_count=3)


def test_1920x1080_image_in_16x16_tiles():
    """120 x 68 tiles cover 1920 x 1088 pixels: the bottom row of tiles has 8 rows of threads past the image."""
    config = parse_launch(f"{blocks_for(1920, 16)},{blocks_for(1080, 16)}", "16,16", 0, 32, "1920,1080")
    assert config.extent == Dim3(1920, 1080, 1) and config.n is None
    p = plan_launch(config, GTX1650)
    assert (p.config.grid.x, p.config.grid.y) == (120, 68)
    assert p.total_threads == 2_088_960 and p.idle_threads == 2_088_960 - 1920 * 1080 == 15_360
    assert p.uncovered_elements == 0
    bottom = p.block_linear(Dim3(5, 67, 0))
    # a 16x16 tile is 8 warps of two rows each: rows 0..7 are in the image, rows 8..15 are not
    assert [p.warp_busy_lanes(bottom, w) for w in range(8)] == [32, 32, 32, 32, 0, 0, 0, 0]
    assert p.block_busy_threads(bottom) == 128 and p.block_busy_lanes(p.block_linear(Dim3(5, 66, 0))) is None
    t = p.thread(bottom, 8 * 16 + 3)  # threadIdx (3, 8): pixel (83, 1080), one row below the image
    assert t.global_position == Dim3(83, 1080, 0) and t.idle
    assert not p.thread(bottom, 7 * 16 + 3).idle
    data = p.to_dict()
    assert data["idle_threads"] == 15_360 and data["config"]["n"] == 2_073_600
    assert data["config"]["extent"] == [1920, 1080, 1]


def test_3d_volume_with_edges_on_every_axis():
    # 100 x 50 x 30 voxels in 8x8x4 blocks: 13 x 7 x 8 blocks cover 104 x 56 x 32
    p = plan_launch(parse_launch("13,7,8", "8,8,4", 0, 32, "100,50,30"), GTX1650)
    assert p.total_threads == 104 * 56 * 32
    assert p.idle_threads == 104 * 56 * 32 - 100 * 50 * 30
    corner = p.block_linear(Dim3(12, 6, 7))  # 4 x 2 x 2 of its 8 x 8 x 4 threads are inside
    assert p.block_busy_threads(corner) == 4 * 2 * 2
    assert sum(p.block_busy_lanes(corner)) == 16


def test_too_small_grid_reports_uncovered_elements_per_axis():
    p = plan_launch(parse_launch("100,68", "16,16", 0, 32, "1920,1080"), GTX1650)
    assert p.uncovered_elements == 1920 * 1080 - 1600 * 1080
    assert any("along x (1600 threads for 1920)" in note for note in p.notes)


def test_one_number_stays_a_1d_n():
    config = parse_launch("6", "1024", 0, 32, "5466")
    assert config.n == 5466 and config.extent is None
    assert plan_launch(config, GTX1650).idle_threads == 678


@st.composite
def small_launches(draw):
    block = Dim3(draw(st.integers(1, 12)), draw(st.integers(1, 6)), draw(st.integers(1, 3)))
    grid = Dim3(draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    extent = Dim3(
        *(draw(st.integers(1, g * b + 6)) for g, b in zip(grid.as_tuple(), block.as_tuple(), strict=True))
    )
    return LaunchConfig(grid, block, regs_per_thread=32, extent=extent)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_launches())
def test_closed_forms_match_brute_force(config):
    """Idle threads, busy lanes per warp and the waves' idle blocks, against every thread checked one by one."""
    p = plan_launch(config, SMALL)
    g, b, e = config.grid, config.block, config.extent
    idle_total = 0
    busy_by_block = {}
    masks_by_block = {}
    for bl in range(p.total_blocks):
        bx, by, bz = bl % g.x, bl // g.x % g.y, bl // (g.x * g.y)
        lanes = [0] * p.warps_per_block
        masks = [0] * p.warps_per_block
        for t, (tz, ty, tx) in enumerate(itertools.product(range(b.z), range(b.y), range(b.x))):
            inside = bx * b.x + tx < e.x and by * b.y + ty < e.y and bz * b.z + tz < e.z
            assert p.thread(bl, t).idle == (not inside)
            idle_total += not inside
            lanes[t // 32] += inside
            masks[t // 32] |= inside << (t % 32)
        masks_by_block[bl] = tuple(masks)
        assert [p.warp_busy_lanes(bl, w) for w in range(p.warps_per_block)] == lanes
        assert p.block_busy_threads(bl) == sum(lanes)
        active = [p.warp_active_lanes(bl, w) for w in range(p.warps_per_block)]
        busy_by_block[bl] = None if lanes == active else tuple(lanes)
        assert p.block_busy_lanes(bl) == busy_by_block[bl]
    assert p.idle_threads == idle_total
    listed = {}
    for wave in range(p.waves):
        idle = p.idle_blocks_in_wave(wave)
        listed.update(dict(idle.blocks()))
        for run in idle.runs:  # which lanes, not only how many: what a zoomed-in tile draws
            for i in range(run.start, run.stop):
                assert run.busy_masks == masks_by_block[idle.first_block + i]
    assert listed == {bl: busy for bl, busy in busy_by_block.items() if busy is not None}
