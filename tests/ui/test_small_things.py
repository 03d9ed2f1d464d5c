"""Small things in the window: File > Export keeps the name typed, F1 lists the
text-size keys, the real run's caption reads in the dark theme, the bank preset's name follows the
padding, empty plots show the sizes a run will measure, the divergence page says what it assumes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from explorer.memory.divergence import EQUAL_COST_NOTE
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.panel import ExportFormat, export_format
from tests.ui.machines import lab_discovery


@pytest.fixture
def window(qtbot, fake_nvml, fake_clock, fake_timer):
    w = MainWindow(
        AppContext(lab_discovery()),
        discover_on_show=False,
        devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
    )
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    yield w
    w.close()
    w.set_theme("light")


CSV = ExportFormat("csv", "CSV table", ".csv")
JSON = ExportFormat("json", "JSON", ".json")
PNG = ExportFormat("png", "PNG picture", ".png")


def test_export_keeps_the_format_the_name_was_typed_with():
    """File > Export with the CSV filter turned ``vecadd.json`` into ``vecadd.json.csv``."""
    formats = (CSV, JSON, PNG)
    fmt = export_format(Path("/tmp/vecadd.json"), formats, CSV)
    assert fmt is JSON and fmt.with_suffix(Path("/tmp/vecadd.json")) == Path("/tmp/vecadd.json")
    assert export_format(Path("/tmp/VECADD.PNG"), formats, CSV) is PNG
    assert export_format(Path("/tmp/vecadd"), formats, JSON) is JSON  # no suffix: the filter's
    assert export_format(Path("/tmp/run.txt"), formats, CSV).with_suffix(Path("/tmp/run.txt")) == Path(
        "/tmp/run.txt.csv"
    )  # a suffix no format has: the chosen one's added


def test_f1_lists_the_text_size_keys(window):
    rows = dict((words, keys) for keys, words in window.shortcuts_dialog().sections[0][1])
    assert "Ctrl+=" in rows["Text size: Larger"] and "Ctrl++" in rows["Text size: Larger"]
    assert rows["Text size: Smaller"] == "Ctrl+-" and rows["Text size: Actual size (100%)"] == "Ctrl+0"
    assert "F11" in rows["Presentation mode"] and rows["Next step"] == "PgDown"


def test_the_real_runs_caption_reads_in_the_dark_theme(window):
    """The 2D real run's caption was drawn in near-black on the dark theme's dark ground."""
    from explorer.launch_runs.realrun import RealRunResult

    window.set_theme("dark")
    vis = window.show_panel("visualizer")
    strip = vis.realrun_view.strip
    n = 60 * 60
    strip.set_result(
        RealRunResult(
            grid=(4, 4, 1),
            block=(16, 16, 1),
            n=n,
            backend="simulator",
            device_name="test",
            block_of_element=np.zeros(n, dtype=np.int64),
            thread_of_element=np.zeros(n, dtype=np.int64),
            writes_per_element=np.ones(n, dtype=np.int32),
            sum_correct=True,
            kernel_s=0.0,
            total_s=0.0,
            extent=(60, 60, 1),
        )
    )
    strip.resize(400, strip.height())
    image = strip.grab().toImage()
    words_row = image.height() - strip.fontMetrics().height() // 2 - 6
    light = [
        image.pixelColor(x, y).lightnessF() > 0.6
        for x in range(4, 200)
        for y in range(words_row - 4, words_row + 4)
    ]
    assert any(light), "no light text in the caption's row on the dark ground"


def test_the_bank_preset_is_named_for_the_padded_tile_when_padding_is_on(window):
    """With padding on, the menu kept "Column of tile[32][32]" while the picture showed the padded
    tile; a preset chosen from the menu takes the padding off (a preset is the whole access)."""
    memory = window.show_panel("memory")
    memory.show_screenshot_view("banks")
    banks = memory.banks
    banks.preset.setCurrentIndex([p.name for p in banks.patterns].index("Column of tile[32][32]"))
    assert not banks.pad.isChecked()
    banks.pad.setChecked(True)
    assert banks.preset.currentText() == "Column of tile[32][33] (padded)"
    assert banks.canvas.result.conflict_degree == 1
    state = memory.lesson_state()  # a step keeps the unpadded preset and the padding
    assert (state.pattern, state.stride, state.pad) == ("Column of tile[32][32]", 32, True)
    banks.preset.setCurrentIndex([p.name for p in banks.patterns].index("Stride 2: s[2*i]"))
    assert not banks.pad.isChecked() and banks.canvas.result.conflict_degree == 2


def test_the_divergence_page_says_it_assumes_an_equal_cost_if_and_else(window):
    from PySide6.QtWidgets import QLabel

    memory = window.show_panel("memory")
    memory.show_screenshot_view("divergence")
    QApplication.processEvents()
    texts = [w.text() for w in memory.divergence.findChildren(QLabel) if w.isVisibleTo(window)]
    assert any(EQUAL_COST_NOTE in t for t in texts)


def test_an_empty_plot_spans_the_sizes_the_run_will_measure(window):
    """Lessons 04 and 05 opened on an empty plot whose x axis ran from 1,000 to 10^9."""
    bench = window.show_panel("benchmarks")
    bench.controls.set_workload("matmul")
    bench.plot.set_points([])
    QApplication.processEvents()
    sizes = bench.controls.workload.default_sizes_for(["cpu"])
    (x_lo, x_hi), _ = bench.plot.main.getPlotItem().vb.viewRange()
    assert 10**x_lo <= min(sizes) and 10**x_hi >= max(sizes)
    assert 10**x_hi < 10 * max(sizes) and 10**x_lo > min(sizes) / 10
