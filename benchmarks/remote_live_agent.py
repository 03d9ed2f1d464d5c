"""What an open window keeps on a lab's GPU server for live readings: the agent's memory there and
how long it takes to start, against the agent that lists the devices (which imports torch and numba).

Target: the live-readings agent holds under 60 MB on the server. The server is this
machine behind a real sshd on 127.0.0.1 (``tests/remote/servers.py``) with a remote Python whose
NVML sees two GPUs (``servers.fake_gpu_python``: the stand-in NVML; torch is this venv's build), so
the listing takes the path a GPU server takes (torch and numba imported to read CUDA's limits).

1. live agent: ssh login, the agent's hello, the first ``devices.live`` answer (what the window
   waits for), then its resident memory (RSS, and PSS: its share of pages it shares) after 10
   readings, read from /proc on the server side.
2. listing agent: the same after one ``devices.list``: what the window held for live readings
   before (one agent did both).

    .venv/bin/python benchmarks/remote_live_agent.py [--runs 5]

Needs openssh-server (``/usr/sbin/sshd``) and root (the loopback sshd logs in as root); run it
from the repository root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.remote import open_agent, parse_remote, read_live
from tests.remote.servers import ALIAS, LoopbackSshd, fake_gpu_python

TARGET_MB = 60.0


def remote_agent(sshd: LoopbackSshd) -> psutil.Process:
    """The agent process under the test sshd (the server side of the one open connection)."""
    for proc in psutil.Process(sshd.proc.pid).children(recursive=True):
        if proc.cmdline()[-3:] == ["-m", "explorer", "agent"]:
            return proc
    raise RuntimeError("no agent runs under the sshd")


def memory_mb(proc: psutil.Process) -> tuple[float, float]:
    info = proc.memory_full_info()
    return info.rss / 1e6, info.pss / 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = max(1, parser.parse_args().runs)
    missing = LoopbackSshd.missing()
    if missing:
        print(f"cannot measure: {missing}", file=sys.stderr)
        return 1
    live_start, live_mem, list_start, list_mem = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp, LoopbackSshd(Path(tmp) / "sshd") as sshd:
        remote = parse_remote(ALIAS, None, fake_gpu_python(Path(tmp)), ssh_config=sshd.config)
        for _ in range(runs):
            t0 = time.perf_counter()
            agent = open_agent(remote)
            try:
                read_live(agent, [0, 1])
                live_start.append(time.perf_counter() - t0)
                for _ in range(10):
                    read_live(agent, [0, 1])
                live_mem.append(memory_mb(remote_agent(sshd)))
            finally:
                agent.close()
            t0 = time.perf_counter()
            agent = open_agent(remote)
            try:
                agent.request("devices.list", {}, timeout_s=120)
                list_start.append(time.perf_counter() - t0)
                list_mem.append(memory_mb(remote_agent(sshd)))
            finally:
                agent.close()
    print(f"over a real sshd on loopback, {runs} run(s) each; NVML: the tests' stand-in (2 GPUs)")
    rss = [m[0] for m in live_mem]
    pss = [m[1] for m in live_mem]
    print(
        f"live-readings agent: first reading {statistics.median(live_start) * 1000:.0f} ms after ssh starts "
        f"(median; min {min(live_start) * 1000:.0f} ms); memory on the server RSS {max(rss):.1f} MB, "
        f"PSS {max(pss):.1f} MB (largest of the runs)"
    )
    print(
        f"listing agent (torch, numba): listed {statistics.median(list_start):.2f} s after ssh starts (median); "
        f"RSS {max(m[0] for m in list_mem):.1f} MB, PSS {max(m[1] for m in list_mem):.1f} MB"
    )
    ok = "meets" if max(rss) < TARGET_MB else "MISSES"
    print(f"the live-readings agent {ok} the {TARGET_MB:g} MB target (RSS, the larger figure)")
    return 0 if max(rss) < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
