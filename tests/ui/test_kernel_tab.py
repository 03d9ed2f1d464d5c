"""The Memory page's "Your kernel" tab on a real trace: the script runs in a child under the
simulator, the table shows each line's figures, a picked line draws its first request, and saving
the file traces it again."""

from __future__ import annotations

import os
import shutil

from explorer.resources import resource_path
from explorer.ui.memory.kernel_tab import KernelTab

TRACE_S = 600  # an outer deadline only: the test waits on the tab's own signal


def _row(tab: KernelTab, text: str) -> int:
    launch = tab.session.launch
    assert launch is not None
    return next(i for i, ln in enumerate(launch.lines) if text in ln.source)


def test_a_traced_transpose_shows_its_bank_conflicts_and_draws_the_picked_line(qtbot, tmp_path):
    script = tmp_path / "transpose.py"
    shutil.copy(resource_path("examples", "transpose_shared.py"), script)
    tab = KernelTab()
    qtbot.addWidget(tab)
    with qtbot.waitSignal(tab.traced, timeout=TRACE_S * 1000):
        tab.open(str(script))
    assert tab.session.problem == "", tab.session.problem
    assert tab.launches.count() == 2  # the naive and the padded kernel
    row = _row(tab, "out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]")
    assert tab.table.item(row, 4).text() == "1,024 / 32"
    assert tab.table.item(row, 4).background().color().alpha() > 0  # the worst line is coloured
    tab.table.selectRow(row)
    assert tab.pictures.isVisibleTo(tab) and tab.pictures.currentWidget() is tab.banks
    assert "32 lanes" in tab.detail.text() or "lane 0" in tab.detail.text()

    tab.launches.setCurrentIndex(1)  # the padded kernel: no conflict
    row = _row(tab, "out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]")
    assert tab.table.item(row, 4).text() == "32 / 32"

    # the student saves the file in their editor: the tab traces it again by itself
    text = script.read_text().replace("TILE + 1", "TILE + 2")
    with qtbot.waitSignal(tab.traced, timeout=TRACE_S * 1000):
        script.write_text(text)
        st = script.stat()
        os.utime(script, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert tab.session.problem == ""


def test_a_file_that_is_no_script_is_one_line_in_the_tab(qtbot, tmp_path):
    tab = KernelTab()
    qtbot.addWidget(tab)
    tab.open(str(tmp_path / "notes.txt"))
    assert "is not a Python file" in tab.status.text() and "\n" not in tab.status.text()
    assert tab.table.rowCount() == 0
