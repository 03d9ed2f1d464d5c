"""The About dialog: which versions of everything this window runs on.

Teachers paste this into bug reports, and students compare it between machines. Versions come
from package metadata, so opening the dialog never imports torch or numba; the driver version
comes from the devices already discovered.
"""

from __future__ import annotations

import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from explorer import __version__
from explorer.devices.discovery import Discovery

NOT_INSTALLED = "not installed"


def package_version(distribution: str, *alternatives: str) -> str:
    # importlib.metadata imports the email package: only when the dialog opens, not for the window
    from importlib import metadata

    for name in (distribution, *alternatives):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return NOT_INSTALLED


def driver_version(discovery: Discovery | None) -> str:
    """The NVIDIA driver (and CUDA driver API) version as NVML reported it, or why there is none."""
    if discovery is None:
        return "not known yet: devices are still being discovered"
    for device in discovery.installed_gpus:
        if device.driver_version:
            cuda = f" (CUDA {device.cuda_driver_version})" if device.cuda_driver_version else ""
            return f"{device.driver_version}{cuda}"
    nvml = next((r for r in discovery.reports if r.probe == "nvml"), None)
    if nvml is not None and not nvml.ok:
        return f"none: {nvml.message}"
    return "n/a"


def about_rows(discovery: Discovery | None) -> list[tuple[str, str]]:
    return [
        ("Device Explorer", __version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Qt", qVersion()),
        ("PySide6", pyside_version),
        ("pyqtgraph", package_version("pyqtgraph")),
        ("torch", package_version("torch")),
        ("numba", package_version("numba")),
        ("NVML bindings (nvidia-ml-py)", package_version("nvidia-ml-py", "pynvml")),
        ("NVIDIA driver", driver_version(discovery)),
        ("Operating system", platform.platform(terse=True)),
    ]


class AboutDialog(QDialog):
    def __init__(self, discovery: Discovery | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Device Explorer")
        layout = QVBoxLayout(self)
        title = QLabel("Device Explorer")
        title.setProperty("role", "title")
        layout.addWidget(title)
        blurb = QLabel(
            "See and measure how compute devices work: the devices in this machine, "
            "how a CUDA launch is spread over a GPU, and honest CPU-versus-GPU timings."
        )
        blurb.setWordWrap(True)
        layout.addWidget(blurb)
        form = QFormLayout()
        self.rows = about_rows(discovery)
        for name, value in self.rows:
            shown = QLabel(value)
            shown.setWordWrap(True)
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(QLabel(name), shown)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)

    def text(self) -> str:
        return "\n".join(f"{name}: {value}" for name, value in self.rows)
