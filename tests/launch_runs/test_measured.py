"""The measured part, as far as it runs without a GPU: the kernels under numba's CUDA simulator
(every block recorded once, the spin honoured, the pointer chase ending where the cycle says,
the streaming sum exact), the whole path through a child agent, the records turned into a
timeline, and the one-line refusals. The comparisons with the model need a GPU: ``gpu`` tests."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.schedule import plan_launch
from explorer.launch_runs.measured import (
    MAX_MEASURED_BLOCKS,
    MIN_SPIN_NS,
    SPIN_NS,
    check_measurable,
    gpu_index,
    measure_bandwidth_here,
    measure_dispatch_here,
    spin_for,
    timeline_from_records,
)
from tests.launch.conftest import GTX
from tests.simulator import run_on_simulator


@pytest.mark.slow
def test_kernels_on_the_simulator():
    result = run_on_simulator(
        """
import json, numpy as np
from explorer.launch_runs import measured_kernels as mk
sm, start, end, regs = mk.record_blocks((3, 2, 1), (32, 1, 1), 0, 300_000)
ns, steps = mk.time_chase(64 * 128, 40)
from explorer.devices.gpu_clock import ClockWatch
watch = ClockWatch(lambda: 1500.0)  # a steady fake SM clock: held once, read after each launch
times, sms = mk.time_stream(4096, 2, 64, 2, watch)
print("RESULT" + json.dumps({
    "clock": [len(watch.holds), watch.steady_mhz, watch.low_mhz, watch.note()],
    "sm": sm.tolist(), "start": [int(x) for x in start], "end": [int(x) for x in end], "regs": regs,
    "steps": steps, "ns": ns,
    "times": times, "sms": sms.tolist(),
}))
"""
    )
    assert result["sm"] == [0] * 6 and result["regs"] == 0
    start, end = np.array(result["start"]), np.array(result["end"])
    assert (end - start >= 300_000).all()  # every block spun at least its time
    # the simulator runs one block at a time: sorted by start, none overlaps the next
    order = np.argsort(start)
    assert (start[order][1:] >= end[order][:-1]).all()
    assert result["steps"] == 40 and result["ns"] > 0  # (and the chase ended right)
    assert len(result["times"]) == 2 and result["sms"] == [0, 0]  # (and the sum was exact)
    assert result["clock"] == [1, 1500.0, 1500.0, ""]


@pytest.mark.slow
def test_the_whole_path_through_an_agent_on_the_simulator():
    plan = plan_launch(LaunchConfig(Dim3(4), Dim3(64)), GTX)
    measured = measure_dispatch_here(plan, GTX, backend="simulator")
    t = measured.timeline
    assert measured.backend == "simulator" and t.unit == "ns" and t.blocks == 4
    assert t.start.min() == 0 and (t.end - t.start >= measured.spin_ns).all()
    assert measured.makespan_blocks == pytest.approx(t.figures.makespan / measured.mean_block_ns)
    assert any("simulator" in line for line in measured.summary_lines())
    data = measured.to_dict()
    assert {"makespan", "simulated_makespan", "ratio", "blocks"} <= set(data)

    sweep = measure_bandwidth_here(
        4, None, backend="simulator", stream_bytes=8192, chase_bytes=4096, chase_steps=16, repeats=1
    )
    assert [p.warps_per_sm for p in sweep.points] == [1, 2, 3, 4] and sweep.latency_ns > 0
    assert sweep.predicted_gbps(2) == pytest.approx(2 * sweep.predicted_gbps(1))


def test_records_to_a_timeline_assign_slots():
    # two SMs; SM 0 runs three blocks, two at once, then a third when the first ends
    sm = np.array([0, 0, 1, 0])
    start = np.array([1000, 1000, 1005, 1500], dtype=np.uint64)
    end = np.array([1500, 1800, 1600, 1900], dtype=np.uint64)
    t = timeline_from_records(sm, start, end, sm_count=2, slots_per_sm=2)
    assert t.start.tolist() == [0, 0, 5, 500] and t.slot.tolist() == [0, 1, 0, 0]
    assert t.figures.makespan == 900 and t.figures.sm_busy == (900.0, 595.0)
    # more at once than occupancy said: the timeline widens to show it
    wide = timeline_from_records(sm, start, end, sm_count=2, slots_per_sm=1)
    assert wide.slots_per_sm == 2


def test_refusals_are_one_line():
    with pytest.raises(UserError, match="catalog sheet"):
        gpu_index(GTX)
    big = plan_launch(LaunchConfig(Dim3(MAX_MEASURED_BLOCKS + 1), Dim3(64)), GTX)
    with pytest.raises(UserError, match=f"records at most {MAX_MEASURED_BLOCKS:,}"):
        check_measurable(big)
    with pytest.raises(UserError, match="asks for at most 49,152"):
        check_measurable(plan_launch(LaunchConfig(Dim3(8), Dim3(64), 60_000), GTX))
    many_waves = plan_launch(LaunchConfig(Dim3(16 * 100_000), Dim3(1024)), GTX)
    with pytest.raises(UserError, match="waves; a measured run takes at most"):
        spin_for(many_waves)
    assert spin_for(plan_launch(LaunchConfig(Dim3(64), Dim3(1024)), GTX)) == SPIN_NS
    assert spin_for(plan_launch(LaunchConfig(Dim3(16 * 70_000), Dim3(1024)), GTX)) >= MIN_SPIN_NS


def test_cli_measure_without_a_gpu_says_why_in_one_line(monkeypatch, capsys):
    from explorer import cli
    from explorer.devices import discover as discover_module
    from explorer.devices import find as find_module
    from explorer.devices.discovery import Discovery

    monkeypatch.setattr(find_module, "find_device", lambda query, discovery=None: GTX)
    monkeypatch.setattr(
        discover_module,
        "discover",
        lambda **kw: Discovery(devices=[], reports=[]),
    )
    code = cli.main(
        [
            "dispatch",
            "--device",
            "1650",
            "--grid",
            "98",
            "--block",
            "1024",
            "--durations",
            "uniform",
            "--measure",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "catalog sheet" in err and "No NVIDIA GPU was found" in err
    code = cli.main(["latency", "--warps", "16", "--mem-latency", "400", "--alu", "4", "--measure"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "No NVIDIA GPU was found" in err


@pytest.mark.slow
def test_the_kernels_compile_to_ptx_that_reads_smid_and_globaltimer():
    """Without a GPU, NVVM (when installed) still compiles the kernels: the two registers are read
    with inline PTX, and the streaming read keeps one load per warp in flight."""
    result = run_on_simulator(
        """
import json, os
os.environ.pop("NUMBA_ENABLE_CUDASIM")
from explorer.numbacuda import cuda
try:
    from explorer.launch_runs import measured_kernels as mk
    out = {}
    for name, sig in (("spin_blocks", "void(uint64, int32[:], uint64[:], uint64[:])"),
                      ("stream_read", "void(float32[:], float32[:], int32[:])"),
                      ("chase", "void(int32[:], int64, int64, int64[:])"),
                      ("chase_shared", "void(int32[:], int64, int64[:])")):
        ptx, _ = cuda.compile_ptx(getattr(mk, name).py_func, sig, cc=(7, 5))
        out[name] = ptx
except Exception as exc:  # no libnvvm here
    out = {"skip": f"{type(exc).__name__}: {str(exc)[:200]}"}
print("RESULT" + json.dumps(out))
"""
    )
    if "skip" in result:
        pytest.skip(f"NVVM cannot compile here: {result['skip']}")
    spin, stream, chase = result["spin_blocks"], result["stream_read"], result["chase"]
    assert "%smid" in spin and spin.count("%globaltimer") >= 3 and "bar.sync" in spin
    assert "%smid" in stream and stream.count("ld.global.f32") == 1
    assert chase.count("%globaltimer") == 2 and chase.count("%clock64") == 2
    shared = result["chase_shared"]
    assert shared.count("%clock64") == 2 and "ld.shared" in shared
