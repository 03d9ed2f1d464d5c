"""What went wrong on the way to a remote agent, in one line of words.

ssh, the remote shell and Slurm's ``srun`` each say what failed on stderr, in their own terms and
often over several lines (a changed host key is a 20-line banner). ``explain`` reads that text and
the exit status and returns one sentence naming the machine and what to do: the user sees
"gpu-lab refused the login (permission denied) ...", never a traceback or a wall of ssh output.

The patterns are OpenSSH's and Slurm's own messages (OpenSSH 8-9, Slurm 20-23); text nothing here
recognises is quoted (its last line) rather than guessed at.
"""

from __future__ import annotations

import re

from explorer.agent.protocol import PACKAGE
from explorer.remote.target import CONNECT_TIMEOUT_S, Remote, split_destination

#: ssh's own exit status for its own errors (connection, authentication, host key, lost link);
#: anything else is the remote command's status.
SSH_FAILED = 255
COMMAND_NOT_FOUND = 127

_NO_PACKAGE = re.compile(r"No module named '?explorer'?|No module named explorer\b")


#: The shapes of what ssh itself writes (OpenSSH 8-9 at LogLevel=ERROR), what Python writes when it
#: cannot run the agent, the agent's own last words and a shell's "not found": only such lines are
#: ever quoted as a reason. Anything else on the remote's stderr (a library's warning such as
#: torch's "No CUDA runtime is found, using CUDA_HOME=...", a login script's chatter) is noise: it
#: never becomes the reason the user is shown.
_SSH_SAID = re.compile(
    r"^(ssh: |ssh_|kex_|client_loop: |Host key |Connection (closed|reset|to |timed out)|Timeout, server "
    r"|Received disconnect|Disconnected from|Unable to negotiate|Bad owner|Can't open user config"
    r"|Load key|banner exchange|@+|Permission denied|Too many authentication|No matching"
    r"|[^\s:@]+@[^\s:]+: Permission denied|Warning: Permanently|Bad configuration option"
    r"|[^\s:]+: line \d+: Bad configuration)"
)
_PROGRAM_SAID = re.compile(
    r"^(device-explorer agent: .+"  # the agent's own last words (explorer.agent.serve.run_agent)
    r"|(\S+: )?(line \d+: )?\S+: (command )?not found"  # a shell that has no such program
    r"|\S*python[\d.]*: .+"  # the interpreter itself: "python3: No module named explorer"
    r"|srun: error: .+|slurmstepd: error: .+"  # Slurm's own verdicts
    r"|([A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(Error|Exception|Exit|Interrupt)(: .*)?)$"  # Python's last line
)


def ssh_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` that ssh itself wrote (its errors, never the remote program's)."""
    return [ln for ln in _lines(stderr) if _SSH_SAID.match(ln)]


def reason_line(stderr: str) -> str:
    """The last line of ``stderr`` that says why something ended (ssh's error, the interpreter's,
    the agent's own, a shell's, Slurm's), "" when there is none: a warning is never a reason."""
    for line in reversed(_lines(stderr)):
        if (_SSH_SAID.match(line) or _PROGRAM_SAID.match(line)) and "Warning" not in line:
            return line[:300]
    return ""


def _lines(stderr: str) -> list[str]:
    return [ln.strip() for ln in stderr.splitlines() if ln.strip()]


def install_hint(remote: Remote, version: str) -> str:
    """The command that puts this app's version on the remote, for the user to run there."""
    return f"on {remote.host}: {remote.python} -m pip install {PACKAGE}=={version}"


def version_mismatch(remote: Remote, theirs: str, their_build: str = "") -> str:
    """Why an agent of another version (or another build of the same version: another commit, a
    changed checkout) is refused, and the two ways out: match the server here, or have whoever
    keeps the server's Python (a lab's shared venv is the admin's) install this one."""
    from explorer.agent.build import build_id
    from explorer.frozen import is_frozen

    ours = build_id()
    if theirs == _version() and (not their_build or not ours or their_build == ours):
        # the same version string, yet refused: another protocol, a build from before builds were
        # named (an older commit of this version)
        their_build = ""
    if theirs == _version():
        their_words = f"build {their_build}" if their_build else "from another commit (it names no build)"
        here = (
            "use a bundle made from the same source here"
            if is_frozen()
            else "install the server's build here (the same release or commit)"
        )
        return (
            f"{remote.host} runs {PACKAGE} {theirs} {their_words} and this app is {_version()} "
            f"build {ours or 'unknown'}: the two must be the same build (the same release or commit, unchanged). "
            f"Either {here}, or ask whoever keeps {remote.python} on {remote.host} (a lab's shared venv "
            f"is its admin's) to install this app's build there"
        )
    here = (
        f"use the {theirs} bundle here"
        if is_frozen()
        else f"install the server's version here (pip install {PACKAGE}=={theirs})"
    )
    return (
        f"{remote.host} runs {PACKAGE} {theirs} and this app is {_version()}: the two must be the same "
        f"version. Either {here}, or ask whoever keeps {remote.python} on {remote.host} (a lab's shared "
        f"venv is its admin's) to install this one there ({remote.python} -m pip install {PACKAGE}=={_version()})"
    )


def launcher_ignored(remote: Remote, started: dict[str, object]) -> str:
    """Why an agent that was asked for through a launcher (``--via``) and came without its guard
    is refused: the account runs something else, mostly an sshd ``ForceCommand``, so the agent
    runs on the login node, not in a job."""
    argv = started.get("argv")
    how = ""
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        how = " (" + " ".join(a[:80] for a in argv[:6]) + ")"
    if started.get("forced") is True:
        why = f"this account's ForceCommand on {remote.host} runs the agent itself{how}"
    else:
        why = f"{remote.host} started the agent without the launcher{how}"
    return (
        f"--via {' '.join(remote.prefix)[:80]!r} cannot be used here: {why}, so it would run on the "
        f"login node instead of in a job; leave --via out, or use an account without a ForceCommand"
    )


#: what a POSIX shell says, exiting 126, when a program is there but cannot be run
_CANNOT_RUN = re.compile(r"(?:^|: )(?P<path>[^\s:]+): (?P<why>Permission denied|cannot execute.*)$")
COMMAND_NOT_EXECUTABLE = 126


def cannot_run(remote: Remote, stderr: str) -> str | None:
    """ "gpu-lab cannot run /opt/dx/bin/python (Permission denied: ...)" from a shell's 126."""
    for line in reversed(_lines(stderr)):
        m = _CANNOT_RUN.search(line)
        if m:
            path, why = m.group("path"), m.group("why")
            python = "python" in path.rsplit("/", 1)[-1]
            advice = (
                "the venv must be made from a Python every account can run (not one under a private "
                "home); ask whoever keeps it"
                if python
                else "check the launcher prefix"
            )
            return f"{remote.host} cannot run {path} ({why}: {path}): {advice}"
    return None


def ssh_command(remote: Remote) -> str:
    """How the user reaches the remote in a terminal (``ssh -p 2222 alice@host``)."""
    user, host, port = split_destination(remote.destination)
    target = f"{user}@{host}" if user else host
    return "ssh " + (f"-p {port} " if port else "") + target


def slurm_problem(stderr: str) -> str | None:
    """Slurm's refusal in words, or None when srun said nothing about the job.

    srun often writes the detail first ("invalid partition specified: x") and the verdict last
    ("Unable to allocate resources: Invalid partition name specified"): the verdict is preferred,
    with the detail when it adds something."""
    errors = [
        m.group(1).strip()
        for m in (re.search(r"srun: error: (.+)", ln.strip()) for ln in stderr.splitlines())
        if m and "Terminating" not in m.group(1)
    ]
    for i, error in enumerate(errors):
        m = re.match(r"(?:Unable to allocate resources|Job submit/allocate failed): (.+)", error)
        if m:
            detail = next((e for e in errors[:i] if ":" in e), None)
            return f"Slurm refused the job: {m.group(1).strip()}" + (f" ({detail})" if detail else "")
    return f"Slurm: {errors[0]}" if errors else None


def launcher_name(remote: Remote) -> str:
    """The launcher program of the prefix (``srun``), past an ``env VAR=...`` in front of it."""
    for part in remote.prefix:
        if part == "env" or part.endswith("/env") or "=" in part:
            continue
        return part
    return remote.prefix[0] if remote.prefix else "srun"


def slurm_queued(stderr: str) -> str | None:
    """ "job 12 is queued and waiting for resources" while srun waits, else None."""
    jobs = re.findall(r"srun: job (\d+) queued and waiting for resources", stderr)
    if not jobs:
        return None
    return f"Slurm job {jobs[-1]} is queued and waiting for resources"


def explain(remote: Remote, stderr: str, code: int | None, *, starting: bool) -> str:
    """One line: why the agent on ``remote`` could not be reached or stopped answering.

    ``code`` is ssh's exit status (None: it was stopped from here); ``starting``: no hello yet.
    """
    host = remote.host
    text = stderr or ""
    # what ssh said, never the remote program: a warning on the agent's stderr that happens to
    # say "connection refused" is not a refused connection
    low = "\n".join(ssh_lines(text)).lower()
    if "remote host identification has changed" in low or "host key for" in low and "has changed" in low:
        return (
            f"{host}'s host key has CHANGED since it was last trusted, so ssh refused to connect "
            "(the server was reinstalled, or someone is in between): ask the lab which key is right, "
            "then fix your known_hosts (ssh-keygen -R HOST)"
        )
    if "host key verification failed" in low or "no matching host key" in low:
        return (
            f"{host}'s host key is not known here, so ssh refused to connect: run '{ssh_command(remote)}' "
            "once in a terminal, check the fingerprint with the lab, and accept it"
        )
    if "could not resolve hostname" in low or "name or service not known" in low:
        return f"cannot find the machine {host}: its name does not resolve (check the spelling or your ssh config)"
    if "connection refused" in low:
        return f"{host} refused the connection: no ssh server listens on that port"
    if "connection timed out" in low or "operation timed out" in low:
        return (
            f"{host} did not answer within {CONNECT_TIMEOUT_S} s (ssh ConnectTimeout): it is down, or a "
            "firewall or VPN stands in between"
        )
    if "no route to host" in low or "network is unreachable" in low:
        return f"{host} cannot be reached from here (no route): check the network or VPN"
    if "permission denied" in low and ("publickey" in low or "password" in low or "keyboard" in low):
        return (
            f"{host} refused the login (permission denied): no key of yours is accepted there, and this "
            f"app never asks for a password; set up key login (ssh-copy-id {ssh_command(remote)[4:]})"
        )
    if "too many authentication failures" in low:
        return f"{host} refused the login (too many keys offered): name the right key in your ssh config"
    if _NO_PACKAGE.search(text):
        return (
            f"{host} has no {PACKAGE} for {remote.python}: install it there "
            f"({install_hint(remote, _version())}) or set that machine's Python"
        )
    slurm = slurm_problem(text)
    if slurm is not None:
        return f"{slurm} (on {host}, launcher {launcher_name(remote)})"
    if code == COMMAND_NOT_EXECUTABLE:
        words = cannot_run(remote, text)
        if words is not None:
            return words
    if code == COMMAND_NOT_FOUND:
        missing = reason_line(text)
        m = re.search(r"([^\s:]+): (?:command )?not found", missing)
        what = m.group(1) if m else (launcher_name(remote) if remote.prefix else remote.python)
        if remote.prefix and what == launcher_name(remote):
            return f"{host} has no launcher {what!r} (command not found): check the launcher prefix"
        return (
            f"{host} has no {what!r} (command not found): install Python and {PACKAGE} there, or set that "
            "machine's Python to the one that has it (e.g. ~/dx/bin/python)"
        )
    dropped = (
        "connection closed by",
        "connection reset",
        "broken pipe",
        "not responding",
        "closed by remote host",
        "connection to",
    )
    if any(d in low for d in dropped):
        return f"the connection to {host} dropped ({ssh_lines(text)[-1]})"
    if code == SSH_FAILED:
        said = next(iter(ssh_lines(text)[-1:]), "")
        if said:
            return f"ssh to {host} failed: {said}"
        if starting:
            return f"ssh to {host} failed before the agent started (ssh said nothing more)"
        return f"the agent on {host} was killed, or its connection closed without a word"
    if code is not None and code < 0:
        return f"the ssh client for {host} was killed (signal {-code})"
    said = reason_line(text)
    ended = f"ended with code {code}" if code is not None else "was stopped"
    return f"the agent on {host} {ended}" + (f": {said}" if said else "")


def _version() -> str:
    from explorer import __version__

    return __version__
