"""Properties over random launches on every compute capability (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.devices.limits import known_ccs, limits_for_cc
from explorer.devices.model import CatalogGpu
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, parse_launch, validate
from explorer.launch.occupancy import occupancy
from explorer.launch.schedule import LaunchPlan, plan_launch

CCS = st.sampled_from(known_ccs())
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

any_int = st.one_of(
    st.integers(min_value=-5, max_value=5),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.sampled_from([0, 1, 32, 64, 65, 1023, 1024, 1025, 65535, 65536, 2**31 - 1, 2**31]),
)
any_text = st.one_of(any_int.map(str), st.text(max_size=8), st.sampled_from(["3.5", "abc", "", "1,2", "-0"]))


@st.composite
def devices(draw):
    cc = draw(CCS)
    return CatalogGpu(name=f"GPU {cc}", compute_capability=cc, sm_count=draw(st.integers(1, 200)))


@SETTINGS
@given(
    devices(),
    st.tuples(any_int, any_int, any_int),
    st.tuples(any_int, any_int, any_int),
    any_int,
    any_int,
    st.one_of(st.none(), any_int),
)
def test_any_launch_plans_or_gives_a_validation_error(device, grid, block, smem, regs, n):
    config = LaunchConfig(Dim3(*grid), Dim3(*block), smem, regs, n)
    try:
        plan = plan_launch(config, device)
    except LaunchValidationError as exc:
        assert exc.problems and all(isinstance(p, str) and "\n" not in p for p in exc.problems)
        return
    assert isinstance(plan, LaunchPlan)
    assert plan.resident_blocks_per_sm >= 1
    assert (
        plan.waves * plan.concurrent_blocks >= plan.total_blocks > (plan.waves - 1) * plan.concurrent_blocks
    )
    last = plan.total_blocks - 1
    info = plan.thread(last, plan.threads_per_block - 1)
    assert info.global_linear == plan.total_threads - 1
    assert 0 <= info.sm < device.sm_count and info.wave == plan.waves - 1
    assert 0 < plan.last_wave_fill <= 1


@SETTINGS
@given(any_text, any_text, any_text, any_text, st.one_of(st.none(), any_text))
def test_any_text_parses_or_gives_a_validation_error(grid, block, smem, regs, n):
    try:
        config = parse_launch(grid, block, smem, regs, n)
    except LaunchValidationError as exc:
        assert exc.problems
        return
    validate(config, limits_for_cc((8, 6)), "GPU")  # never raises


@st.composite
def valid_blocks(draw):
    """A block configuration that passes validation on a random CC."""
    lim = limits_for_cc(draw(CCS))
    threads = draw(st.integers(1, lim.max_threads_per_block))
    regs = draw(st.integers(1, lim.max_regs_per_thread))
    smem = draw(st.integers(0, lim.max_smem_per_block_optin_bytes))
    config = LaunchConfig(Dim3(1), Dim3(threads), smem, regs)
    return lim, threads, regs, smem, not validate(config, lim)


@SETTINGS
@given(valid_blocks())
def test_occupancy_bounds(case):
    lim, threads, regs, smem, valid = case
    occ = occupancy(lim, threads, regs, smem)
    assert 0.0 <= occ.occupancy <= 1.0
    assert occ.active_blocks_per_sm * occ.warps_per_block <= lim.max_warps_per_sm
    assert occ.active_blocks_per_sm <= lim.max_blocks_per_sm
    assert occ.active_blocks_per_sm == min(occ.block_limits().values())
    assert occ.limiters and all(occ.block_limits()[r] == occ.active_blocks_per_sm for r in occ.limiters)
    # a launch that passes validation always runs: at least one block fits on an SM
    if valid:
        assert occ.active_blocks_per_sm >= 1


@SETTINGS
@given(valid_blocks(), st.integers(0, 255))
def test_more_registers_never_raise_occupancy(case, extra):
    lim, threads, regs, smem, _ = case
    more = min(lim.max_regs_per_thread, regs + extra)
    assert occupancy(lim, threads, more, smem).occupancy <= occupancy(lim, threads, regs, smem).occupancy


@SETTINGS
@given(valid_blocks(), st.integers(0, 256 * 1024))
def test_more_shared_memory_never_raises_occupancy(case, extra):
    lim, threads, regs, smem, _ = case
    assert (
        occupancy(lim, threads, regs, smem + extra).occupancy <= occupancy(lim, threads, regs, smem).occupancy
    )


@SETTINGS
@given(CCS, st.integers(1, 1024), st.integers(1, 255), st.integers(0, 100_000), st.integers(1, 2**20))
def test_idle_threads_formula(cc, threads, regs, smem, n):
    device = CatalogGpu(name="GPU", compute_capability=cc, sm_count=10)
    blocks = -(-n // threads)
    try:
        plan = plan_launch(parse_launch(str(blocks), str(threads), str(smem), str(regs), str(n)), device)
    except LaunchValidationError:
        return
    assert plan.idle_threads == blocks * threads - n < threads
    assert plan.uncovered_elements == 0
    busy = sum(plan.block_busy_threads(b) for b in (blocks - 1,)) + (blocks - 1) * threads
    assert busy == n
