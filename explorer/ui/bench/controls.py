"""What to run: workload, devices, sizes, repeats and time budget, and the Start / Stop buttons.

Only present devices are offered: the CPU and each CUDA GPU found. Catalog GPUs are spec sheets,
not hardware, and have no benchmarks; when no GPU is present its row stays, disabled, with the
reason, so a student sees *why* there is no GPU curve.

Below them, the devices of each remote machine the Devices panel lists ("ON gpu-lab"), so a laptop
without a GPU runs the CPU-vs-GPU experiment on the lab's server. A run measures on one machine:
choosing a remote device clears the others' boxes (and the other way round), and the run goes
over ssh (``BenchPlan.remote``), its points streamed back one at a time.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.bench.fmt import first_sentences
from explorer.bench.sizes import parse_sizes, sizes_range_text, sizes_text
from explorer.errors import UserError
from explorer.ui.widgets import number_field

#: how the roofline's ceilings are had before a run: (label, key)
ROOF_CHOICES = (
    ("measure once", "once"),  # per machine: the tooltip says so
    ("measure again now", "again"),
    ("do not measure", "skip"),
)

#: the L2 before each sample of a GPU memory workload: (label, key)
L2_CHOICES = (
    ("cold (flushed)", "cold"),
    ("warm", "warm"),
)
L2_TIP = (
    "Cold: before each sample the GPU writes a buffer twice its L2, so the data comes from DRAM, "
    "as it does the first time a program touches it. Warm: the L2 keeps what the last sample "
    "left, so a working set that fits in it is read from the L2 and can exceed the DRAM roof."
)


#: seconds per point the form offers first (the README's screenshot shows the same)
DEFAULT_BUDGET_S = 2.0


class BenchControls(QWidget):
    start_requested = Signal()
    stop_requested = Signal()

    def __init__(self, context: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from explorer.bench.workloads import visible_workloads

        self._context = context
        self._workloads = {w.name: w for w in visible_workloads()}
        self._device_boxes: dict[str, QCheckBox] = {}
        #: remote devices' boxes by (host ident, device key there)
        self._remote_boxes: dict[tuple[str, str], QCheckBox] = {}
        self._had_gpus = False  # a GPU that appears later (re-probe) starts checked
        self._defaults_text = ""
        self._running = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        what = QGroupBox("Workload")
        what_layout = QVBoxLayout(what)
        self.workload_combo = QComboBox()
        # long titles must not widen the column: the popup still shows them in full
        self.workload_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.workload_combo.setMinimumContentsLength(18)
        for name, w in self._workloads.items():
            self.workload_combo.addItem(w.title, name)
        self.description_label = QLabel(wordWrap=True)
        # which workloads cannot run on this machine and why, said before any run
        self.cannot_run_label = QLabel(wordWrap=True)
        self.cannot_run_label.setObjectName("cannot_run_here")
        self.cannot_run_label.setProperty("role", "error")
        self.cannot_run_label.hide()
        what_layout.addWidget(self.workload_combo)
        what_layout.addWidget(self.cannot_run_label)
        what_layout.addWidget(self.description_label)
        layout.addWidget(what)

        self.devices_box = QGroupBox("Devices")
        self._devices_layout = QVBoxLayout(self.devices_box)
        layout.addWidget(self.devices_box)

        how = QGroupBox("Sizes and timing")
        form = QFormLayout(how)
        self.sizes_edit = QLineEdit()
        self.sizes_edit.setPlaceholderText("e.g. 64, 128, 256 (K, M, G allowed)")
        self.sizes_edit.setMinimumWidth(120)
        self.sizes_hint = QLabel(wordWrap=True)
        self.sizes_hint.setProperty("role", "caption")
        self.sizes_error = QLabel(wordWrap=True)
        self.sizes_error.setProperty("role", "error")
        self.sizes_error.hide()
        self.reset_sizes_button = QPushButton("Defaults")
        self.reset_sizes_button.setToolTip("put back the workload's default sizes for the chosen devices")
        # a GPU's eight default sizes are longer than any settings column: the field scrolls like
        # any text field (the layout test allows it) and the full list is its tooltip
        self.sizes_edit.setProperty("elideAllowed", True)
        self.sizes_edit.textChanged.connect(self.sizes_edit.setToolTip)
        form.addRow("Sizes", self.sizes_edit)
        hint_row = QHBoxLayout()
        hint_row.addWidget(self.sizes_hint, 1)
        hint_row.addWidget(self.reset_sizes_button, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("", hint_row)
        form.addRow("", self.sizes_error)
        self.repeats_spin = number_field(QSpinBox())
        self.repeats_spin.setRange(0, 1000)
        self.repeats_spin.setSpecialValueText("auto")
        self.repeats_spin.setToolTip(
            "timed repeats per point; auto repeats until the spread settles or the budget ends"
        )
        form.addRow("Repeats", self.repeats_spin)
        self.budget_spin = number_field(QDoubleSpinBox())
        self.budget_spin.setRange(0.1, 600.0)
        self.budget_spin.setDecimals(1)
        self.budget_spin.setValue(DEFAULT_BUDGET_S)
        self.budget_spin.setSuffix(" s / point")
        form.addRow("Time budget", self.budget_spin)
        self.ceilings_combo = QComboBox()
        for label, key in ROOF_CHOICES:
            self.ceilings_combo.addItem(label, key)
        self.ceilings_combo.setToolTip(
            "The roofline's measured ceilings (the best matmul, each memory level's bandwidth) and the "
            "CPU's clock are measured in the worker before the first point, once per machine, then kept; "
            "a measurement other programs disturbed is kept only until a quiet one replaces it"
        )
        form.addRow("Ceilings", self.ceilings_combo)
        self.l2_combo = QComboBox()
        for label, key in L2_CHOICES:
            self.l2_combo.addItem(label, key)
        form.addRow("L2", self.l2_combo)
        layout.addWidget(how)

        self.message_label = QLabel(wordWrap=True)
        self.message_label.setProperty("role", "error")
        self.message_label.hide()
        layout.addWidget(self.message_label)

        lesson = QGroupBox("What to look for")
        lesson_layout = QVBoxLayout(lesson)
        self.lesson_label = QLabel(wordWrap=True)
        self.lesson_label.setTextFormat(Qt.TextFormat.PlainText)
        lesson_layout.addWidget(self.lesson_label)
        self.lesson_box = lesson
        layout.addWidget(lesson)
        layout.addStretch(1)

        # The panel places these where they are always in view (above the plot).
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)

        self.workload_combo.currentIndexChanged.connect(self._workload_changed)
        self.sizes_edit.textEdited.connect(self._check_sizes)
        self.reset_sizes_button.clicked.connect(self._reset_sizes)
        self.start_button.clicked.connect(self._start_clicked)
        self.stop_button.clicked.connect(self.stop_requested)
        context.discovery_changed.connect(lambda _d: self._rebuild_devices())
        context.remotes.changed.connect(self._rebuild_devices)

        self._rebuild_devices()
        self._workload_changed()

    # --- state the panel reads ----------------------------------------------------------
    @property
    def workload(self) -> Any:
        return self._workloads[self.workload_combo.currentData()]

    def selected_devices(self) -> list[str]:
        """The devices of this machine chosen (none while a remote machine's are)."""
        return [key for key, box in self._device_boxes.items() if box.isEnabled() and box.isChecked()]

    def selected_remote(self) -> tuple[Any, list[str]] | None:
        """The remote machine (its ``RemoteHost``) and the keys of its devices chosen, if any are."""
        chosen = [(ident, key) for (ident, key), box in self._remote_boxes.items() if box.isChecked()]
        if not chosen:
            return None
        host = self._context.remotes.host(chosen[0][0])
        if host is None:
            return None
        return host, [key for ident, key in chosen if ident == host.ident]

    def remote_boxes(self) -> dict[tuple[str, str], QCheckBox]:
        """Every remote device's row by (host ident, device key there)."""
        return dict(self._remote_boxes)

    def _chosen_keys(self) -> list[str]:
        remote = self.selected_remote()
        return remote[1] if remote is not None else self.selected_devices()

    def device_box(self, key: str) -> QCheckBox | None:
        return self._device_boxes.get(key)

    def device_boxes(self) -> dict[str, QCheckBox]:
        """Every device row by key ("cpu", "cuda:0"; "gpu-none" for the disabled no-GPU row)."""
        return dict(self._device_boxes)

    def set_workload(self, name: str) -> None:
        index = self.workload_combo.findData(name)
        if index < 0:
            raise UserError(f"unknown workload {name!r}; known: {', '.join(self._workloads)}")
        self.workload_combo.setCurrentIndex(index)

    def set_running(self, running: bool) -> None:
        self._running = running
        for w in (
            self.workload_combo,
            self.devices_box,
            self.sizes_edit,
            self.reset_sizes_button,
            self.repeats_spin,
            self.budget_spin,
            self.ceilings_combo,
            self.l2_combo,
        ):
            w.setEnabled(not running)
        if not running:
            self._update_l2()
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def warm_l2(self) -> bool:
        """Whether the run leaves the L2 warm between samples (the choice applies, and says warm)."""
        return self.l2_reason() is None and self.l2_combo.currentData() == "warm"

    def l2_reason(self) -> str | None:
        """Why the L2 choice means nothing for the chosen workload and devices, in one line, or None."""
        chosen = self._chosen_keys()
        gpu = next((d for d in chosen if d != "cpu"), None)
        return self.workload.l2_refusal(gpu or "cpu")

    def _update_l2(self) -> None:
        """The L2 choice is offered where it applies (a GPU chosen, a workload that streams memory);
        elsewhere it stays, greyed, with the reason on hover."""
        refusal = self.l2_reason()
        self.l2_combo.setEnabled(refusal is None and not self._running)
        if refusal is not None:
            tip = f"Not used here: {refusal}."
        elif "cpu" in self._chosen_keys():
            tip = f"{L2_TIP} The CPU's points run with its caches as they find them."
        else:
            tip = L2_TIP
        self.l2_combo.setToolTip(tip)

    def show_message(self, text: str | None) -> None:
        self.message_label.setText(text or "")
        self.message_label.setVisible(bool(text))

    def build_plan(self) -> Any | None:
        """The plan the form describes, or ``None`` with the reason shown inline."""
        sizes = self._check_sizes()
        if sizes is None:
            return None
        remote = self.selected_remote()
        devices = remote[1] if remote is not None else self.selected_devices()
        if not devices:
            self.show_message("Choose at least one device.")
            return None
        workload = self.workload
        gpus = [g for g in remote[0].gpus if g.usable] if remote is not None else self._present_gpus()
        machine = remote[0].remote.host if remote is not None else "this machine"
        shortfall = workload.gpu_shortfall(sum(d != "cpu" for d in devices), len(gpus), machine)
        if shortfall:
            self.show_message(shortfall)
            return None
        from explorer.bench.runner import BenchPlan

        self.show_message(None)
        use_defaults = self.sizes_edit.text().strip() == self._defaults_text
        return BenchPlan(
            workload=workload.name,
            devices=devices,
            sizes=None if use_defaults else sizes,
            repeats=self.repeats_spin.value() or None,
            time_budget_s=self.budget_spin.value(),
            low_priority=True,  # the worker yields the cores to the window whenever it needs them
            measure_roof=self.ceilings_combo.currentData() != "skip",
            remeasure_roof=self.ceilings_combo.currentData() == "again",
            warm_l2=self.warm_l2(),
            remote=remote[0].remote if remote is not None else None,
        )

    # --- internals ----------------------------------------------------------------------
    def _present_gpus(self) -> list[Any]:
        return [d for d in self._context.devices if d.kind == "cuda" and d.usable]

    def _rebuild_devices(self) -> None:
        first_build = not self._device_boxes
        checked = set(self.selected_devices())
        while self._devices_layout.count():
            item = self._devices_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._device_boxes.clear()
        cpu = next((d for d in self._context.devices if d.kind == "cpu"), None)
        cpu_box = QCheckBox(f"CPU: {cpu.name}" if cpu else "CPU")
        cpu_box.setChecked(first_build or "cpu" in checked)
        self._add_device_box("cpu", cpu_box)
        gpus = self._present_gpus()
        for gpu in gpus:
            box = QCheckBox(gpu.display_name)
            box.setChecked(first_build or gpu.key in checked or not self._had_gpus)
            self._add_device_box(gpu.key, box)
        self._had_gpus = bool(gpus)
        if not gpus:
            discovery = self._context.discovery
            reason = (discovery.why_no_gpu() if discovery else None) or (
                f"Still asking {' and '.join(discovery.pending)} for GPUs."
                if discovery and discovery.pending
                else "Devices have not been probed yet."
            )
            hidden = bool(discovery and discovery.hidden_gpus)
            box = QCheckBox("GPU: none usable here" if hidden else "GPU: none present on this machine")
            box.setEnabled(False)
            box.setToolTip(reason)
            self._add_device_box("gpu-none", box)
            why = QLabel(first_sentences(reason), wordWrap=True)
            why.setToolTip(reason)
            why.setProperty("role", "caption")
            why.setContentsMargins(22, 0, 0, 0)
            why.setObjectName("no_gpu_reason")
            self._devices_layout.addWidget(why)
        self._add_remote_boxes()
        self._update_defaults()
        self._mark_unrunnable()

    def cannot_run_here(self, workload: Any = None) -> str | None:
        """Why ``workload`` (the chosen one by default) cannot run on this machine, or None."""
        w = workload or self.workload
        discovery = self._context.discovery
        why = (discovery.why_no_gpu() if discovery else None) or ""
        return w.cannot_run_here(len(self._present_gpus()), why)

    def _mark_unrunnable(self) -> None:
        """Each workload this machine cannot run is marked in the list, its reason on hover; the
        chosen one's reason stands under the list (a remote machine's GPU may still run it)."""
        for i in range(self.workload_combo.count()):
            w = self._workloads[self.workload_combo.itemData(i)]
            refusal = self.cannot_run_here(w)
            self.workload_combo.setItemText(i, f"{w.title} (not on this machine)" if refusal else w.title)
            self.workload_combo.setItemData(i, refusal, Qt.ItemDataRole.ToolTipRole)
        remote = self.selected_remote()
        if remote is not None:  # the chosen remote's GPUs decide, in its own words
            host = remote[0]
            why = (host.found.why_no_gpu if host.found is not None else None) or ""
            refusal = self.workload.cannot_run_here(
                len([g for g in host.gpus if g.usable]), why, host.remote.host
            )
            where = f"on {host.remote.host}"
        else:
            refusal, where = self.cannot_run_here(), "here"
            able = [
                h.remote.host
                for h in self._context.remotes.hosts
                if not self.workload.cannot_run_here(len([g for g in h.gpus if g.usable]))
            ]
            if refusal and able:
                refusal += f"; {able[0]}'s GPUs below can run it"
        self.cannot_run_label.setText(f"Cannot run {where}: {refusal}." if refusal else "")
        self.cannot_run_label.setToolTip(refusal or "")
        self.cannot_run_label.setVisible(bool(refusal))

    def _add_remote_boxes(self) -> None:
        """Each remote machine's devices under its name; a machine still connecting or that cannot
        be reached is named with that, so the student knows where its GPU went."""
        checked = {k for k, box in self._remote_boxes.items() if box.isChecked()}
        self._remote_boxes.clear()
        for host in self._context.remotes.hosts:
            title = QLabel(f"ON {host.remote.host}")
            title.setObjectName("remoteHost")
            title.setToolTip(host.remote.label)
            font = title.font()
            font.setBold(True)
            title.setFont(font)
            self._devices_layout.addWidget(title)
            if host.status != "ready":
                if host.status == "connecting":
                    said = f"connecting… {host.job.short}" if host.job is not None else "connecting…"
                else:
                    said = f"cannot be reached: {host.error}"
                note = QLabel(first_sentences(said), wordWrap=True)
                note.setToolTip(said)
                note.setProperty("role", "caption" if host.status == "connecting" else "error")
                note.setContentsMargins(22, 0, 0, 0)
                self._devices_layout.addWidget(note)
                continue
            for device in host.devices:
                if device.kind == "cuda" and not device.usable:
                    continue  # hidden from CUDA there: nothing can run on it
                text = f"CPU: {device.name}" if device.kind == "cpu" else device.display_name
                box = QCheckBox(text)
                box.setToolTip(f"{device.key} on {host.remote.label}")
                key = (host.ident, device.key)
                box.setChecked(key in checked)
                self._remote_boxes[key] = box
                box.toggled.connect(lambda on, key=key: self._remote_toggled(key, on))
                self._devices_layout.addWidget(box)

    def _remote_toggled(self, key: tuple[str, str], on: bool) -> None:
        if on:  # one machine per run: this machine's boxes and other remotes' are cleared
            for box in self._device_boxes.values():
                box.setChecked(False)
            for other, box in self._remote_boxes.items():
                if other[0] != key[0]:
                    box.setChecked(False)
        self._update_defaults()
        self._mark_unrunnable()  # what can run is now the chosen machine's to say

    def _local_toggled(self, on: bool) -> None:
        if on:
            for box in self._remote_boxes.values():
                box.setChecked(False)
        self._update_defaults()
        self._mark_unrunnable()

    def _add_device_box(self, key: str, box: QCheckBox) -> None:
        self._device_boxes[key] = box
        box.toggled.connect(self._local_toggled)
        self._devices_layout.addWidget(box)

    def _workload_changed(self) -> None:
        w = self.workload
        self.description_label.setText(w.description)
        self.lesson_label.setText(w.lesson)
        self.lesson_box.setVisible(bool(w.lesson))
        self.show_message(None)
        self._mark_unrunnable()
        self._update_defaults(force=True)

    def _update_defaults(self, force: bool = False) -> None:
        w = self.workload
        untouched = self.sizes_edit.text().strip() == self._defaults_text
        binary = w.size_format == "bytes"
        self._defaults_text = sizes_text(w.default_sizes_for(self._chosen_keys()), binary)
        defaults = [
            f"{where} {sizes_range_text(sizes, binary)}"
            for where, sizes in (("CPU", w.default_sizes_cpu), ("GPU", w.default_sizes_gpu))
            if sizes
        ]
        self.sizes_hint.setText(f"{w.size_name}; defaults: {'; '.join(defaults)}")
        self._update_l2()
        if force or untouched:
            self.sizes_edit.setText(self._defaults_text)
            self.sizes_edit.setCursorPosition(0)
            self._check_sizes()

    def _reset_sizes(self) -> None:
        self.sizes_edit.setText(self._defaults_text)
        self.sizes_edit.setCursorPosition(0)
        self._check_sizes()

    def _check_sizes(self) -> list[int] | None:
        try:
            sizes = parse_sizes(self.sizes_edit.text(), self.workload.size_name)
        except UserError as exc:
            self.sizes_error.setText(str(exc))
            self.sizes_error.show()
            return None
        self.sizes_error.hide()
        return sizes

    def _start_clicked(self) -> None:
        self.start_requested.emit()
