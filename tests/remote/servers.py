"""Real servers on this machine for the remote tests and benchmarks/remote_latency.py.

``LoopbackSshd``: Debian's OpenSSH server on 127.0.0.1 and a free port, with its own host key,
an authorized key made for the test, and a client ssh config (alias ``dx-test``) whose
known_hosts holds exactly that host key. ``LoopbackSlurm``: munged, slurmctld and slurmd with a
private slurm.conf, one node (this machine), partition ``teach``.

Both run as the current user (root here and in CI) from a private directory, touch no system
configuration, and stop every daemon they started (by pid) when their ``with`` block ends.
``missing()`` names what is not installed, so a test can skip with that reason.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
ALIAS = "dx-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: how long a test daemon may take to come up before its fixture gives up: the outer bound of an
#: event (a port listening, a socket made, a node idle), which a loaded CI machine may take seconds to
#: reach and a quick one never spends
START_WITHIN_S = 90.0


def _wait_port(port: int, proc: subprocess.Popen, what: str, timeout_s: float = START_WITHIN_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout_s:g} s")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class LoopbackSshd:
    """A real sshd on 127.0.0.1; ``config`` is a client ssh config with the alias ``dx-test``."""

    @staticmethod
    def missing() -> str | None:
        if not Path(SSHD).exists():
            return "openssh-server is not installed (apt-get install openssh-server)"
        if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
            return "openssh-client is not installed (apt-get install openssh-client)"
        if os.geteuid() != 0:
            return "the loopback sshd logs in as root: run the remote tests as root (as CI does)"
        return None

    def __init__(self, root: Path, extra_config: list[str] | None = None) -> None:
        self.root = Path(root)
        #: sshd_config lines added at the end (a ``Match`` block must come last)
        self.extra_config = list(extra_config or [])
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.config = self.root / "ssh_config"
        self.known_hosts = self.root / "known_hosts"
        self.key = self.root / "client_key"
        self.host_key = self.root / "host_key"

    def __enter__(self) -> LoopbackSshd:
        self.root.mkdir(parents=True, exist_ok=True)
        for key in (self.key, self.host_key):
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                check=True,
                capture_output=True,
            )
        authorized = self.root / "authorized_keys"
        authorized.write_text((self.key.with_suffix(".pub")).read_text())
        self.port = free_port()
        sshd_config = self.root / "sshd_config"
        sshd_config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.host_key}",
                    f"AuthorizedKeysFile {authorized}",
                    f"PidFile {self.root / 'sshd.pid'}",
                    "StrictModes no",
                    "UsePAM no",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    # the remote agent must find this checkout's package as the installed one
                    "AcceptEnv LANG LC_*",
                    "LogLevel ERROR",
                    *self.extra_config,
                    "",
                ]
            )
        )
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(sshd_config)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / "sshd.log", "wb"),  # closed with the process
        )
        try:
            _wait_port(self.port, self.proc, "sshd")
        except BaseException:
            self.__exit__()
            raise
        host_pub = self.host_key.with_suffix(".pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        self.write_config(self.config, self.known_hosts)
        return self

    def write_config(self, path: Path, known_hosts: Path) -> Path:
        """A client config for ``dx-test`` trusting the host keys in ``known_hosts`` only."""
        path.write_text(
            "\n".join(
                [
                    f"Host {ALIAS}",
                    "  HostName 127.0.0.1",
                    f"  Port {self.port}",
                    "  User root",
                    f"  IdentityFile {self.key}",
                    "  IdentitiesOnly yes",
                    f"  UserKnownHostsFile {known_hosts}",
                    "  GlobalKnownHostsFile /dev/null",
                    "  StrictHostKeyChecking yes",
                    "",
                ]
            )
        )
        return path

    def __exit__(self, *exc: object) -> None:
        _stop(self.proc)


class LoopbackSlurm:
    """munged + slurmctld + slurmd on this machine, one node, partition ``teach``.

    ``env`` holds SLURM_CONF (and the PATH) for srun; the remote side reads the conf from
    ``/etc/slurm/slurm.conf`` only when SLURM_CONF is unset, so tests pass it through the
    launcher prefix (``env SLURM_CONF=... srun ...``).
    """

    @staticmethod
    def missing() -> str | None:
        for program, package in (
            ("slurmctld", "slurm-wlm"),
            ("slurmd", "slurm-wlm"),
            ("srun", "slurm-client"),
            ("munged", "munge"),
        ):
            if shutil.which(program) is None and not Path(f"/usr/sbin/{program}").exists():
                return f"{program} is not installed (apt-get install {package})"
        if os.geteuid() != 0:
            return "the loopback Slurm runs its daemons as root: run these tests as root (as CI does)"
        return None

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.procs: list[subprocess.Popen] = []
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge.socket"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def _daemon(self, argv: list[str], name: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / f"{name}.log", "wb"),  # closed with the process
            env=self.env,
        )
        self.procs.append(proc)
        return proc

    def __enter__(self) -> LoopbackSlurm:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self) -> None:
        key = self.root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        munged = shutil.which("munged") or "/usr/sbin/munged"
        self._daemon(
            [
                munged,
                "-f",
                "-F",  # foreground: the process we started is the daemon, stopped by its pid
                f"--key-file={key}",
                f"--socket={self.munge_socket}",
                f"--pid-file={self.root / 'munged.pid'}",
                f"--log-file={self.root / 'munged.log'}",
                f"--seed-file={self.root / 'munged.seed'}",
            ],
            "munged-stderr",
        )
        deadline = time.monotonic() + START_WITHIN_S
        while not self.munge_socket.exists():
            if time.monotonic() > deadline or self.procs[-1].poll() is not None:
                raise RuntimeError(
                    "munged did not start: " + (self.root / "munged-stderr.log").read_text()[-300:]
                )
            time.sleep(0.05)
        host = socket.gethostname().split(".")[0]
        ctld_port, slurmd_port = free_port(), free_port()
        spool = self.root / "spool"
        state = self.root / "state"
        spool.mkdir(exist_ok=True)
        state.mkdir(exist_ok=True)
        cpus = os.cpu_count() or 1
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=dxtest",
                    f"SlurmctldHost={host}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={slurmd_port}",
                    f"StateSaveLocation={state}",
                    f"SlurmdSpoolDir={spool}",
                    f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
                    f"SlurmdPidFile={self.root / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.root / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.root / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "JobAcctGatherType=jobacct_gather/none",
                    f"AuthInfo=socket={self.munge_socket}",
                    f"NodeName={host} CPUs={cpus} State=UNKNOWN",
                    "PartitionName=teach Nodes=ALL Default=YES MaxTime=10 State=UP",
                    "",
                ]
            )
        )
        self._daemon([_sbin("slurmctld"), "-D", "-f", str(self.conf), "-i"], "slurmctld-stderr")
        _wait_port(ctld_port, self.procs[-1], "slurmctld")
        self._daemon([_sbin("slurmd"), "-D", "-f", str(self.conf)], "slurmd-stderr")
        deadline = time.monotonic() + START_WITHIN_S
        while time.monotonic() < deadline:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%t"],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=START_WITHIN_S,
            ).stdout.strip()
            if out and out.split()[0] in ("idle", "mix", "alloc"):
                return
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError("a Slurm daemon exited while starting")
            time.sleep(0.2)
        raise RuntimeError(
            f"the Slurm node did not become idle within {START_WITHIN_S:g} s (sinfo says {out!r})"
        )

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self.procs):
            _stop(proc)
        self._kill_strays()

    def _kill_strays(self) -> None:
        """Kill what the daemons left: a step daemon (``slurmstepd``) outlives slurmd by design, so
        a job still ending when slurmd stopped kept one alive after its test (seen under load).
        Every process of this cluster carries its ``SLURM_CONF`` (the daemons start with it, and
        their steps and jobs inherit it), so that finds them, and nothing of another test's."""
        import psutil

        # read as bytes, not with psutil's ``environ()``: slurmstepd writes its title over the start
        # of its environment with NULs, and psutil's parser stops at the first empty entry
        entry = f"\0SLURM_CONF={self.conf}\0".encode()
        for proc in psutil.process_iter():
            try:
                with open(f"/proc/{proc.pid}/environ", "rb") as env:
                    if entry in b"\0" + env.read() and proc.pid != os.getpid():
                        proc.kill()
            except (OSError, psutil.Error):
                pass  # gone already, or not ours to read


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


_AGENT_PYTHON: list[str] = []


def agent_python() -> str:
    """The remote's Python in the tests: this interpreter with the package under test first on its
    path. sshd gives a login a clean environment, so without the wrapper (a script made once per
    test process) an editable install of another checkout of the package would answer there."""
    if not _AGENT_PYTHON:
        import tempfile

        root = Path(__file__).resolve().parents[2]
        path = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
        wrapper = Path(tempfile.mkdtemp(prefix="dx-agent-python-")) / "python"
        # a path the caller set first (a fake server's modules) still comes first
        wrapper.write_text(
            f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{path}" exec {sys.executable} "$@"\n'
        )
        wrapper.chmod(0o755)
        wrapper.parent.chmod(0o755)
        _AGENT_PYTHON.append(str(wrapper))
    return _AGENT_PYTHON[0]


def fake_gpu_python(folder: Path) -> str:
    """A remote Python for a "GPU server" whose NVML sees two GPUs (``fake_gpu_server/pynvml.py``)
    and whose torch is this machine's CPU build: a wrapper script in ``folder``."""
    here = Path(__file__).resolve()
    wrapper = Path(folder) / "python-on-a-gpu-server"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH={here.parent / "fake_gpu_server"}:{here.parents[2]} exec {agent_python()} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def ready_remote(qtbot, within_ms: int = 90_000, python: str | None = None):
    """The window's context on a laptop with only its CPU, with the test sshd's remote (``ALIAS``)
    added and listed: (context, host). The caller has pointed SSH_CONFIG_ENV at the server's config;
    ``python`` is the remote's (default ``agent_python()``)."""
    from explorer.devices.discovery import Discovery
    from explorer.devices.model import CpuDevice
    from explorer.ui.context import AppContext

    context = AppContext(Discovery(devices=[CpuDevice(name="This laptop's CPU", key="cpu")], reports=[]))
    host = context.remotes.add(ALIAS, "", python or agent_python())
    qtbot.waitUntil(lambda: host.status != "connecting", timeout=within_ms)
    assert host.status == "ready", host.error
    return context, host
