"""The remote machines the window lists: each one's state (connecting, its devices, or why it
cannot be reached) and its GPUs' live readings, kept off the GUI thread.

Each remote gets one daemon thread (``explorer.remote``): an agent over ssh lists the machine's
devices and is closed; then, where the machine has GPUs, a second agent that is asked only for live
readings (NVML, a few megabytes: it never imports torch or numba, which the listing needs) is polled
about once a second, as the local monitor does. A remote reached through a launcher (``srun``) is
listed inside a Slurm job that ends with the listing: live readings would hold a job (and a GPU)
for as long as the window stays open, so they are not polled there; Reconnect lists again. While
the listing's job waits in the queue, ``job`` is its state and reason as Slurm reports them.
Nothing here waits on the network in the GUI thread: a host that takes a minute to time out is
"connecting…" for that minute and then "cannot be reached" with ssh's reason in words, while the
local devices were listed from the start. Closing the window cancels every agent (the ssh child
is killed at once; the agent there exits when its stdin closes).

The remembered list is ``explorer.remote.saved``'s; what is listed and said comes from the core
(``list_devices``, ``read_live``, the faults' one-line reasons); this module only schedules and
delivers it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from PySide6.QtCore import QObject, Signal

from explorer.agent.protocol import AgentError
from explorer.devices.live import LiveReading
from explorer.devices.model import CudaGpu, Device
from explorer.remote.faults import launcher_name
from explorer.remote.saved import (
    SavedRemote,
    add_remote,
    load_remotes,
    make_saved,
    remove_remote,
)
from explorer.remote.session import RemoteAgentProcess, RemoteDevices, list_devices, read_live
from explorer.remote.slurm import JobState
from explorer.remote.target import Remote
from explorer.ui.live_monitor import INTERVAL_MS, LiveHistory
from explorer.ui.workers import run_in_daemon_thread
from explorer.words import on_host

#: how the connecting thread hands a step to the GUI thread: a call made there, in order
Post = Callable[[Callable[[], None]], None]

log = logging.getLogger(__name__)

Status = Literal["connecting", "ready", "unreachable"]


class RemoteLive(LiveHistory):
    """A remote machine's GPUs' last minute of readings, fed by its host's thread."""

    def feed(self, keys: list[str], readings: list[LiveReading]) -> None:
        for key, reading in zip(keys, readings, strict=True):
            self._record(key, reading)
        self.error = None
        self.updated.emit()

    def fail(self, message: str) -> None:
        self.error = message
        self.unavailable.emit(message)

    def pause(self, note: str) -> None:
        """No further readings, on purpose: the last ones stand, with ``note`` saying why."""
        self.note = note
        self.noted.emit(note)


@dataclass(frozen=True)
class RemoteDevice:
    """A device on a remote machine, named as the window names it: ``host`` ("gpu-lab") and the
    device's own key there ("cuda:0"), which may equal a local key."""

    host: RemoteHost
    device: Device

    @property
    def label(self) -> str:
        return on_host(self.device.key, self.host.remote.host)


class RemoteHost(QObject):
    """One remembered remote and what is known of it now."""

    #: the status, the devices or the reason changed (on the GUI thread)
    changed = Signal()

    def __init__(self, saved: SavedRemote, ident: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.saved = saved
        self.remote: Remote = saved.remote()
        #: stable within this window: names the host's rows in the Devices panel
        self.ident = ident
        self.status: Status = "connecting"
        self.found: RemoteDevices | None = None
        #: why the host cannot be used (one line in words), "" otherwise
        self.error = ""
        #: the listing's Slurm job as Slurm last reported it (a remote with a launcher), else None
        self.job: JobState | None = None
        self.live = RemoteLive(parent=self)
        self._lock = threading.Lock()
        self._agent: RemoteAgentProcess | None = None
        self._stop = threading.Event()
        self._generation = 0
        self._live_keys: list[str] = []

    # ----- what the panels read
    @property
    def devices(self) -> list[Device]:
        return list(self.found.discovery.devices) if self.found is not None else []

    @property
    def gpus(self) -> list[CudaGpu]:
        return self.found.discovery.installed_gpus if self.found is not None else []

    def device(self, key: str) -> Device | None:
        return next((d for d in self.devices if d.key == key), None)

    # ----- connecting
    def connect_now(self) -> None:
        """(Re)connect in the background: drop any agent, list the devices, then read live values."""
        self.disconnect_now()
        self._generation += 1
        self._stop = threading.Event()
        self.status, self.found, self.error, self.job = "connecting", None, "", None
        self.live.note = None
        self.changed.emit()
        generation, stop = self._generation, self._stop

        def failed(exc: BaseException) -> None:  # a bug must not leave the host "connecting" forever
            log.error("connecting to %s failed", self.remote.host, exc_info=exc)
            self._on_failed(generation, f"the connection failed: {type(exc).__name__}: {exc}")

        # the thread hands each step to the GUI thread as a call (``post``): the handlers below
        # drop any step of an older generation, so a reconnect never shows the last one's news
        run_in_daemon_thread(
            lambda post: self._run(generation, stop, post),
            lambda _none: None,
            failed,
            on_progress=lambda step: step(),
            parent=self,
            name=f"remote-{self.remote.host}",
        )

    def disconnect_now(self) -> None:
        """Stop the thread's agent at once (its ssh child is killed); never waits."""
        self._stop.set()
        with self._lock:
            agent, self._agent = self._agent, None
        if agent is not None:
            agent.cancel()

    def _run(self, generation: int, stop: threading.Event, post: Post) -> None:
        found = self._list(generation, stop, post)
        if found is None or stop.is_set():
            return
        indices = [d.nvml_index for d in found.discovery.installed_gpus if d.nvml_index is not None]
        if not indices:
            return  # no GPU to watch there: no agent is kept open for nothing (Reconnect lists again)
        if self.remote.prefix:
            # the listing's own reading stands, as of the listing; no job is held for more
            snapshot = [
                d.live if d.live is not None else LiveReading.failed(time.time(), "not read at listing")
                for d in found.discovery.installed_gpus
                if d.nvml_index is not None
            ]
            post(partial(self._on_live, generation, snapshot))
            post(
                partial(
                    self._on_live_off,
                    generation,
                    f"Read once, when the devices were listed at {time.strftime('%H:%M:%S')}: through "
                    f"{launcher_name(self.remote)} each reading would hold a Slurm job (and a GPU) for as "
                    "long as this window is open. Reconnect reads them again.",
                )
            )
            return
        self._watch(generation, stop, indices, post)

    def _list(self, generation: int, stop: threading.Event, post: Post) -> RemoteDevices | None:
        """The remote's devices, from an agent closed right after (with a launcher: its job ends)."""
        agent = RemoteAgentProcess(
            self.remote,
            label=f"the agent on {self.remote.host}",
            on_job=lambda job: post(partial(self._on_job, generation, job)),
        )
        if not self._hold(agent, stop):
            return None
        try:
            agent.start()
            found = list_devices(self.remote, agent=agent)
        except AgentError as exc:
            if not stop.is_set():
                post(partial(self._on_failed, generation, str(exc)))
            return None
        except Exception as exc:  # a bug here must not leave the host "connecting" forever
            log.exception("listing the devices of %s failed", self.remote.host)
            post(
                partial(
                    self._on_failed, generation, f"listing its devices failed: {type(exc).__name__}: {exc}"
                )
            )
            return None
        finally:
            self._drop(agent)
        post(partial(self._on_listed, generation, found))
        return found

    def _watch(self, generation: int, stop: threading.Event, indices: list[int], post: Post) -> None:
        """Live readings about once a second from an agent asked for nothing else: it imports NVML
        only, never torch or numba (``benchmarks/remote_live_agent.py`` measures it)."""
        agent = RemoteAgentProcess(self.remote, label=f"the live readings on {self.remote.host}")
        if not self._hold(agent, stop):
            return
        try:
            agent.start()
            while not stop.wait(INTERVAL_MS / 1000):
                readings = read_live(agent, indices)
                post(partial(self._on_live, generation, readings))
        except AgentError as exc:
            if not stop.is_set():
                post(partial(self._on_failed, generation, f"the connection was lost: {exc}"))
        finally:
            self._drop(agent)

    def _hold(self, agent: RemoteAgentProcess, stop: threading.Event) -> bool:
        """Make ``agent`` the one ``disconnect_now`` stops; False when that already happened."""
        with self._lock:
            if stop.is_set():
                return False
            self._agent = agent
        return True

    def _drop(self, agent: RemoteAgentProcess) -> None:
        agent.close(grace_s=0.5)
        with self._lock:
            if self._agent is agent:
                self._agent = None

    def _on_listed(self, generation: int, found: RemoteDevices) -> None:
        if generation != self._generation:
            return
        self.status, self.found, self.error, self.job = "ready", found, "", None
        self._live_keys = [d.key for d in found.discovery.installed_gpus if d.nvml_index is not None]
        self.changed.emit()

    def _on_failed(self, generation: int, reason: str) -> None:
        if generation != self._generation:
            return
        self.status, self.found, self.error = "unreachable", None, reason
        self.live.fail(reason)
        self.changed.emit()

    def _on_job(self, generation: int, job: JobState) -> None:
        if generation == self._generation and self.status == "connecting":
            self.job = job
            self.changed.emit()

    def _on_live_off(self, generation: int, reason: str) -> None:
        if generation == self._generation:
            self.live.pause(reason)

    def _on_live(self, generation: int, readings: list[LiveReading]) -> None:
        if generation == self._generation and len(readings) == len(self._live_keys):
            self.live.feed(self._live_keys, readings)


class RemoteHosts(QObject):
    """Every remembered remote, in the order the user added them."""

    #: a remote was added or removed, or one's state changed
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        loaded = load_remotes()
        #: the sentence to show once when the remembered list was damaged ("" otherwise)
        self.notice = loaded.notice
        self._count = 0
        self.hosts: list[RemoteHost] = [self._make(s) for s in loaded.remotes]
        self.started = False

    def _make(self, saved: SavedRemote) -> RemoteHost:
        self._count += 1
        host = RemoteHost(saved, f"remote{self._count}", self)
        host.changed.connect(self.changed.emit)
        return host

    def start(self) -> None:
        """Connect to every remembered remote (in the background; once)."""
        if self.started:
            return
        self.started = True
        for host in self.hosts:
            host.connect_now()

    def add(self, destination: str, prefix: str = "", python: str = "") -> RemoteHost:
        """Remember a remote and connect to it. ``UserError`` (one line) for input that is not
        acceptable or a machine already listed; ``OSError`` when the list cannot be saved."""
        saved = make_saved(destination, prefix, python)
        add_remote(saved)
        host = self._make(saved)
        self.hosts.append(host)
        self.changed.emit()
        host.connect_now()
        return host

    def remove(self, host: RemoteHost) -> None:
        """Forget a remote (``OSError`` when the list cannot be saved: it is then still listed)."""
        remove_remote(host.saved)
        host.disconnect_now()
        self.hosts = [h for h in self.hosts if h is not host]
        self.changed.emit()
        host.deleteLater()

    def host(self, ident: str) -> RemoteHost | None:
        return next((h for h in self.hosts if h.ident == ident), None)

    def devices(self) -> list[RemoteDevice]:
        """The devices of every reachable remote, host by host."""
        return [RemoteDevice(h, d) for h in self.hosts for d in h.devices]

    def shutdown(self) -> None:
        for host in self.hosts:
            host.disconnect_now()


__all__ = ["RemoteDevice", "RemoteHost", "RemoteHosts", "RemoteLive"]
