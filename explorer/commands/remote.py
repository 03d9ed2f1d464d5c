"""``--host DEST [--via PREFIX] [--remote-python PATH]`` on ``devices``, ``bench`` and ``self-test``.

The request is checked here before anything runs (the fuzz test drives ``parse_host``); the work
is ``explorer.remote``'s: the same agent, over ssh. A remote that cannot be reached exits with
status 1 and one line in words (``RemoteUnreachable``); bad input exits 2 as everywhere else.
"""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

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


def run_remote_devices(args: Namespace, remote: Remote) -> int:
    """``devices --host``: the remote's devices, each marked with the machine it is on."""
    from explorer.agent.protocol import AgentError
    from explorer.commands.devices import filtered, format_live, format_table
    from explorer.remote.session import list_devices

    include_catalog = bool(getattr(args, "catalog", False))
    if getattr(args, "measure", False):
        raise UserError(
            "--measure runs on this machine only; measure on the remote with its own devices --measure"
        )
    try:
        found = list_devices(remote, catalog=include_catalog)
    except AgentError as exc:
        raise RemoteUnreachable(str(exc)) from None
    discovery = filtered(found.discovery, include_catalog)
    if getattr(args, "json", False):
        print(json.dumps(found.to_dict(discovery), indent=2))
        return 0
    print(f"Devices ON {remote.host} ({found.hostname}; listed in {found.seconds:.1f} s):")
    print(format_table(discovery))
    if found.why_no_gpu:
        print()
        print(found.why_no_gpu)
    for d in discovery.installed_gpus:
        if d.live is not None:
            print(f"  {d.key} now: {format_live(d)}")
    return 0


def run_remote_self_test(args: Namespace, remote: Remote) -> int:
    """``self-test --host``: the self-test's checks run by the agent there as on a GPU server (the
    window check excepted: it needs no display; a GPU its torch cannot use fails; its GPU queue is
    checked), each line shown as it comes."""
    from explorer.agent.protocol import AgentError
    from explorer.remote.session import open_agent

    as_json = bool(getattr(args, "json", False))
    if not as_json:
        print(f"self-test on {remote.label}:", flush=True)

    def show(data: dict[str, Any]) -> None:
        line = data.get("line")
        if not as_json and isinstance(line, str):
            print(line[:500], flush=True)

    try:
        with open_agent(remote) as agent:
            answer = agent.request(
                "selftest.run", {"skip": ["window"], "server": True}, timeout_s=600, on_event=show
            )
    except AgentError as exc:
        raise RemoteUnreachable(str(exc)) from None
    checks = answer.get("checks")
    if not isinstance(checks, list):
        raise RemoteUnreachable(f"the agent on {remote.host} sent no self-test checks")
    failed = [c for c in checks if not isinstance(c, dict) or c.get("status") == "fail"]
    if as_json:
        print(json.dumps({"host": remote.host, "ok": not failed, "checks": checks}, indent=2))
    else:
        verdict = "all checks passed" if not failed else f"{len(failed)} check(s) FAILED"
        print(f"self-test on {remote.host}: {verdict}")
    return 1 if failed else 0
