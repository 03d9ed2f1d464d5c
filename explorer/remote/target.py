"""A remote machine as the user names it, checked, and the ``ssh`` argument list that reaches it.

Why the system's ``ssh``: the user's ``~/.ssh/config`` aliases, keys, agent, jump hosts and
``known_hosts`` all work without this app knowing about them, and the app never sees a password
(``BatchMode=yes``: ssh fails instead of asking). Why so strict about the destination: ssh reads
an argument that starts with ``-`` as an option, and ``-oProxyCommand=...`` runs a local command;
a destination is therefore checked against the shapes people write (``gpu-lab``,
``alice@gpu.example.edu``, ``host:2222``, ``[fe80::1]:22``) and also passed after ``--``.

The remote command is built as an argument list (``[PREFIX...] PYTHON -m explorer agent``) and
quoted with ``shlex.join`` for the remote login shell: user text is never pasted into a shell
string. A remote Python written ``~/dx/bin/python`` keeps its ``~/`` unquoted so the remote shell
expands it; the rest is quoted.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from explorer.errors import UserError

#: ssh's ConnectTimeout: an unreachable host is reported after this many seconds.
CONNECT_TIMEOUT_S = 10
#: ssh sends a keep-alive every ServerAliveInterval seconds and gives up after ServerAliveCountMax
#: unanswered ones, so a connection that silently died is noticed within about 15 s mid-run.
SERVER_ALIVE_INTERVAL_S = 5
SERVER_ALIVE_COUNT_MAX = 3
#: From running ssh to the agent's hello: connect + login + starting Python there.
HELLO_TIMEOUT_S = 60.0
#: With a launcher prefix (srun) the job may queue first: this long before the run is given up on.
HELLO_TIMEOUT_PREFIX_S = 300.0
DEFAULT_PYTHON = "python3"
#: A lab's own ssh config file, used instead of ~/.ssh/config (``ssh -F``); tests use it too.
SSH_CONFIG_ENV = "DEVICE_EXPLORER_SSH_CONFIG"

_USER = r"[A-Za-z0-9_.+][A-Za-z0-9_.+-]*"
_HOST = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_IPV6 = r"\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?\]"
_DEST = re.compile(rf"^(?:(?P<user>{_USER})@)?(?P<host>{_HOST}|{_IPV6})(?::(?P<port>[0-9]{{1,5}}))?$")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class Remote:
    """A machine reached over ssh, optionally through a launcher (a cluster's ``srun ...``).

    ``destination`` is as the user wrote it (already checked: make one with ``parse_remote``);
    ``prefix`` is the launcher split into arguments; ``python`` the remote interpreter that has
    the package (``python3``, or a venv's ``~/dx/bin/python``); ``ssh_config`` an ssh config
    file to use instead of the user's (``ssh -F``), None for the user's own.
    """

    destination: str
    prefix: tuple[str, ...] = ()
    python: str = DEFAULT_PYTHON
    ssh_config: Path | None = None
    ssh_program: str = "ssh"
    extra_ssh_options: tuple[str, ...] = field(default=())

    @property
    def host(self) -> str:
        """The host part, for labels ("ON gpu-lab") and the ``host`` of JSON points."""
        return split_destination(self.destination)[1]

    @property
    def label(self) -> str:
        """How the remote is named to the user: the destination, with the launcher when there is one."""
        return self.destination + (f" via {shlex.join(self.prefix)}" if self.prefix else "")

    @property
    def hello_timeout_s(self) -> float:
        return HELLO_TIMEOUT_PREFIX_S if self.prefix else HELLO_TIMEOUT_S

    def remote_command(self, job_name: str | None = None) -> list[str]:
        """The command the remote runs, as arguments: ``PYTHON -m explorer agent``, or with a
        launcher ``PYTHON -m explorer launcher-guard [--job-name NAME] -- PREFIX... PYTHON -m
        explorer agent``: the guard on the login node reports the job's state while it waits and
        cancels it when the client goes (``explorer.remote.jobguard``)."""
        agent = [self.python, "-m", "explorer", "agent"]
        if not self.prefix:
            return agent
        guard = [self.python, "-m", "explorer", "launcher-guard"]
        if job_name:
            guard += ["--job-name", job_name]
        return [*guard, "--", *self.prefix, *agent]

    def remote_command_line(self, job_name: str | None = None) -> str:
        """``remote_command`` quoted for the remote login shell (what ssh hands it); the Python's
        leading ``~/`` is left for that shell to expand."""
        if self.python.startswith("~/"):
            python = "~/" + shlex.quote(self.python[2:])
        else:
            python = shlex.quote(self.python)
        agent = [python, "-m", "explorer", "agent"]
        if not self.prefix:
            return " ".join(agent)
        guard = [python, "-m", "explorer", "launcher-guard"]
        if job_name:
            guard += ["--job-name", shlex.quote(job_name)]
        return " ".join([*guard, "--", *(shlex.quote(a) for a in self.prefix), *agent])

    def ssh_argv(self, job_name: str | None = None) -> list[str]:
        """The whole local command: ``ssh [options] -- DEST 'REMOTE COMMAND'`` as a list."""
        user, host, port = split_destination(self.destination)
        argv = [self.ssh_program]
        if self.ssh_config is not None:
            argv += ["-F", str(self.ssh_config)]
        argv += [
            "-T",  # no terminal: the pipe carries JSON lines, and a tty would echo and mangle them
            "-o",
            "BatchMode=yes",  # never ask for a password or a passphrase: fail in words instead
            "-o",
            f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o",
            f"ServerAliveInterval={SERVER_ALIVE_INTERVAL_S}",
            "-o",
            f"ServerAliveCountMax={SERVER_ALIVE_COUNT_MAX}",
            "-o",
            "ForwardAgent=no",
            "-o",
            "ForwardX11=no",
            "-o",
            "LogLevel=ERROR",  # warnings (e.g. "Permanently added") would crowd the error's one line
        ]
        argv += list(self.extra_ssh_options)
        if port is not None:
            argv += ["-p", str(port)]
        target = f"{user}@{host}" if user else host
        if target.startswith("[") and target.endswith("]"):
            target = target[1:-1]
        elif "@[" in target:
            target = target.replace("@[", "@").rstrip("]")
        argv += ["--", target, self.remote_command_line(job_name)]
        return argv


def split_destination(text: str) -> tuple[str | None, str, int | None]:
    """(user, host, port) of a checked destination."""
    match = _DEST.match(text)
    if match is None:
        raise UserError(destination_problem(text) or f"not an ssh destination: {text!r}")
    port = match.group("port")
    return match.group("user"), match.group("host"), int(port) if port else None


def destination_problem(text: str) -> str | None:
    """Why ``text`` is refused as an ssh destination (one line), None when it is fine."""
    shown = repr(text if len(text) <= 60 else text[:60] + "...")
    if not text:
        return (
            "the remote machine is empty; write an ssh destination such as gpu-lab or alice@gpu.example.edu"
        )
    if text.startswith("-"):
        return (
            f"remote machine {shown} starts with '-', which ssh would read as an option; "
            "write a host name such as gpu-lab or alice@gpu.example.edu"
        )
    if _CONTROL.search(text):
        return (
            f"remote machine {shown} holds a space or a control character; write a host name such as gpu-lab"
        )
    match = _DEST.match(text)
    if match is None:
        return (
            f"remote machine {shown} is not an ssh destination; write HOST, USER@HOST or HOST:PORT "
            "(letters, digits, '.', '-', '_'; an ssh config alias works too)"
        )
    port = match.group("port")
    if port is not None and not 1 <= int(port) <= 65535:
        return f"remote machine {shown} has port {int(port)}; a port is 1 to 65535"
    return None


def parse_prefix(text: str | None) -> tuple[str, ...]:
    """A launcher prefix (``srun --gres=gpu:1 --time=10``) split as a shell would, never run by one."""
    if text is None or not text.strip():
        return ()
    if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", text):
        raise UserError(f"the launcher {text[:60]!r} holds a control character; write it on one line")
    try:
        parts = tuple(shlex.split(text))
    except ValueError as exc:
        raise UserError(f"the launcher {text[:60]!r} cannot be split into arguments ({exc})") from None
    if parts and parts[0].startswith("-"):
        raise UserError(
            f"the launcher {text[:60]!r} starts with an option; it must start with a program (srun)"
        )
    return parts


def parse_python(text: str | None) -> str:
    """The remote Python: a program name or path (``python3``, ``~/dx/bin/python``)."""
    value = DEFAULT_PYTHON if text is None or not text.strip() else text.strip()
    if re.search(r"[\x00-\x1f\x7f]", value) or value.startswith("-"):
        raise UserError(
            f"the remote Python {value[:60]!r} must be one program or path (one line, not starting "
            "with '-'), e.g. python3 or ~/dx/bin/python"
        )
    return value


def parse_remote(
    destination: str,
    prefix: str | None = None,
    python: str | None = None,
    *,
    ssh_config: str | os.PathLike[str] | None = None,
) -> Remote:
    """A checked ``Remote``; UserError with one line naming what is wrong otherwise.

    ``ssh_config`` None takes ``$DEVICE_EXPLORER_SSH_CONFIG`` when set (a lab's config file).
    """
    problem = destination_problem(destination)
    if problem:
        raise UserError(problem)
    if ssh_config is None:
        ssh_config = os.environ.get(SSH_CONFIG_ENV) or None
    config = Path(ssh_config) if ssh_config else None
    if config is not None and (not config.exists() or config.is_dir()):
        raise UserError(f"the ssh config file {str(config)!r} does not exist")
    return Remote(destination, parse_prefix(prefix), parse_python(python), config)
