"""The warp-scheduler model: the simulator against a plain cycle-by-cycle reference, the closed
form U(N) and N*, the presets, and the tie to a launch's occupancy."""

from __future__ import annotations

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
    PRESETS,
    STALLED,
    LatencyConfig,
    config_for_launch,
    find_preset,
    model_utilization_per_scheduler,
    run_scheduler,
    simulate_latency,
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
