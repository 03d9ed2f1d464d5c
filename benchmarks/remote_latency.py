"""What reaching a GPU over ssh costs, on loopback: a remote point against a local one, and
listing a remote's devices.

Targets: a remote point adds under 50 ms over a local one (loopback), and listing a
remote's devices takes under 3 s. The remote is this machine behind a real sshd on 127.0.0.1
(the tests' fixture, ``tests/remote/servers.py``), running the installed package; so the
figures are the protocol's and ssh's share, not a network's.

1. point overhead: the same tiny benchmark point (``_crash_test`` size 1, a short Python sum)
   sent as ``bench.point`` to a started local agent and to a started remote agent, alternately;
   the difference of the medians is what the ssh hop adds per point.
2. listing: ``list_devices(remote)`` from nothing: ssh login, starting the agent there, the
   probe, the records back (what "Add remote machine..." and ``devices --host`` wait for);
   against ``discover`` in this process.

    .venv/bin/python benchmarks/remote_latency.py [--runs 20]

Needs openssh-server (``/usr/sbin/sshd``); run it from the repository root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.agent.child import local_agent
from explorer.bench.runner import BenchPlan, plan_points
from explorer.remote import list_devices, open_agent, parse_remote
from tests.remote.servers import ALIAS, LoopbackSshd, agent_python

SPEC = plan_points(BenchPlan("_crash_test", ["cpu"], sizes=[1], repeats=3))[0].to_dict()
POINT_TARGET_MS = 50.0
LISTING_TARGET_S = 3.0


def show(name: str, seconds: list[float], unit: str = "ms") -> None:
    scale = 1000 if unit == "ms" else 1
    v = [s * scale for s in seconds]
    print(
        f"{name:<34} min {min(v):8.2f} {unit}   median {statistics.median(v):8.2f} {unit}   ({len(v)} runs)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = max(3, parser.parse_args().runs)
    missing = LoopbackSshd.missing()
    if missing:
        print(f"cannot measure: {missing}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp, LoopbackSshd(Path(tmp)) as sshd:
        remote = parse_remote(ALIAS, None, agent_python(), ssh_config=sshd.config)
        local_pts, remote_pts = [], []
        with local_agent() as here:
            here.start()
            there = open_agent(remote)
            try:
                for agent in (here, there):  # imports and first-call costs, once each
                    agent.request("bench.point", SPEC, timeout_s=60)
                for _ in range(runs):
                    t0 = time.perf_counter()
                    here.request("bench.point", SPEC, timeout_s=60)
                    local_pts.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    there.request("bench.point", SPEC, timeout_s=60)
                    remote_pts.append(time.perf_counter() - t0)
            finally:
                there.close()
        listings, local_listings = [], []
        from explorer.devices.discover import discover

        for _ in range(max(3, runs // 5)):
            t0 = time.perf_counter()
            list_devices(remote)
            listings.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            discover(include_catalog=False, quick=True)
            local_listings.append(time.perf_counter() - t0)
    show("tiny point, local agent", local_pts)
    show("tiny point, remote agent (ssh)", remote_pts)
    added = (statistics.median(remote_pts) - statistics.median(local_pts)) * 1000
    ok = "meets" if added < POINT_TARGET_MS else "MISSES"
    print(
        f"ssh adds per point: {added:.2f} ms (median remote - median local; {ok} the {POINT_TARGET_MS:g} ms target)"
    )
    show("devices listed, remote (from nothing)", listings, "s")
    show("devices listed, this process", local_listings, "s")
    worst = max(listings)
    ok = "meets" if worst < LISTING_TARGET_S else "MISSES"
    print(
        f"remote listing, slowest of {len(listings)}: {worst:.2f} s ({ok} the {LISTING_TARGET_S:g} s target)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
