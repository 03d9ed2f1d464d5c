"""The memory workloads' GPU variants end to end through run_point, on numba's CUDA simulator (a
fresh process: the simulator must be on before numba is first imported), with a stand-in NVML for
the utilization trap. Small sizes: the simulator runs each thread in Python."""

from __future__ import annotations

import textwrap

import pytest

from tests.simulator import run_on_simulator

pytestmark = pytest.mark.slow  # every test here starts a process

SCRIPT = textwrap.dedent(
    """
    import json, sys, types
    from explorer.bench import wl_memory

    wl_memory.STRIDED_COPY_ELEMENTS_GPU = 100  # 100 elements out, 100 x stride in
    wl_memory.BRANCH_STEPS = 3
    wl_memory.TRAP_SECONDS, wl_memory.NVML_SETTLE_S, wl_memory.TRAP_LAUNCH_S = 0.3, 0.0, 0.05

    class Rates:
        gpu = 100
    class FakeNvml:  # one GPU that always reads 100%, as a real one does under the trap
        def nvmlInit(self): pass
        def nvmlShutdown(self): pass
        def nvmlDeviceGetCount(self): return 1
        def nvmlDeviceGetHandleByIndex(self, i): return i
        def nvmlDeviceGetUUID(self, h): return "GPU-fake"
        def nvmlDeviceGetUtilizationRates(self, h): return Rates()
    class NoNvml:
        def nvmlInit(self): raise RuntimeError("NVML Shared Library Not Found")
    nvml = {"fake": FakeNvml(), "none": NoNvml()}
    import explorer.devices.nvml as probe
    probe.import_nvml = lambda: nvml["current"]

    from explorer.bench.execute import PointSpec, run_point
    from explorer.bench.workloads import get_workload

    def run(workload, key, size, warm=False):
        p, fatal = run_point(PointSpec(0, workload, "cuda:0", "cuda:0 " + key, key, size, repeats=2, budget_s=0.1, warm_l2=warm), get_workload(workload))
        return {"error": p.error, "fatal": fatal, "median_s": p.median_s, "throughput": p.throughput,
                "model": p.model, "model_estimate": p.model_estimate, "model_note": p.model_note,
                "extra": dict(p.extra), "working_set": p.working_set_bytes, "gbps": p.gbps}

    out = {}
    for stride in (1, 3, 32):
        out[f"strided_{stride}"] = run("strided_copy", "numba_kernel", stride)
    out["strided_3_warm"] = run("strided_copy", "numba_kernel", 3, warm=True)
    for key in ("naive", "padded"):
        out[key] = run("shared_transpose", key, 40)  # not a multiple of the tile: edges masked
    for key in ("divergent", "warp_aligned"):
        out[key] = run("branch", key, 96)
    nvml["current"] = nvml["fake"]
    out["trap"] = run("utilization_trap", "busy_warps", 2)
    from tests.devices.fake_nvml import hopper_gpu, make_fake_nvml
    nvml["current"] = hopper = make_fake_nvml([hopper_gpu()])  # GPM: SM activity 0.76%
    out["trap_gpm"] = run("utilization_trap", "busy_warps", 1)
    out["trap_gpm"]["samples_held"] = hopper.gpm_samples_held
    out["trap_gpm"]["gpm_calls"] = sorted({c for c in hopper.calls if c.startswith("nvmlGpm")})
    nvml["current"] = nvml["none"]
    out["trap_no_nvml"] = run("utilization_trap", "busy_warps", 1)
    print("RESULT" + json.dumps(out))
    """
)


def test_memory_workloads_on_the_simulator():
    from explorer.memory.coalescing import strided_copy_model

    out = run_on_simulator(SCRIPT, timeout_s=600)
    for name, p in out.items():
        if name != "trap_no_nvml":
            assert p["error"] is None and not p["fatal"], (name, p["error"])
            assert p["median_s"] > 0 and p["throughput"] > 0, name
            assert p["model_note"].startswith("model, not a measurement") or name.startswith("trap"), name
    for stride in (1, 3, 32):
        p = out[f"strided_{stride}"]
        assert p["extra"]["input_bytes"] == 400.0 * stride
        assert p["extra"]["elements"] == 100.0 and p["working_set"] == 400.0 * (stride + 1)
        assert p["gbps"] * p["median_s"] == pytest.approx(800e-9)  # 8 bytes an element, at every stride
        assert p["extra"]["l2"] == "cold" and "before each sample" in p["extra"]["timing_method"]
        efficiency = strided_copy_model(stride).efficiency
        assert f"uses {round(efficiency * 100, 1):g}%" in p["model_note"]
        if p["model_estimate"] is not None:  # the simulator's GPU may have no known bandwidth
            assert p["model"].startswith("est. ")
    warm = out["strided_3_warm"]
    assert warm["error"] is None and warm["extra"]["l2"] == "warm" and "l2_flush_bytes" not in warm["extra"]
    assert "L2 warm" in warm["extra"]["timing_method"]
    assert out["naive"]["extra"]["l2"] == "cold" and out["padded"]["extra"]["l2"] == "cold"
    assert "l2" not in out["divergent"]["extra"]  # compute-bound: no L2 switch
    assert (
        out["naive"]["model"] == "32-way bank conflict"
        and out["naive"]["extra"]["conflict_degree_model"] == 32
    )
    assert out["padded"]["model"] == "no bank conflict" and out["padded"]["extra"]["wavefronts_model"] == 1
    assert (
        out["divergent"]["model"] == "SIMT 50%" and out["divergent"]["extra"]["simt_efficiency_model"] == 0.5
    )
    assert out["warp_aligned"]["model"] == "SIMT 100%"
    trap = out["trap"]
    assert trap["extra"]["nvml_gpu_utilization_pct"] == 100.0 and trap["extra"]["nvml_samples"] >= 1
    assert trap["model"].startswith("NVML 100%; at most 2") and "not the share of SMs" in trap["model_note"]
    # the throughput is the work really done: lane steps per second
    assert trap["throughput"] == trap["extra"]["steps_per_launch"] * 64 / trap["median_s"]
    # a stand-in without GPM: said, and the point is measured all the same
    assert "too old to have the GPM metrics" in trap["extra"]["gpm_sm_activity_pct_missing"]
    assert "SM activity" not in trap["model"]
    # a Hopper stand-in: SM activity over the trap's window beside NVML's 100%
    gpm = out["trap_gpm"]
    assert gpm["error"] is None, gpm["error"]
    assert gpm["model"].startswith("NVML 100%; SM activity 0.76 %; at most 1")
    assert "GPM counters measured SM activity 0.76 % and SM occupancy 0.05 %" in gpm["model_note"]
    assert gpm["extra"]["gpm_sm_activity_pct"] == 0.76 and gpm["extra"]["gpm_sm_occupancy_pct"] == 0.05
    assert gpm["samples_held"] == 0 and "nvmlGpmMetricsGet" in gpm["gpm_calls"]
    none = out["trap_no_nvml"]
    assert none["error"].startswith("NVML cannot be read here (NVML Shared Library Not Found)")
    assert "\n" not in none["error"] and not none["fatal"]
