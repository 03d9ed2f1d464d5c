"""The Devices panel's page for one remote machine: how it is reached, what state it is in, why it
cannot be reached or has no GPU (the core's words), and the buttons to reconnect or forget it."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.remote.faults import ssh_command
from explorer.ui.remote_hosts import RemoteHost
from explorer.ui.widgets import Banner, FieldGroup, set_role


def status_line(host: RemoteHost) -> str:
    """One line: what the window knows of the remote now."""
    if host.status == "connecting":
        if host.job is not None:  # Slurm's own state and reason, as they change
            return f"Connecting to {host.remote.host}: {host.job.message}"
        return f"Connecting to {host.remote.host}… (up to {host.remote.hello_timeout_s:g} s)"
    if host.status == "unreachable":
        return f"Cannot be reached: {host.error}"
    found = host.found
    if found is None:
        return ""
    count = len(found.discovery.devices)
    gpus = len(found.discovery.installed_gpus)
    return (
        f"Connected to {found.hostname}: {count} device{'s' if count != 1 else ''} "
        f"({gpus} GPU{'s' if gpus != 1 else ''}), listed in {found.seconds:.1f} s"
    )


class RemoteHostPage(QWidget):
    remove_requested = Signal(object)  # the RemoteHost

    def __init__(self, host: RemoteHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        title = QLabel(f"ON {host.remote.host}")
        set_role(title, "title")
        title.setWordWrap(True)
        layout.addWidget(title)
        self.status = QLabel(status_line(host))
        self.status.setWordWrap(True)
        set_role(self.status, "error" if host.status == "unreachable" else "muted")
        layout.addWidget(self.status)
        found = host.found
        if found is not None and found.why_no_gpu:
            banner = Banner("Why no GPU is listed there", found.why_no_gpu)
            layout.addWidget(banner)

        how = FieldGroup("How it is reached")
        how.add("ssh destination", host.saved.destination, None, key="destination")
        how.add("Launcher", host.saved.prefix or "none (runs directly on the machine)", None, key="prefix")
        how.add("Python there", host.remote.python, None, key="python")
        how.add("On this computer", ssh_command(host.remote), None, key="ssh")
        how.add("There", host.remote.remote_command_line(), None, key="command")
        for label in how.values.values():
            label.setWordWrap(True)
        layout.addWidget(how)
        self.how = how

        buttons = QHBoxLayout()
        self.reconnect_button = QPushButton("Reconnect")
        self.reconnect_button.setToolTip("Connect again and list its devices")
        self.reconnect_button.clicked.connect(host.connect_now)
        self.remove_button = QPushButton("Remove this machine")
        self.remove_button.setToolTip("Forget this remote machine (it can be added again)")
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(host))
        buttons.addWidget(self.reconnect_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(1)
