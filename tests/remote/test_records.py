"""What a remote sends is rebuilt into the same records, checked; ssh/Slurm stderr becomes one line."""

from __future__ import annotations

import pytest

from explorer.agent.protocol import ProtocolError
from explorer.devices.live import GpuProcess, LiveReading
from explorer.devices.model import CudaGpu, CudaLimits
from explorer.remote.faults import explain, slurm_queued
from explorer.remote.records import device_from_dict, discovery_from_dict, live_from_dict
from explorer.remote.target import parse_remote


def _gpu() -> CudaGpu:
    live = LiveReading(
        timestamp_s=5.0, utilization_gpu_pct=40.0, memory_used_bytes=1 << 30, temperature_c=61.0
    )
    live.unavailable.mark("power_draw_w", "not supported by this GPU")
    gpu = CudaGpu(
        name="NVIDIA GeForce GTX 1650",
        key="cuda:0",
        index=0,
        compute_capability=(7, 5),
        sm_count=14,
        memory_total_bytes=4 << 30,
        limits=CudaLimits(max_threads_per_block=1024, max_block_dim=(1024, 1024, 64), warp_size=32),
        live=live,
        processes=[GpuProcess(pid=7, name="python", used_memory_bytes=1 << 20)],
    )
    gpu.mark_unavailable("pcie_generation", "NVML: not supported")
    return gpu


def test_a_gpu_record_comes_back_whole():
    gpu = _gpu()
    back = device_from_dict(gpu.to_dict())
    assert isinstance(back, CudaGpu)
    assert back.to_dict() == gpu.to_dict()
    assert (
        back.compute_capability == (7, 5)
        and back.limits is not None
        and back.limits.max_block_dim == (1024, 1024, 64)
    )
    assert back.reason("pcie_generation") == "NVML: not supported"
    assert back.live is not None and back.live.unavailable["power_draw_w"] == "not supported by this GPU"


def test_wrong_types_are_dropped_with_a_reason_never_trusted():
    data = _gpu().to_dict()
    data.update(sm_count="14; rm -rf /", memory_total_bytes=float("nan"), name="x" * 10_000, bogus_key=1)
    back = device_from_dict(data)
    assert (
        back.sm_count is None and back.reason("sm_count") == "the remote sent a value that is not valid here"
    )
    assert back.memory_total_bytes is None
    assert len(back.name) <= 2000


@pytest.mark.parametrize("bad", [None, [], {"kind": "quantum"}, {"kind": "cuda"}, "cuda"])
def test_what_is_not_a_device_is_a_protocol_error(bad):
    with pytest.raises(ProtocolError):
        device_from_dict(bad)


def test_discovery_and_live_readings():
    disc = discovery_from_dict(
        {"devices": [_gpu().to_dict()], "probes": [{"probe": "nvml", "ok": True, "message": ""}]}
    )
    assert [d.key for d in disc.devices] == ["cuda:0"] and disc.reports[0].ok
    reading = live_from_dict(_gpu().live.to_dict())  # type: ignore[union-attr]
    assert reading.utilization_gpu_pct == 40.0
    with pytest.raises(ProtocolError):
        discovery_from_dict({"devices": "all of them"})


REMOTE = parse_remote("gpu-lab", "srun --gres=gpu:1")


@pytest.mark.parametrize(
    "stderr, code, words",
    [
        ("ssh: Could not resolve hostname gpu-lab: Name or service not known\n", 255, "does not resolve"),
        ("ssh: connect to host gpu-lab port 22: Connection refused\n", 255, "refused the connection"),
        ("ssh: connect to host gpu-lab port 22: Connection timed out\n", 255, "did not answer within 10 s"),
        ("ssh: connect to host 10.1.1.1 port 22: No route to host\n", 255, "cannot be reached"),
        ("alice@gpu-lab: Permission denied (publickey,password).\n", 255, "this app never asks for a password"),
        ("Host key verification failed.\n", 255, "host key is not known here"),
        ("@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.\n", 255, "host key has CHANGED"),
        ("Connection to gpu-lab closed by remote host.\n", 255, "the connection to gpu-lab dropped"),
        ("Timeout, server gpu-lab not responding.\n", 255, "dropped"),
        ("", 255, "was killed, or its connection closed"),
        ("srun: error: Unable to allocate resources: Requested time limit is invalid (missing or exceeds some limit)\n", 1,
         "Slurm refused the job: Requested time limit is invalid"),
        ("srun: error: Unable to allocate resources: Invalid partition name specified\n", 1, "Slurm refused the job: Invalid partition"),
        ("bash: line 1: srun: command not found\n", 127, "has no launcher 'srun'"),
        ("/usr/bin/python3: Error while finding module specification for 'explorer.__main__' (ModuleNotFoundError: No module named 'explorer')\n", 1,
         "has no device-explorer for python3"),
    ],
)  # fmt: skip
def test_ssh_and_slurm_errors_become_one_line(stderr, code, words):
    line = explain(REMOTE, stderr, code, starting=False)
    assert words in line and "\n" not in line and "gpu-lab" in line


TORCH_WARNING = "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"


@pytest.mark.parametrize(
    "stderr, code, words",
    [
        (TORCH_WARNING, 255, "the agent on gpu-lab was killed, or its connection closed without a word"),
        (TORCH_WARNING, 1, "the agent on gpu-lab ended with code 1"),
        ("x.py:3: UserWarning: connection refused by the license server\n", 255,
         "the agent on gpu-lab was killed, or its connection closed without a word"),
        (TORCH_WARNING + "Traceback (most recent call last):\n  File \"x\"\nMemoryError\n", 1,
         "the agent on gpu-lab ended with code 1: MemoryError"),
        (TORCH_WARNING + "device-explorer agent: OSError: disk full\n", 1,
         "the agent on gpu-lab ended with code 1: device-explorer agent: OSError: disk full"),
    ],
)  # fmt: skip
def test_a_remote_programs_warning_is_never_the_reason(stderr, code, words):
    """What the remote program writes to stderr is quoted only when it is a reason (ssh's error,
    Python's last line, the agent's own words): torch's CUDA warning, written by every import of
    a CUDA build of torch on a machine without the toolkit, is not why the agent ended."""
    assert explain(REMOTE, stderr, code, starting=False) == words


def test_a_queued_job_is_named():
    text = "srun: job 41 queued and waiting for resources\nsrun: job 42 queued and waiting for resources\n"
    assert slurm_queued(text) == "Slurm job 42 is queued and waiting for resources"
    assert slurm_queued("srun: job 41 has been allocated resources\n") is None
