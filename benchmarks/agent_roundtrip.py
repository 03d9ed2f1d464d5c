"""What the agent costs: starting one, a request's round trip, a benchmark point through it, stopping.

The figures the remote work builds on: a remote point may add under 50 ms over a local
one, so the local pipe's own share must be small. Each figure is printed with its minimum and
median over the runs (on a shared machine the minimum is the least disturbed).

1. start: from ``AgentProcess.start()`` to its hello (a fresh ``python -m explorer agent``).
2. ping: one ``ping`` request's round trip on a started agent (JSON both ways, the reader thread).
3. point: ``bench.point`` for a tiny point (``_crash_test`` size 1, a short Python sum) through
   the agent, against ``run_point`` called in this process: the difference is the protocol's share.
4. stop: ``close()`` (bye, end of stdin, group kill, reap).

    .venv/bin/python benchmarks/agent_roundtrip.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

from explorer.agent.child import local_agent
from explorer.bench.execute import run_point
from explorer.bench.runner import BenchPlan, plan_points
from explorer.bench.workloads import get_workload

# The point the benchmark runner plans, and the JSON form it sends for it.
SPEC = plan_points(BenchPlan("_crash_test", ["cpu"], sizes=[1], repeats=3))[0]
SPEC_DICT = SPEC.to_dict()


def show(name: str, seconds: list[float]) -> None:
    ms = [s * 1000 for s in seconds]
    print(f"{name:<28} min {min(ms):8.2f} ms   median {statistics.median(ms):8.2f} ms   ({len(ms)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    starts, stops, pings, remote, local = [], [], [], [], []
    spec = SPEC_DICT
    for _ in range(max(3, runs // 4)):
        agent = local_agent()
        t0 = time.perf_counter()
        agent.start()
        starts.append(time.perf_counter() - t0)
        agent.request("ping", timeout_s=30)
        t0 = time.perf_counter()
        agent.close()
        stops.append(time.perf_counter() - t0)
    with local_agent() as agent:
        agent.start()
        agent.request("bench.point", spec, timeout_s=60)  # imports and first-call costs, once
        run_point(SPEC, get_workload(SPEC.workload))
        for _ in range(runs):
            t0 = time.perf_counter()
            agent.request("ping", timeout_s=30)
            pings.append(time.perf_counter() - t0)
        for _ in range(runs):
            t0 = time.perf_counter()
            agent.request("bench.point", spec, timeout_s=60)
            remote.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            run_point(SPEC, get_workload(SPEC.workload))
            local.append(time.perf_counter() - t0)
    show("agent start (to hello)", starts)
    show("ping round trip", pings)
    show("tiny point via the agent", remote)
    show("same point in-process", local)
    show("agent stop (close)", stops)
    print(
        f"protocol's share of a point: {(statistics.median(remote) - statistics.median(local)) * 1000:.2f} ms "
        "(median via agent - median in-process)"
    )


if __name__ == "__main__":
    main()
