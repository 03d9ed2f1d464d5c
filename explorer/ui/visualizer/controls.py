"""The launch form: device, grid, block, shared memory, registers, N and the lesson presets.

A view of the ``LaunchSession``'s edited side: it shows that side's setup and, when the teacher
edits a field, hands the session a ``LaunchSetup`` (a ``LaunchConfig`` built from the spin boxes'
numbers, the Size N field read by the core's ``parse_problem_size``). Validation is the core's, so
the message under the fields is exactly the CLI's.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Gpu
from explorer.devices.names import short_device_name
from explorer.launch.config import (
    FIELD_MAX_BLOCK,
    FIELD_MAX_GRID,
    FIELD_MAX_REGS,
    FIELD_MAX_SMEM_BYTES,
    Dim3,
    LaunchConfig,
    LaunchValidationError,
    parse_problem_size,
    problem_size_text,
)
from explorer.launch.presets import PRESETS, Preset
from explorer.launch.session import LaunchSession, LaunchSetup, TypedSize
from explorer.ui.guard import qt_guard
from explorer.ui.widgets import NarrowCombo, number_field

INT_MAX = 2_147_483_647


def _spin(minimum: int, maximum: int, value: int, step: int = 1, suffix: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, maximum)
    box.setValue(value)
    box.setSingleStep(step)
    box.setSuffix(suffix)
    # no group separators: "1,024" in a narrow box reads as "1,0"; digits alone fit and type cleanly
    box.setGroupSeparatorShown(False)
    box.setAccelerated(True)
    return number_field(box)


class LaunchControls(QWidget):
    """The form for ``session``'s edited side (A, or in compare mode the side chosen)."""

    #: Enter or Escape in a field: the user is done typing, so the panel takes the keys back
    #: (Space plays, arrows step) instead of the field typing a space
    field_left = Signal()

    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._devices: list[Gpu] = []  # the device box's entries, in its order
        self._quiet = False  # the fields are being filled from the session: nothing to hand over
        self._applied_n = ""  # Size N as last applied: Escape in the field goes back to it
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)

        # Labels stay short so the fields get the width: a projector at 1280x800 must show every digit.
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.device_combo = NarrowCombo()
        self.device_combo.setMinimumContentsLength(12)
        self.device_combo.currentIndexChanged.connect(self._device_tooltip)
        # the device on a row of its own: "H100 SXM5 80GB (catalog), 132 SMs" needs the full width
        form.addRow(QLabel("Device"))
        form.addRow(self.device_combo)

        self.preset_combo = NarrowCombo()
        self.preset_combo.addItem("Lesson presets...")
        for p in PRESETS:
            self.preset_combo.addItem(p.short_name)
            self.preset_combo.setItemData(self.preset_combo.count() - 1, p.name, Qt.ItemDataRole.ToolTipRole)
        self.preset_combo.setMinimumContentsLength(12)
        form.addRow("Preset", self.preset_combo)

        # from 0, so a student can type 0 and read why it is refused
        self.grid_spins = [_spin(0, most, 1) for most in FIELD_MAX_GRID]
        self.grid_spins[0].setValue(98)
        self.block_spins = [_spin(0, most, 1) for most in FIELD_MAX_BLOCK]
        self.block_spins[0].setValue(1024)
        form.addRow(
            self._label("Grid", "Blocks in the grid along x, y and z (gridDim)"), self._row(self.grid_spins)
        )
        form.addRow(
            self._label("Block", "Threads per block along x, y and z (blockDim)"), self._row(self.block_spins)
        )
        self.smem_spin = _spin(0, FIELD_MAX_SMEM_BYTES, 0, 1024, " B")
        form.addRow(self._label("Shared mem", "Dynamic shared memory per block, in bytes"), self.smem_spin)
        self.regs_spin = _spin(1, FIELD_MAX_REGS, 32)
        form.addRow(
            self._label("Registers", "Registers per thread (what the compiler chose)"), self.regs_spin
        )
        self.n_edit = QLineEdit("100000")
        self.n_edit.setPlaceholderText("none: every thread works")
        self.n_edit.setToolTip(
            "Problem size: N, or X,Y or X,Y,Z for a 2D or 3D problem; threads outside it idle"
        )
        form.addRow(self._label("Size N", self.n_edit.toolTip()), self.n_edit)
        outer.addLayout(form)

        self.lesson_label = QLabel("")
        self.lesson_label.setWordWrap(True)
        self.lesson_label.setProperty("role", "caption")  # the theme's muted text colour
        italic = self.lesson_label.font()
        italic.setItalic(True)
        self.lesson_label.setFont(italic)
        outer.addWidget(self.lesson_label)

        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet(
            "color: #991b1b; background: #fee2e2; border: 1px solid #fca5a5; border-radius: 4px; padding: 4px;"
        )
        self.error_label.hide()
        outer.addWidget(self.error_label)

        for box in (*self.grid_spins, *self.block_spins, self.smem_spin, self.regs_spin):
            box.valueChanged.connect(self._edited)
        self.n_edit.editingFinished.connect(self._edited)
        self.device_combo.currentIndexChanged.connect(self._edited)
        self.preset_combo.activated.connect(self._preset_chosen)
        for field in (*self.grid_spins, *self.block_spins, self.smem_spin, self.regs_spin, self.n_edit):
            field.installEventFilter(self)
        session.events.devices.connect(self._show_devices)
        session.events.launch.connect(self._show_setup)
        self._show_devices()
        self._show_setup()

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and event.key() == Qt.Key.Key_Space  # type: ignore[attr-defined]
            and not event.modifiers()  # type: ignore[attr-defined]
        ):
            # no field of the form takes a space (numbers, and N's commas): Space after typing
            # "98" takes the value, as Enter does, and plays (it used to do nothing at all)
            if isinstance(obj, QSpinBox):
                obj.interpretText()
            elif obj is self.n_edit:
                self.n_edit.editingFinished.emit()
            self.field_left.emit()
            event.ignore()  # not the field's: the window's Space shortcut answers
            return True
        if event.type() == QEvent.Type.KeyPress:
            key = event.key()  # type: ignore[attr-defined]
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                QTimer.singleShot(0, self.field_left.emit)  # after the field has applied its value
            elif key == Qt.Key.Key_Escape:
                if obj is self.n_edit:
                    self.n_edit.setText(self._applied_n)  # Escape drops what was typed
                elif isinstance(obj, QSpinBox):  # show the value in force again, dropping the typing
                    obj.lineEdit().setText(obj.prefix() + obj.textFromValue(obj.value()) + obj.suffix())
                self.field_left.emit()
                return True
        return super().eventFilter(obj, event)

    @staticmethod
    def _label(text: str, tip: str) -> QLabel:
        label = QLabel(text)
        label.setToolTip(tip)
        return label

    @staticmethod
    def _row(spins: list[QSpinBox]) -> QWidget:
        """x gets the most room: it is the axis that reaches millions; y and z stay in the thousands."""
        w = QWidget()
        lay = QHBoxLayout(w)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        for s, stretch in zip(spins, (3, 2, 2), strict=True):
            s.setMinimumWidth(s.fontMetrics().horizontalAdvance("0" * (5 if stretch == 3 else 3)) + 28)
            lay.addWidget(s, stretch)
        return w

    def _device_tooltip(self, index: int) -> None:
        self.device_combo.setToolTip(self.device_combo.itemData(index, Qt.ItemDataRole.ToolTipRole) or "")

    # --- what the form holds -----------------------------------------------------------------
    def device(self) -> Gpu | None:
        """The device chosen in the device box."""
        i = self.device_combo.currentIndex()
        return self._devices[i] if 0 <= i < len(self._devices) else None

    def launch(self) -> LaunchConfig:
        """The launch the fields hold; LaunchValidationError when Size N does not parse."""
        n, extent = parse_problem_size(self.n_edit.text().strip())
        return self._config(n, extent)

    def _config(self, n: int | None, extent: Dim3 | None) -> LaunchConfig:
        return LaunchConfig(
            Dim3(*(s.value() for s in self.grid_spins)),
            Dim3(*(s.value() for s in self.block_spins)),
            self.smem_spin.value(),
            self.regs_spin.value(),
            n,
            extent,
        )

    def setup(self) -> LaunchSetup:
        """The form as a side's setup: device, launch, and the lesson preset while it still holds it."""
        device = self.device()
        key = device.key if device is not None else ""
        text = self.n_edit.text().strip()
        try:
            config, bad = self.launch(), None
        except LaunchValidationError as exc:
            config, bad = self._config(None, None), TypedSize(text, str(exc))
        preset = self.session.edited_setup.preset
        if preset is not None and (bad is not None or preset.config != config):
            preset = None  # edited by hand: the preset's name and lesson no longer apply
        return LaunchSetup(key, config, preset, bad)

    @property
    def preset(self) -> Preset | None:
        """The lesson preset the fields hold, None once they were edited away from it."""
        return self.session.edited_setup.preset

    # --- the teacher edits -----------------------------------------------------------------
    def _edited(self, *_args) -> None:
        if self._quiet:
            return
        self._applied_n = self.n_edit.text()
        self.session.edit(self.setup())

    def _preset_chosen(self, index: int) -> None:
        if index >= 1:
            self.apply_preset(PRESETS[index - 1])

    def apply_preset(self, preset: Preset) -> None:
        """What choosing ``preset`` in the menu does: the edited side takes its launch."""
        self.session.apply_preset(preset)

    def select_device(self, query: str) -> bool:
        """Pick the device ``query`` means by the CLI's rules (``explorer.devices.names``: case,
        spaces and dashes ignored, a GPU here before a catalog sheet of that name); False, and the
        choice unchanged, when it means none or several."""
        return self.session.select_device(query)

    def select_device_key(self, key: str) -> bool:
        """Pick the device with exactly this key, as a click in the box would; False when it is not here."""
        for i, d in enumerate(self._devices):
            if d.key == key:
                self.device_combo.setCurrentIndex(i)
                return True
        return False

    # --- the session's edited side, shown ---------------------------------------------------
    def _show_devices(self) -> None:
        """Present GPUs first, then other machines' GPUs, then catalog ones marked as such."""
        self._quiet = True
        self.device_combo.clear()
        self._devices = [c.device for c in self.session.devices]
        for d in self._devices:
            label = short_device_name(d.name) + (" (catalog)" if d.kind == "catalog" else "")
            full = f"{d.name} (catalog)" if d.kind == "catalog" else d.display_name
            if d.sm_count:
                label += f", {d.sm_count} SMs"
                full += f", {d.sm_count} SMs"
            self.device_combo.addItem(label, d.key)
            self.device_combo.setItemData(self.device_combo.count() - 1, full, Qt.ItemDataRole.ToolTipRole)
        self._select_quietly(self.session.edited_setup.device_key)
        self._quiet = False

    def _select_quietly(self, key: str) -> None:
        keys = [d.key for d in self._devices]
        if key in keys:
            self.device_combo.setCurrentIndex(keys.index(key))
        self._device_tooltip(self.device_combo.currentIndex())

    def _show_setup(self) -> None:
        """Fill the fields with the edited side's setup (unless they hold it already: what was
        typed stays as typed), its preset's caption, and the core's message when it cannot run."""
        setup = self.session.edited_setup
        c = setup.config
        self._applied_n = setup.bad_size.text if setup.bad_size is not None else problem_size_text(c)
        self._quiet = True
        if setup != self.setup():
            self._select_quietly(setup.device_key)
            for spins, dim in ((self.grid_spins, c.grid), (self.block_spins, c.block)):
                for spin, v in zip(spins, dim.as_tuple(), strict=True):
                    spin.setValue(v)
            self.smem_spin.setValue(c.shared_mem_bytes)
            self.regs_spin.setValue(c.regs_per_thread)
            self.n_edit.setText(self._applied_n)
        self._quiet = False
        preset = setup.preset
        self.preset_combo.setCurrentIndex(0 if preset is None else PRESETS.index(preset) + 1)
        self.lesson_label.setText("" if preset is None else preset.lesson)
        self.lesson_label.setVisible(preset is not None)
        self.show_error(self.session.edited_side.problem or None)

    def show_error(self, message: str | None) -> None:
        if message:
            self.error_label.setText(message)
            self.error_label.show()
        else:
            self.error_label.clear()
            self.error_label.hide()
