"""Add remote machine…: the ssh destination as people write it, an optional launcher, the Python there.

The dialog shows, as the user types, exactly what the app will run: the ``ssh`` command on this
computer and the command the remote runs (the launcher split into its arguments, then the Python
with ``-m explorer agent``), so a cluster's ``srun ...`` prefix is seen before it is ever used.
Input is checked by the core's own checks (``explorer.remote.target`` through
``explorer.remote.saved.make_saved``): a destination ssh would read as an option
(``-oProxyCommand=...``) is refused with one line naming it, and nothing is saved or run.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.remote.faults import ssh_command
from explorer.remote.saved import make_saved
from explorer.remote.target import DEFAULT_PYTHON
from explorer.ui.guard import qt_guard
from explorer.ui.remote_hosts import RemoteHost, RemoteHosts
from explorer.ui.theme import px
from explorer.ui.widgets import set_role

INTRO = (
    "Use the GPUs of another machine over ssh: a lab's GPU server, or a cluster's GPUs through its "
    "launcher. Your own ssh setup is used (~/.ssh/config aliases, keys, agent, known hosts); the "
    "app never asks for or stores a password. That machine needs this app's package for its Python "
    "(pip install device-explorer)."
)


def command_preview(destination: str, prefix: str, python: str) -> tuple[str, str]:
    """(what will run, problem): the commands to show for what is typed, or the one line saying
    why it cannot be used ("" when it can)."""
    try:
        remote = make_saved(destination, prefix, python).remote()
    except UserError as exc:
        return "", str(exc)
    return (
        f"On this computer:  {ssh_command(remote)}\nThere:  {remote.remote_command_line()}",
        "",
    )


class AddRemoteDialog(QDialog):
    """Checks what is typed, shows the commands, and on Add remembers and connects the remote."""

    def __init__(self, remotes: RemoteHosts, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add remote machine")
        self.remotes = remotes
        #: the remote added (None until Add succeeds)
        self.added: RemoteHost | None = None
        layout = QVBoxLayout(self)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        set_role(intro, "muted")
        layout.addWidget(intro)

        form = QFormLayout()
        self.destination_edit = QLineEdit()
        self.destination_edit.setPlaceholderText("gpu-lab, alice@gpu.example.edu or host:2222")
        self.destination_edit.setAccessibleName("ssh destination")
        self.prefix_edit = QLineEdit()
        self.prefix_edit.setPlaceholderText("optional, e.g. srun --gres=gpu:1 --time=10 --partition=teach")
        self.prefix_edit.setAccessibleName("launcher prefix")
        self.python_edit = QLineEdit()
        self.python_edit.setPlaceholderText(f"{DEFAULT_PYTHON} (or a venv's, e.g. ~/dx/bin/python)")
        self.python_edit.setAccessibleName("Python on that machine")
        form.addRow("Machine (ssh destination)", self.destination_edit)
        form.addRow("Launcher (clusters only)", self.prefix_edit)
        form.addRow("Python there", self.python_edit)
        layout.addLayout(form)

        heading = QLabel("What the app will run, each time it connects:")
        layout.addWidget(heading)
        self.preview = QLabel("")
        self.preview.setWordWrap(True)
        self.preview.setObjectName("commandPreview")
        self.preview.setTextInteractionFlags(self.preview.textInteractionFlags() | self._selectable())
        set_role(self.preview, "warning")
        layout.addWidget(self.preview)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        set_role(self.error_label, "error")
        self.error_label.hide()
        layout.addWidget(self.error_label)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton("Add and connect", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setDefault(True)
        self.buttons.accepted.connect(self.try_add)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for edit in (self.destination_edit, self.prefix_edit, self.python_edit):
            edit.textChanged.connect(self._update_preview)
        self.setMinimumWidth(px(560))
        self._update_preview()

    def _fit(self) -> None:
        """Tall enough for the wrapped intro, commands and error line at this width and text size
        (a dialog's layout alone sizes wrapped labels for a narrower width and cuts them off)."""
        layout = self.layout()
        assert layout is not None  # set in __init__
        need = layout.totalHeightForWidth(max(self.width(), self.minimumWidth()))
        self.setMinimumHeight(need)
        if self.height() < need:
            self.resize(self.width(), need)

    @qt_guard
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._fit()

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    @staticmethod
    def _selectable():  # the commands can be copied into a terminal to try them by hand
        from PySide6.QtCore import Qt

        return Qt.TextInteractionFlag.TextSelectableByMouse

    def _values(self) -> tuple[str, str, str]:
        return self.destination_edit.text(), self.prefix_edit.text(), self.python_edit.text()

    def _update_preview(self) -> None:
        destination, prefix, python = self._values()
        if not destination.strip():
            self.preview.setText("Type the machine's ssh destination to see the commands.")
            self.error_label.hide()
            self.add_button.setEnabled(False)
            return
        shown, problem = command_preview(destination, prefix, python)
        self.preview.setText(shown or "Nothing is run while the line below names a problem.")
        self.error_label.setText(problem)
        self.error_label.setVisible(bool(problem))
        self.add_button.setEnabled(not problem)
        self._fit()

    def try_add(self) -> bool:
        """Remember and connect the remote; on bad input or a list that cannot be written, say so
        in one line and stay open with what was typed."""
        try:
            self.added = self.remotes.add(*self._values())
        except UserError as exc:
            self._refuse(str(exc))
            return False
        except OSError as exc:
            self._refuse(
                f"the list of remote machines could not be saved in {exc.filename or 'the data folder'}: "
                f"{exc.strerror or exc}"
            )
            return False
        self.accept()
        return True

    def _refuse(self, line: str) -> None:
        self.error_label.setText(line)
        self.error_label.show()
        self._fit()
