"""Remote machines: the agent (``explorer.agent``) on a lab's GPU server over ssh, or inside a
cluster's job through a launcher prefix (``srun ...``). Qt-free; the CLI and the window use it.

The API (what the CLI and the Devices panel call):

``parse_remote(destination, prefix=None, python=None) -> Remote``
    Check what the user typed (``gpu-lab``, ``alice@gpu.example.edu``, ``host:2222``, an ssh
    config alias; a launcher such as ``srun --gres=gpu:1 --time=10``; the remote Python, default
    ``python3``). ``UserError`` with one line for a destination ssh would read as an option
    (``-oProxyCommand=...``), spaces or control characters, a bad port. ``Remote.label`` names
    it for people; ``Remote.host`` is the host part ("ON gpu-lab"); ``Remote.remote_command()``
    is the argument list to show the user before first use.
``open_agent(remote) -> RemoteAgentProcess``
    A started, version-checked agent there (an ``AgentProcess``: ``request``, ``cancel``,
    ``close``). Every failure is an ``AgentError`` whose ``str()`` is one line in words.
``list_devices(remote, catalog=False, agent=None) -> RemoteDevices``
    The remote's ``Discovery`` (the same Device records as a local probe), its host name and
    its "why no GPU" words.
``read_live(agent, nvml_indices) -> list[LiveReading]``
    A cheap live sample of remote GPUs from an open agent (poll it every second or so).
``BenchPlan(remote=...)`` (``explorer.bench.runner``)
    Runs a benchmark plan on the remote, one point at a time over the same pipe; a dropped
    connection becomes an error row and the next point reconnects; every point carries the
    remote's ``host``. Each point on ``cuda:N`` first takes (or keeps) that GPU's turn on the
    machine (``explorer.gpuqueue.share``); while another run holds it, ``BenchRun.on_waiting``
    gets a ``QueueWait`` about once a second ("waiting for cuda:0: bob has held it since 14:02:11
    (matmul, 3 min 5 s); you are next (waited 12 s)"), and with a launcher a ``JobState`` each
    time Slurm changes the job's state or reason (from the thread iterating ``events()``). A job
    Slurm ends (its time limit, a cancel) is named and not started again (``JobEnded``). A point
    measured while NVML listed another process on the GPU comes back ``noisy`` with it named.
``RemoteAgentProcess(remote, on_job=...).start(hello_timeout_s=...)``
    The agent without ``open_agent``'s defaults; with a launcher it runs behind the launcher
    guard (``jobguard``: the job's state while it waits, ``scancel`` when the client goes);
    ``request("ping")`` answers ``slurm_job`` (the Slurm job it runs in, or None).

Timeouts (seconds; ``explorer.remote.target``, ``session``, ``explorer.bench.runner``): connect
10 (ssh ConnectTimeout), first answer 60 or 300 with a launcher (a queued job; it is named when
given up on and cancelled; a reason Slurm never clears ends the wait at once), a dead link
noticed within 15 (keep-alives), a benchmark point its budget plus 90, at most 120 (the plan's
``point_timeout_s``), a device listing 90, a live reading 10, waiting for a GPU's turn 3600 (60
without a word). The other way, the client beats every 2 s (``explorer.agent.child``): an agent,
or a launcher guard, that hears nothing for the admin's ``heartbeat_s`` (20) ends, and the guard
cancels its job, so a frozen laptop lets go of its GPU and its job.

Identity: the agent's hello carries its version and build (``explorer.agent.build``: a hash of
the package's sources) and how it was started; another version or build, or an agent that came
without the launcher guard a ``--via`` asked for (an account's ForceCommand), is refused in one
line (``AgentMismatch``).

Modules: ``target`` (the Remote record, checks, the ssh argv, timeouts), ``faults`` (ssh/Slurm
stderr -> one line; only lines that are reasons are ever quoted), ``records`` (Device records
rebuilt from the remote's JSON, checked), ``session`` (the remote agent process, listing, live
readings), ``slurm`` (a job's state and reason in words), ``jobguard`` (the launcher guard that
runs on a cluster's login node).
"""

from explorer.remote.session import (
    RemoteAgentProcess,
    RemoteDevices,
    RemoteGone,
    RemoteTimeout,
    list_devices,
    open_agent,
    read_live,
)
from explorer.remote.target import Remote, destination_problem, parse_remote

__all__ = [
    "Remote",
    "RemoteAgentProcess",
    "RemoteDevices",
    "RemoteGone",
    "RemoteTimeout",
    "destination_problem",
    "list_devices",
    "open_agent",
    "parse_remote",
    "read_live",
]
