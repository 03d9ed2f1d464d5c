"""The acceptance checks in the order they run, each with the time it is expected to take on an
H100 and the deadline past which its process is stopped.

The order puts what the other checks depend on first (the machine, the device records, the
self-test), then the correctness passes, then the figures, then the lessons and the test suite,
which take longest: a short GPU slot that cannot fit them all (``--budget``) still gets the
checks that say most. The expected times are estimates made without a GPU; the first run on one
replaces them with what it measured (``duration_s`` in the report).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer.acceptance import checks_bench, checks_devices, checks_launch, checks_lessons, checks_occupancy

if TYPE_CHECKING:
    from explorer.acceptance.context import CheckContext
    from explorer.acceptance.records import CheckResult


@dataclass(frozen=True)
class CheckSpec:
    name: str  # what --only and --skip take
    title: str
    run: Callable[[CheckContext], CheckResult]
    expected_s: float  # on an H100, the whole check (its child's start included)
    deadline_s: float  # past this the check's process group is killed
    env: Mapping[str, str] = field(default_factory=dict)  # set for the check's process only

    @property
    def target(self) -> str:
        """How the child finds the function: ``module:function``."""
        return f"{self.run.__module__}:{self.run.__qualname__}"


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        "environment",
        "versions, clocks, other processes on the GPU",
        checks_devices.check_environment,
        10,
        60,
    ),
    CheckSpec(
        "devices",
        "devices --json against NVML, nvidia-smi, torch, the driver",
        checks_devices.check_devices,
        20,
        120,
    ),
    CheckSpec("self_test", "self-test on the GPU machine", checks_devices.check_self_test, 35, 240),
    CheckSpec(
        "occupancy",
        "occupancy against cuOccupancyMaxActiveBlocksPerMultiprocessor",
        checks_occupancy.check_occupancy,
        45,
        240,
    ),
    CheckSpec(
        "workloads", "every workload's GPU variants at small sizes", checks_bench.check_workloads, 60, 300
    ),
    CheckSpec("sgemm", "FP32 sgemm n=8192 against the FP32 peak", checks_bench.check_sgemm, 15, 120),
    CheckSpec(
        "memory_bandwidth",
        "vector add and copy against the DRAM roof",
        checks_bench.check_memory_bandwidth,
        20,
        120,
    ),
    CheckSpec(
        "pcie",
        "pinned vs pageable copies against the PCIe link; NVML's PCIe counter",
        checks_bench.check_pcie,
        25,
        120,
    ),
    CheckSpec(
        "strided_copy",
        "the strided copy, strides 1 to 32, against the coalescing model",
        checks_bench.check_strided_copy,
        30,
        180,
    ),
    CheckSpec(
        "transpose",
        "naive vs padded shared-memory transpose against the bank model",
        checks_bench.check_transpose,
        12,
        120,
    ),
    CheckSpec(
        "branch",
        "divergent vs warp-aligned branch against the divergence model",
        checks_bench.check_branch,
        12,
        120,
    ),
    CheckSpec(
        "utilization_trap",
        "NVML utilization against GPM SM activity",
        checks_bench.check_utilization_trap,
        25,
        120,
    ),
    CheckSpec(
        "occupancy_truth",
        "GPM SM occupancy against the predicted occupancy of three launches",
        checks_launch.check_occupancy_truth,
        15,
        120,
    ),
    CheckSpec(
        "real_run", "the real run on the GPU, block to SM from %smid", checks_launch.check_real_run, 20, 180
    ),
    CheckSpec(
        "roofs",
        "the roofline's measured ceilings against the theoretical ones",
        checks_bench.check_roofs,
        15,
        120,
    ),
    CheckSpec(
        "latency_ladder",
        "L1, L2, DRAM and shared-memory latency (pointer chase) against published Hopper figures",
        checks_bench.check_latency_ladder,
        20,
        180,
    ),
    CheckSpec(
        "remote",
        "the GPU over ssh: listing, a point, a real run, live readings",
        checks_launch.check_remote,
        40,
        180,
    ),
    CheckSpec("lessons", "the lessons' GPU curves, recorded", checks_lessons.check_lessons, 60, 300),
    CheckSpec("gpu_tests", "pytest -m gpu tests/gpu", checks_lessons.check_gpu_tests, 75, 300),
)


def names() -> list[str]:
    return [c.name for c in CHECKS]
