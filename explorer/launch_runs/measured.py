"""Measured on this machine's GPU: which SM ran each block and when, and memory bandwidth against
resident warps per SM, beside what the models of ``dispatch`` and ``latency`` say.

* ``measure_dispatch_here``: blocks of one fixed length (each spins on the GPU's nanosecond clock)
  launched with the user's grid, block and shared memory; every block records its SM
  (``%smid``) and its start and end (``%globaltimer``). The records become a ``Timeline`` in
  nanoseconds, compared with the simulation of the same launch: equal blocks, so the simulated
  makespan is the wave count, and the measured one, in units of the mean measured block, should
  be close to it; and no slot should stay empty while blocks still wait.
* ``measure_bandwidth_here``: a pointer chase measures one load's latency on this GPU, then a
  streaming read runs with 1, 2, 4 ... warps per SM. Little's law predicts the bandwidth one load
  in flight per warp can reach: SMs x warps x 128 bytes / latency, up to the memory's bandwidth.

The kernels (``explorer.launch_runs.measured_kernels``) run in a child agent process, as the real run
does, so a driver fault or a hung kernel ends the child, never the caller. Without a usable GPU
these refuse in one line that says why. Under numba's CUDA simulator (``backend="simulator"``,
for the tests) the same code runs with the host's clock and one SM, and is labelled so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.devices.gpu_clock import ClockWatch, ReadMhz
from explorer.devices.model import Device, Gpu
from explorer.errors import UserError
from explorer.launch.dispatch import DispatchResult, simulate_dispatch
from explorer.launch.durations import parse_durations
from explorer.launch.measurable import measurable, not_measurable
from explorer.launch.schedule import LaunchPlan, plan_launch
from explorer.launch.timeline import Timeline
from explorer.words import percent

if TYPE_CHECKING:  # pragma: no cover
    from explorer.agent.child import AgentProcess

#: each block's spin, and the least a block may spin: well above launch jitter (a few microseconds)
SPIN_NS = 200_000
MIN_SPIN_NS = 20_000
#: one launch's expected length at most: a GPU driving a display stops kernels after about 2 s
LAUNCH_BUDGET_NS = 1_500_000_000
MAX_MEASURED_BLOCKS = 65_536
#: numba cannot opt a kernel in to more dynamic shared memory than the default 48 KB
MAX_MEASURED_SMEM = 48 * 1024
#: warps per SM the bandwidth sweep tries (up to the device's and the request's limit)
SWEEP_WARPS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
BYTES_PER_WARP_LOAD = 128  # 32 lanes x 4-byte floats, one coalesced load
STREAM_BYTES = 256 * 1024 * 1024
CHASE_BYTES = 256 * 1024 * 1024
CHASE_STEPS = 100_000
REPEATS = 5
BACKENDS = ("gpu", "simulator")
BACKEND_WORDS = {"gpu": "on the GPU", "simulator": "under numba's CUDA simulator (host clock, one SM)"}


def spin_for(plan: LaunchPlan) -> int:
    """Nanoseconds each block spins: SPIN_NS, shorter when the launch's waves would not fit one
    launch's budget; too many waves for even MIN_SPIN_NS is refused in one line."""
    spin = min(SPIN_NS, LAUNCH_BUDGET_NS // max(1, plan.waves))
    if spin < MIN_SPIN_NS:
        most = LAUNCH_BUDGET_NS // MIN_SPIN_NS
        raise UserError(
            f"the launch runs {plan.waves:,} waves; a measured run takes at most {most:,} "
            f"(blocks of {MIN_SPIN_NS // 1000} us within {LAUNCH_BUDGET_NS / 1e9:g} s, under a display GPU's watchdog)"
        )
    return int(spin)


def check_measurable(plan: LaunchPlan) -> None:
    if plan.total_blocks > MAX_MEASURED_BLOCKS:
        raise UserError(
            f"the grid has {plan.total_blocks:,} blocks; a measured run records at most {MAX_MEASURED_BLOCKS:,}"
        )
    if plan.config.shared_mem_bytes > MAX_MEASURED_SMEM:
        raise UserError(
            f"--smem is {plan.config.shared_mem_bytes:,} bytes; a measured run asks for at most "
            f"{MAX_MEASURED_SMEM:,} (numba cannot opt a kernel in to more)"
        )


def timeline_from_records(
    sm: np.ndarray, start: np.ndarray, end: np.ndarray, sm_count: int, slots_per_sm: int
) -> Timeline:
    """A Timeline in ns from 0 (the first start); each block gets the lowest slot of its SM free at its
    start (the hardware does not say which it used). More blocks at once on an SM than occupancy
    allows would show as extra slots, so ``slots_per_sm`` is the larger of the two."""
    sm = np.asarray(sm, dtype=np.int32)
    origin = int(np.min(start)) if len(start) else 0
    s = (np.asarray(start, dtype=np.int64) - origin).astype(np.float64)
    e = (np.asarray(end, dtype=np.int64) - origin).astype(np.float64)
    slot = np.zeros(len(s), dtype=np.int32)
    free_at: list[list[float]] = [[] for _ in range(max(sm_count, int(sm.max()) + 1 if len(sm) else 0))]
    for i in np.argsort(s, kind="stable"):
        slots = free_at[sm[i]]
        k = next((k for k, t in enumerate(slots) if t <= s[i]), len(slots))
        if k == len(slots):
            slots.append(e[i])
        else:
            slots[k] = e[i]
        slot[i] = k
    widest = max((len(x) for x in free_at), default=0)
    return Timeline(max(sm_count, len(free_at)), max(slots_per_sm, widest), sm, slot, s, e, unit="ns")


@dataclass(frozen=True)
class MeasuredDispatch:
    """Blocks of one length run on a GPU, beside the simulation of the same launch."""

    device_name: str
    backend: str
    plan: LaunchPlan  # with the spin kernel's own registers per thread
    spin_ns: int
    timeline: Timeline  # in ns
    requested_regs: int  # what the user asked for; the kernel decides its own

    @cached_property
    def simulated(self) -> DispatchResult:
        return simulate_dispatch(self.plan, parse_durations("uniform"))

    @property
    def mean_block_ns(self) -> float:
        t = self.timeline
        return float(np.mean(t.end - t.start)) if t.blocks else 0.0

    @property
    def makespan_blocks(self) -> float:
        """The measured makespan in units of the mean measured block: comparable with the waves."""
        return self.timeline.figures.makespan / self.mean_block_ns if self.mean_block_ns else 0.0

    @property
    def ratio(self) -> float:
        """Measured makespan / simulated makespan (1 when the model is right)."""
        return self.makespan_blocks / self.simulated.figures.makespan

    def summary_lines(self) -> list[str]:
        f, p = self.timeline.figures, self.plan
        lines = [
            f"measured {BACKEND_WORDS[self.backend]}: {self.device_name}, {p.total_blocks:,} blocks of "
            f"{p.threads_per_block} threads spinning {self.spin_ns / 1000:g} us each",
            f"the kernel uses {p.config.regs_per_thread} registers per thread"
            + (
                f" (not the {self.requested_regs} asked for)"
                if self.requested_regs != p.config.regs_per_thread
                else ""
            )
            + f": {p.resident_blocks_per_sm} blocks per SM, {p.concurrent_blocks:,} at once, {p.waves} waves",
            f"measured makespan {f.makespan / 1e6:.3f} ms = {self.makespan_blocks:.3f} mean blocks of "
            f"{self.mean_block_ns / 1000:.1f} us; simulated {self.simulated.figures.makespan:g} "
            f"(measured / simulated = {self.ratio:.3f})",
            f"SMs used: {f.sms_used} of {p.sm_count}; slot-time left empty while blocks waited: "
            f"{percent(f.queued_idle_share, decimals=2)} (launch jitter)",
            f"tail: from {f.tail_start / 1e6:.3f} ms to {f.makespan / 1e6:.3f} ms",
        ]
        if self.backend == "simulator":
            lines.append(
                "the simulator runs one block at a time on the host: its times say nothing about a GPU"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        f = self.timeline.figures
        return {
            "device": self.device_name,
            "backend": self.backend,
            "config": self.plan.config.to_dict(),
            "requested_regs": self.requested_regs,
            "slots_per_sm": self.plan.resident_blocks_per_sm,
            "slots": self.plan.concurrent_blocks,
            "waves": self.plan.waves,
            "spin_ns": self.spin_ns,
            "mean_block_ns": self.mean_block_ns,
            "makespan_ns": f.makespan,
            "makespan": self.makespan_blocks,
            "simulated_makespan": self.simulated.figures.makespan,
            "ratio": self.ratio,
            "idle_slot_share_while_queued": f.queued_idle_share,
            "figures_ns": f.to_dict(),
            "blocks": {
                "sm": self.timeline.sm.tolist(),
                "start_ns": self.timeline.start.tolist(),
                "end_ns": self.timeline.end.tolist(),
            },
        }


@dataclass(frozen=True)
class BandwidthPoint:
    warps_per_sm: int
    gbps: float  # median of the repeats
    spread: float  # (max - min) / median
    most_blocks_on_one_sm: int  # 1 (or 2 past 32 warps) when the blocks spread one per SM


@dataclass(frozen=True)
class BandwidthSweep:
    """Streaming-read bandwidth against warps per SM, and the latency that predicts it."""

    device_name: str
    backend: str
    sm_count: int
    latency_ns: float  # one dependent load, measured by the pointer chase
    chase_bytes: int
    stream_bytes: int
    peak_gbps: float | None  # the memory's bandwidth from the device record, if known
    peak_basis: str
    points: tuple[BandwidthPoint, ...]
    #: the GPU's SM clock over the sweep (held first, throttled or not), in words; "" on the simulator
    clock_note: str = ""

    def predicted_gbps(self, warps_per_sm: float) -> float:
        """Little's law with one 128-byte load in flight per warp: SMs x warps x 128 B / latency
        (bytes per ns = GB/s), capped at the memory's bandwidth when it is known."""
        little = self.sm_count * warps_per_sm * BYTES_PER_WARP_LOAD / self.latency_ns
        return min(little, self.peak_gbps) if self.peak_gbps else little

    @property
    def warps_to_saturate(self) -> int | None:
        """Warps per SM at which the prediction reaches the memory's bandwidth (None without one)."""
        if not self.peak_gbps:
            return None
        return math.ceil(self.peak_gbps * self.latency_ns / (self.sm_count * BYTES_PER_WARP_LOAD))

    def summary_lines(self) -> list[str]:
        lines = [
            f"measured {BACKEND_WORDS[self.backend]}: {self.device_name}, {self.sm_count} SMs",
            f"one load's latency: {self.latency_ns:.0f} ns (pointer chase over {self.chase_bytes // 2**20} MiB)",
            "model: Little's law, one 128-byte load in flight per warp: SMs x warps x 128 B / latency"
            + (
                f", up to {self.peak_gbps:g} GB/s ({self.peak_basis or 'the device record'})"
                if self.peak_gbps
                else ""
            ),
            "warps/SM   measured GB/s   spread   model GB/s",
        ]
        for p in self.points:
            lines.append(
                f"{p.warps_per_sm:>8}   {p.gbps:>13.1f}   {100 * p.spread:>5.1f}%   {self.predicted_gbps(p.warps_per_sm):>10.1f}"
            )
        if self.backend == "simulator":
            lines.append("the simulator's times are the host's: these figures say nothing about a GPU")
        if self.clock_note:
            lines.append(self.clock_note)
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device_name,
            "backend": self.backend,
            "sm_count": self.sm_count,
            "latency_ns": self.latency_ns,
            "chase_bytes": self.chase_bytes,
            "stream_bytes": self.stream_bytes,
            "peak_gbps": self.peak_gbps,
            "peak_basis": self.peak_basis,
            "warps_to_saturate": self.warps_to_saturate,
            "clock_note": self.clock_note,
            "points": [
                {
                    "warps_per_sm": p.warps_per_sm,
                    "gbps": p.gbps,
                    "spread": p.spread,
                    "model_gbps": self.predicted_gbps(p.warps_per_sm),
                    "most_blocks_on_one_sm": p.most_blocks_on_one_sm,
                }
                for p in self.points
            ],
        }


# ----------------------------------------------------------------------------- in the child


def record_here(grid: list[int], block: list[int], smem: int, spin_ns: int) -> dict[str, Any]:
    """Run the spin kernel here (numba's mode as the environment set it); plain lists back."""
    from explorer.launch_runs import measured_kernels as mk

    sm, start, end, regs = mk.record_blocks(tuple(grid), tuple(block), smem, spin_ns)
    return {
        "sm": sm.tolist(),
        "start": start.tolist(),
        "end": end.tolist(),
        "regs": regs,
        "device_name": _device_name(),
        "backend": "simulator" if mk.SIMULATOR else "gpu",
        "sm_count": _sm_count(),
    }


def bandwidth_here(
    warps: list[int], stream_bytes: int, chase_bytes: int, chase_steps: int, repeats: int
) -> dict[str, Any]:
    """The pointer chase, then a streaming read at each warps-per-SM count: one block per SM (two
    past 32 warps), each block's SM recorded to see the blocks really spread."""
    from explorer.launch_runs import measured_kernels as mk

    sm_count = _sm_count()
    latency_ns, steps = mk.time_chase(chase_bytes, chase_steps)
    elements = stream_bytes // 4
    points = []
    watch = None if mk.SIMULATOR else ClockWatch(_sm_reader())  # the GPU's SM clock: held, then watched
    for w in warps:
        per_sm = 1 if w <= 32 else 2
        times, sms = mk.time_stream(elements, sm_count * per_sm, w * 32 // per_sm, repeats, watch)
        median = statistics.median(times)
        points.append(
            {
                "warps_per_sm": w,
                "gbps": stream_bytes / median / 1e9 if median > 0 else 0.0,
                "spread": (max(times) - min(times)) / median if median > 0 else 0.0,
                "most_blocks_on_one_sm": int(np.bincount(sms).max()),
            }
        )
    return {
        "latency_ns": latency_ns,
        "chase_steps": steps,
        "points": points,
        "device_name": _device_name(),
        "backend": "simulator" if mk.SIMULATOR else "gpu",
        "sm_count": sm_count,
        "clock_note": clock_words(watch),
    }


def clock_words(watch: ClockWatch | None) -> str:
    """The sweep's SM clock in a sentence: the hold, and "throttled: ..." when it fell below 75%
    of steady; "" on the simulator (no watch)."""
    if watch is None or not watch.holds:
        return ""
    return "; ".join(w for w in (watch.holds[0].words(), watch.note()) if w)


def _sm_reader() -> ReadMhz | None:  # pragma: no cover - needs a GPU
    from explorer.devices.gpu_clock import cuda_sm_reader
    from explorer.numbacuda import cuda

    return cuda_sm_reader(f"cuda:{cuda.get_current_device().id}")


def _device_name() -> str:
    from explorer.launch_runs.measured_kernels import SIMULATOR

    if SIMULATOR:
        return "numba CUDA simulator"
    from explorer.numbacuda import cuda  # pragma: no cover - needs a GPU

    name = cuda.get_current_device().name  # pragma: no cover
    return name.decode() if isinstance(name, bytes) else str(name)  # pragma: no cover


def _sm_count() -> int:
    from explorer.launch_runs.measured_kernels import SIMULATOR

    if SIMULATOR:
        return 1
    from explorer.numbacuda import cuda  # pragma: no cover - needs a GPU

    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)  # pragma: no cover


# ----------------------------------------------------------------------------- in the caller


def gpu_index(device: Device) -> int:
    """The CUDA index of ``device`` when it is a GPU CUDA can use here; else one line saying why not."""
    index = getattr(device, "index", None)
    if measurable(device):
        return int(index)  # type: ignore[arg-type]
    raise UserError(not_measurable(device, _why_no_gpu()))


def _run_agent(
    method: str,
    params: dict[str, Any],
    backend: str,
    timeout_s: float,
    on_process: Callable[[AgentProcess], None] | None = None,
) -> dict[str, Any]:
    """Ask a fresh child agent; ``on_process`` receives it first, so a window whose launch changed
    or that closes can ``cancel()`` it (the run then ends with "the measured run was stopped")."""
    from explorer.agent.child import AgentCancelled, AgentTimeout, local_agent
    from explorer.agent.protocol import AgentError

    agent = local_agent(
        env_overrides={"NUMBA_ENABLE_CUDASIM": "1" if backend == "simulator" else None},
        label="the measured run",
    )
    if on_process is not None:
        on_process(agent)
    try:
        agent.start()
        return agent.request(method, params, timeout_s=timeout_s)
    except AgentCancelled:
        raise UserError("the measured run was stopped") from None
    except AgentTimeout:
        raise UserError(f"the measured run took longer than {timeout_s:.0f} s and was stopped") from None
    except AgentError as exc:
        raise UserError(str(exc)) from None
    finally:
        agent.close()


def measure_dispatch_here(
    plan: LaunchPlan,
    device: Gpu,
    *,
    backend: str = "gpu",
    on_process: Callable[[AgentProcess], None] | None = None,
) -> MeasuredDispatch:
    """Run ``plan`` as spin blocks on ``device`` (a GPU in this machine) and compare with the model.
    Blocks until the child answers: the window calls it from a worker thread (``on_process``: see
    ``_run_agent``)."""
    check_measurable(plan)
    index = gpu_index(device) if backend == "gpu" else None
    spin = spin_for(plan)
    c = plan.config
    answer = _run_agent(
        "measured.blocks",
        {
            "grid": list(c.grid.as_tuple()),
            "block": list(c.block.as_tuple()),
            "smem": c.shared_mem_bytes,
            "spin_ns": spin,
            "device_index": index,
        },
        backend,
        timeout_s=120,
        on_process=on_process,
    )
    regs = int(answer["regs"]) or c.regs_per_thread  # the simulator reports no registers
    measured_plan = (
        plan_launch(replace(c, regs_per_thread=regs), device) if regs != c.regs_per_thread else plan
    )
    timeline = timeline_from_records(
        np.asarray(answer["sm"]),
        np.asarray(answer["start"], dtype=np.uint64),
        np.asarray(answer["end"], dtype=np.uint64),
        measured_plan.sm_count if backend == "gpu" else int(answer["sm_count"]),
        measured_plan.resident_blocks_per_sm,
    )
    return MeasuredDispatch(
        device_name=str(answer["device_name"]),
        backend=str(answer["backend"]),
        plan=measured_plan,
        spin_ns=spin,
        timeline=timeline,
        requested_regs=c.regs_per_thread,
    )


def measure_bandwidth_here(
    max_warps: int,
    device: Device | None = None,
    *,
    backend: str = "gpu",
    stream_bytes: int = STREAM_BYTES,
    chase_bytes: int = CHASE_BYTES,
    chase_steps: int = CHASE_STEPS,
    repeats: int = REPEATS,
    on_process: Callable[[AgentProcess], None] | None = None,
) -> BandwidthSweep:
    """The pointer chase and the warps-per-SM sweep on ``device`` (this machine's first GPU when None)."""
    if device is None and backend == "gpu":
        device = _first_gpu()
    index = gpu_index(device) if device is not None and backend == "gpu" else None
    slots = 64
    if device is not None:
        from explorer.devices.limits import limits_for_device

        slots = limits_for_device(device).max_warps_per_sm
    warps = [w for w in SWEEP_WARPS if w <= min(max_warps, slots)]
    answer = _run_agent(
        "measured.bandwidth",
        {
            "warps": warps,
            "stream_bytes": stream_bytes,
            "chase_bytes": chase_bytes,
            "chase_steps": chase_steps,
            "repeats": repeats,
            "device_index": index,
        },
        backend,
        timeout_s=300,
        on_process=on_process,
    )
    peak = getattr(device, "memory_bandwidth_gbps", None) if device is not None else None
    return BandwidthSweep(
        device_name=str(answer["device_name"]),
        backend=str(answer["backend"]),
        sm_count=int(answer["sm_count"]),
        latency_ns=float(answer["latency_ns"]),
        chase_bytes=chase_bytes,
        stream_bytes=stream_bytes,
        peak_gbps=float(peak) if peak and backend == "gpu" else None,
        peak_basis=str(getattr(device, "memory_bandwidth_basis", "") or "") if device is not None else "",
        points=tuple(BandwidthPoint(**p) for p in answer["points"]),
        clock_note=str(answer.get("clock_note") or "")[:300],
    )


def _first_gpu() -> Device:
    from explorer.devices.discover import discover

    found = discover(include_catalog=False, quick=True)
    gpus = [d for d in found.devices if d.kind == "cuda" and d.usable]
    if not gpus:
        raise UserError(f"--measure runs on a GPU in this machine. {found.why_no_gpu() or ''}".strip())
    return gpus[0]


def _why_no_gpu() -> str:
    """Discovery's reason there is no usable GPU here (the one the benchmarks give), or ''."""
    from explorer.devices.discover import discover

    return discover(include_catalog=False, quick=True).why_no_gpu() or ""
