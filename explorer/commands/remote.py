"""``--host DEST [--via PREFIX] [--remote-python PATH]`` on ``devices``, ``bench`` and ``self-test``.

The request is checked here before anything runs (the fuzz test drives ``parse_host``); the work
is ``explorer.remote``'s: the same agent, over ssh, asked by each command's own module (``devices
--host`` in ``commands.devices``, ``self-test --host`` in ``commands.selftest``). A remote that
cannot be reached exits with status 1 and one line in words (``RemoteUnreachable``); bad input
exits 2 as everywhere else.
"""

from __future__ import annotations

from argparse import Namespace

from explorer.errors import UserError
from explorer.remote.target import Remote, parse_remote


class RemoteUnreachable(UserError):
    """The remote could not be used (ssh, the agent there, Slurm): one line, exit status 1."""

    exit_code = 1


def parse_host(args: Namespace) -> Remote | None:
    """The checked ``Remote`` named by ``--host`` (None without it); UserError for bad input."""
    host = getattr(args, "host", None)
    if host is None:
        for option, value in (
            ("--via", getattr(args, "via", None)),
            ("--remote-python", getattr(args, "remote_python", None)),
        ):
            if value is not None:
                raise UserError(f"{option} {value!r:.60} needs --host (the machine to run it on)")
        return None
    return parse_remote(host, getattr(args, "via", None), getattr(args, "remote_python", None))


def run_launcher_guard(args: Namespace) -> int:
    """The hidden ``launcher-guard`` sub-command (``explorer.remote.jobguard``), with the admin's
    ``heartbeat_s`` from the GPU queue's policy file: how long the guard waits for a word from a
    client that went silent before it cancels the job."""
    from explorer.gpuqueue.tickets import queue_dir, read_policy
    from explorer.remote.jobguard import run_launcher_guard as guard

    args.heartbeat_s = read_policy(queue_dir()).heartbeat_s
    return guard(args)
