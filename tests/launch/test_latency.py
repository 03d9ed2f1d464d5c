"""The warp-scheduler model: the simulator against a plain cycle-by-cycle reference, the closed
form U(N) and N*, the presets, and the tie to a launch's occupancy."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.limits import limits_for_cc
from explorer.inputs import InputError
from explorer.launch.latency import (
    ELIGIBLE,
    IDLE,
    ISSUING,
    MAX_ALU,
    MAX_CYCLES,
    MAX_LATENCY,
    MAX_WARPS,
    MIN_CYCLES,
    MOST_CYCLES,
    POLICIES,
    PRESETS,
    STALLED,
    LatencyConfig,
    config_for_launch,
    find_preset,
    lrr_utilization_per_scheduler,
    model_utilization,
    model_utilization_per_scheduler,
    run_scheduler,
    simulate_latency,
    steady_window,
    utilization_curve,
    warps_needed_per_scheduler,
)
from explorer.launch.occupancy import occupancy


def reference_scheduler(warps, latency, alu, policy, cycles):
    """Every cycle, look at every warp: who can issue, and pick one by the policy's rule."""
    ready = [0] * warps
    step = [0] * warps
    last = -1
    picks, states = [], []
    for t in range(cycles):
        can = [w for w in range(warps) if ready[w] <= t]
        row = [ELIGIBLE if ready[w] <= t else STALLED for w in range(warps)]
        pick = -1
        if can:
            if policy == "gto":
                pick = last if last in can else min(can)
            else:
                pick = next(w % warps for w in range(last + 1, last + 1 + warps) if (w % warps) in can)
            row[pick] = ISSUING
            if step[pick] == 0:
                ready[pick] = t + latency + 1
                step[pick] = 1 if alu else 0
            else:
                ready[pick] = t + 1
                step[pick] = step[pick] + 1 if step[pick] < alu else 0
            last = pick
        picks.append(pick)
        states.append(row)
    return picks, np.array(states, dtype=np.uint8)


@settings(max_examples=300, deadline=None)
@given(
    warps=st.integers(1, 12),
    latency=st.integers(0, 40),
    alu=st.integers(0, 6),
    policy=st.sampled_from(["gto", "lrr"]),
    cycles=st.integers(1, 300),
)
def test_scheduler_matches_the_cycle_by_cycle_reference(warps, latency, alu, policy, cycles):
    run = run_scheduler(warps, latency, alu, policy, cycles)
    picks, states = reference_scheduler(warps, latency, alu, policy, cycles)
    assert run.picks.tolist() == picks
    assert np.array_equal(run.states, states)
    assert run.issue_cycles.tolist() == [t for t, p in enumerate(picks) if p >= 0]


@pytest.mark.parametrize("latency", [100, 400, 650])
@pytest.mark.parametrize("alu", [0, 1, 4, 15])
def test_one_gto_scheduler_is_within_5_percent_of_the_closed_form(latency, alu):
    n_star = warps_needed_per_scheduler(latency, alu)
    assert n_star == -(-(latency + alu + 1) // (alu + 1))
    for n in (max(1, n_star - 2), max(1, n_star - 1), n_star, n_star + 1, max(1, n_star // 2)):
        run = simulate_latency(LatencyConfig(n, latency, alu, 1, "gto"))
        model = min(1.0, n * (alu + 1) / (latency + alu + 1))
        assert run.model_utilization == pytest.approx(model)
        assert abs(run.utilization - model) <= 0.05 * model, (n, run.utilization, model)
        assert run.warps_needed == n_star
    # at N* the scheduler issues every cycle of the steady state; one warp fewer, it does not
    assert simulate_latency(LatencyConfig(n_star, latency, alu, 1, "gto")).utilization == 1.0
    if n_star > 1:
        assert simulate_latency(LatencyConfig(n_star - 1, latency, alu, 1, "gto")).utilization < 1.0


def test_the_cuda_guide_figure_for_4_cycle_arithmetic():
    """4-cycle latency, 4 schedulers: 16 warps per SM keep every scheduler issuing, 12 do not."""
    preset = find_preset("cuda-guide-arithmetic")
    assert preset.mem_latency == 3
    run = simulate_latency(LatencyConfig(16, preset.mem_latency, 0, 4, "gto"))
    assert run.warps_needed == 16 and run.utilization == 1.0
    assert simulate_latency(LatencyConfig(12, preset.mem_latency, 0, 4, "lrr")).utilization == pytest.approx(
        0.75
    )


def test_states_of_the_whole_sm():
    run = simulate_latency(LatencyConfig(6, 20, 2, 4, "lrr", warp_slots=8))
    states = run.states()
    assert states.shape == (run.recorded_cycles, 8)
    assert (states[:, 6:] == IDLE).all()  # slots no warp fills
    picks = run.picks()
    for t in range(0, 200):
        issuing = set(np.flatnonzero(states[t] == ISSUING))
        assert issuing == {int(w) for w in picks[t] if w >= 0}
        for s in range(4):  # a scheduler issues only its own warps, at most one per cycle
            assert picks[t, s] < 0 or picks[t, s] % 4 == s
    assert run.issued_by(run.cycles) == sum(len(r.issue_cycles) for r in run.schedulers)


def test_uneven_warps_over_schedulers():
    config = LatencyConfig(6, 99, 0, 4, "gto")
    assert [config.warps_on(s) for s in range(4)] == [2, 2, 1, 1]
    run = simulate_latency(config)
    assert run.model_utilization == pytest.approx((2 + 2 + 1 + 1) / 4 / 100)
    assert run.utilization == pytest.approx(run.model_utilization, rel=0.05)


def test_curve_builds_up_to_one_at_n_star():
    curve = utilization_curve(212, 4, 4, "gto", max_warps=64)
    n_star = curve.warps_needed
    assert n_star == 4 * 44
    values = [p.simulated for p in curve.points]
    assert values == sorted(values)  # more warps never hide less
    for p in curve.points:
        assert p.simulated == pytest.approx(p.model, rel=0.05)
    assert curve.points[-1].model == pytest.approx(64 / 4 * 5 / 217)


def test_more_registers_fewer_warps_less_hidden_latency():
    """Tied to the launch: 256-thread blocks on 8.0; raising registers per thread lowers the
    resident warps, and the utilization the model gives falls with them."""
    limits = limits_for_cc((8, 0))
    us = []
    for regs in (32, 64, 128, 255):
        occ = occupancy(limits, 256, regs, 0)
        config = config_for_launch(occ, limits, 35, 9)
        assert config.warps == occ.active_warps_per_sm and config.schedulers == 4 and config.warp_slots == 64
        us.append(simulate_latency(config).utilization)
    assert us == sorted(us, reverse=True) and us[0] == 1.0 and us[-1] < 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"warps": 0}, "warps is 0"),
        ({"warps": 5000}, "warps is 5000"),
        ({"mem_latency": -1}, "memory latency L is -1"),
        ({"alu": 10_000}, "arithmetic instructions K is 10000"),
        ({"schedulers": 0}, "schedulers is 0"),
        ({"policy": "fifo"}, "policy 'fifo'"),
        ({"cycles": 5}, "cycles is 5"),
        ({"warp_slots": 2}, "do not fit"),
    ],
)
def test_bad_configs_name_the_value_and_the_limit(kwargs, message):
    args = {"warps": 4, "mem_latency": 10, "alu": 1, **kwargs}
    with pytest.raises(InputError, match=message):
        LatencyConfig(**args)


def test_too_few_cycles_for_a_steady_state():
    with pytest.raises(InputError, match="needs at least"):
        simulate_latency(LatencyConfig(4, 650, 0, 1, "gto", cycles=1000))


def test_presets_name_their_sources():
    keys = {p.key for p in PRESETS}
    assert {"v100-dram", "a100-dram", "h100-pcie-dram", "h100-pcie-l2"} <= keys
    by_key = {p.key: p for p in PRESETS}
    # the figures the issue quotes: DRAM about 430 (V100), 570 (A100), 650 (H100 PCIe) cycles
    assert 430 <= by_key["v100-dram"].latency_cycles <= 440
    assert 570 <= by_key["a100-dram"].latency_cycles <= 580
    assert 650 <= by_key["h100-pcie-dram"].latency_cycles <= 660
    for p in PRESETS:
        assert p.source and p.mem_latency == p.latency_cycles - 1
    assert model_utilization_per_scheduler(16, 3, 0) == 1.0


# ----------------------------------------------------------------------------- the whole SM, brute force


def reference_sm(warps, latency, alu, schedulers, policy, cycles):
    """A straightforward SM, independent of the simulator: every cycle, every scheduler looks at
    each of its warps (warp w on scheduler w mod S; none when N < S) and issues one by its policy.
    Returns each cycle's pick per scheduler (SM-wide warp number, -1 none) and the issue count."""
    ready = [0] * warps  # first cycle each warp may issue in
    step = [0] * warps  # 0: its load is next; k: its k-th arithmetic instruction
    last = [-1] * schedulers  # SM-wide warp each scheduler issued last
    picks = []
    for t in range(cycles):
        row = []
        for s in range(schedulers):
            mine = [w for w in range(s, warps, schedulers)]
            can = [w for w in mine if ready[w] <= t]
            pick = -1
            if can:
                if policy == "gto":
                    pick = last[s] if last[s] in can else min(can)
                else:  # the next ready warp after the last one, in the scheduler's own order
                    order = (
                        mine[mine.index(last[s]) + 1 :] + mine[: mine.index(last[s]) + 1]
                        if last[s] >= 0
                        else mine
                    )
                    pick = next(w for w in order if w in can)
                if step[pick] == 0:
                    ready[pick] = t + latency + 1
                    step[pick] = 1 if alu else 0
                else:
                    ready[pick] = t + 1
                    step[pick] = step[pick] + 1 if step[pick] < alu else 0
                last[s] = pick
            row.append(pick)
        picks.append(row)
    return picks


def test_the_sm_matches_a_brute_force_sm_over_thousands_of_launches():
    """Random (N, L, K, S, policy), N = 1 and N < S included: each scheduler's picks and the
    steady-state utilization are the brute force's, and schedulers without a warp count as idle."""
    rng = random.Random(20261128)
    cases = [(1, 0, 0, 1), (1, 5, 2, 4), (3, 10, 4, 4), (2, 0, 0, 8), (1, 30, 0, 8)]
    cases += [
        (rng.randint(1, 14), rng.randint(0, 30), rng.randint(0, 5), rng.randint(1, 8)) for _ in range(2500)
    ]
    fewer = 0
    for i, (n, latency, alu, s) in enumerate(cases):
        policy = POLICIES[i % 2]
        probe = LatencyConfig(n, latency, alu, s, policy)
        cycles = max(MIN_CYCLES, probe.warm_cycles + probe.window_period * rng.randint(1, 3))
        config = LatencyConfig(n, latency, alu, s, policy, cycles)
        run = simulate_latency(config)
        picks = reference_sm(n, latency, alu, s, policy, cycles)
        recorded = run.recorded_cycles
        assert run.picks().tolist() == picks[:recorded], config
        lo, hi = run.window
        issued = sum(1 for row in picks[lo:hi] for p in row if p >= 0)
        assert run.utilization == issued / ((hi - lo) * s), config
        assert run.issued_by(cycles) == sum(1 for row in picks for p in row if p >= 0)
        fewer += n < s
    assert fewer > 300  # the low-occupancy launches are well covered


def steady_share(warps, latency, alu, policy, round_cycles):
    """A scheduler's issue share over whole rounds of ``round_cycles``, long after the start."""
    start = 4 * (warps * (alu + 1) + latency + alu + 1)
    cycles = start + 3 * round_cycles
    run = run_scheduler(warps, latency, alu, policy, cycles)
    return int(np.count_nonzero(run.issue_cycles >= start)) / (cycles - start)


def test_both_closed_forms_are_exact_in_the_steady_state():
    """gto: min(1, N (K+1) / (L+K+1)); lrr: min(1, N (K+1) / (N K + L + 1)), measured over whole
    rounds of each policy's own period, over thousands of random (N, L, K), N = 1 included."""
    rng = random.Random(7)
    cases = [(1, 0, 0), (1, 9, 0), (2, 1, 0), (5, 4, 3)]
    cases += [(rng.randint(1, 24), rng.randint(0, 80), rng.randint(0, 12)) for _ in range(2000)]
    for n, latency, alu in cases:
        gto = steady_share(n, latency, alu, "gto", latency + alu + 1)
        assert gto == pytest.approx(model_utilization_per_scheduler(n, latency, alu), abs=1e-12)
        lrr = steady_share(n, latency, alu, "lrr", n * alu + latency + 1)
        assert lrr == pytest.approx(lrr_utilization_per_scheduler(n, latency, alu), abs=1e-12)
        assert lrr <= gto + 1e-12  # taking turns never hides more than keeping one warp going
        assert (lrr == 1.0) == (n >= latency + 1)  # lrr hides L only from L + 1 warps, whatever K


def test_the_simulated_gto_sm_is_its_closed_form_exactly():
    rng = random.Random(11)
    for _ in range(1500):
        config = LatencyConfig(rng.randint(1, 40), rng.randint(0, 300), rng.randint(0, 20), rng.randint(1, 8))
        assert simulate_latency(config).utilization == pytest.approx(model_utilization(config), abs=1e-12)


def test_fewer_warps_than_schedulers_leaves_the_rest_idle():
    """One to three warps on four schedulers: the low-occupancy case a class is shown."""
    run = simulate_latency(LatencyConfig(3, 10, 4, 4, "gto", warp_slots=64))
    assert [r.warps for r in run.schedulers] == [1, 1, 1, 0]
    assert len(run.schedulers[3].issue_cycles) == 0
    assert run.utilization == pytest.approx(3 * 5 / 15 / 4)
    assert (run.states()[:, 3:] == IDLE).all()
    assert (run.picks()[:, 3] == -1).all()
    empty = run_scheduler(0, 10, 4, "lrr", 500)  # a scheduler with no warp simply never issues
    assert empty.issue_cycles.size == 0 and (empty.picks == -1).all() and empty.states.shape == (500, 0)


@pytest.mark.parametrize(
    ("device", "grid", "block", "smem", "warps"),
    [("A100", "108", "32", "100000", 1), ("GTX 1650", "16", "64", "40000", 2)],
)
def test_launches_that_leave_fewer_warps_than_schedulers(device, grid, block, smem, warps):
    """The launches a teacher showed the window: the latency view's model and curve are built."""
    from explorer.devices.catalog import load_catalog
    from explorer.devices.limits import limits_for_device
    from explorer.devices.names import best_match
    from explorer.launch.config import parse_launch
    from explorer.launch.schedule import plan_launch

    (gpu,) = best_match(device, load_catalog())
    plan = plan_launch(parse_launch(grid, block, smem, "32"), gpu)
    limits = limits_for_device(gpu)
    config = config_for_launch(plan.occupancy, limits, find_preset("a100-dram").mem_latency, 9)
    assert config.warps == warps < config.schedulers
    run = simulate_latency(config)
    assert run.utilization == pytest.approx(run.model_utilization) and 0 < run.utilization < 0.1
    curve = utilization_curve(config.mem_latency, 9, config.schedulers, "gto", config.slots)
    assert curve.points[warps - 1].simulated == pytest.approx(run.utilization)


def test_the_longest_default_run_is_accepted():
    """Each input at its documented maximum and no cycles given: the run is long enough to settle,
    and only a cycles count the user sets is held to a limit (stated for these inputs)."""
    config = LatencyConfig(MAX_WARPS, MAX_LATENCY, MAX_ALU, 4)
    lo, hi = steady_window(config)
    assert hi == config.run_cycles > MAX_CYCLES and hi - lo >= config.period
    assert config.cycles_limit == config.run_cycles
    with pytest.raises(
        InputError, match=r"cycles is 700,000; it must be from 100 to 644,524 \(what 1024 warps"
    ):
        LatencyConfig(MAX_WARPS, MAX_LATENCY, MAX_ALU, 4, cycles=700_000)
    with pytest.raises(InputError, match="cycles is 200,001; it must be from 100 to 200,000$"):
        LatencyConfig(4, 10, 1, cycles=200_001)
    assert MOST_CYCLES == LatencyConfig(MAX_WARPS, MAX_LATENCY, MAX_ALU, 1).cycles_limit


def test_the_simulated_lrr_sm_is_its_own_closed_form_when_the_schedulers_hold_alike():
    """lrr over whole rounds: min(1, N (K+1) / (N K + L + 1)) per scheduler, exactly, whenever
    every scheduler holds the same number of warps (else each has its own round)."""
    rng = random.Random(13)
    for _ in range(1500):
        s = rng.randint(1, 8)
        config = LatencyConfig(s * rng.randint(1, 12), rng.randint(0, 300), rng.randint(0, 20), s, "lrr")
        run = simulate_latency(config)
        assert run.utilization == pytest.approx(run.lrr_utilization, abs=1e-12), config
        lo, hi = run.window
        assert (hi - lo) % config.lrr_round == 0
