"""Every page and every built-in lesson step, rendered on one screen in one process.

``python -m tests.ui.render_walk --size 1024x768 --scale 150 --presentation [--png DIR]`` opens
the real main window on an offscreen screen of exactly that size (Qt's offscreen platform with a
screen of its own), at that text size, full screen in presentation mode or filling the screen
otherwise, and walks it: each page as its screenshot shows it and with each folded side column
opened by hand, the pages' other views (the roofline, compare mode, the memory tabs with their
longest presets), then every step of every built-in lesson. At each state it checks:

* nothing clipped and nothing overlapping (``layout_check.clipped``: labels, buttons, fields,
  tabs, the children of scroll areas and what a scroll area's viewport hides);
* the window is the screen's size (no page asked for more);
* a memory tab's own preset named in full; the Benchmarks table's key columns (up to "% of
  peak") in view without scrolling sideways, for a CPU's run and a GPU's (wider names), and the
  note on reading its plot in full;
* every text a figure paints is at least ``FIGURE_TEXT_MIN_SHARE`` of the label text, inside its
  figure and off the other texts (``figure_text``, measured from the painters' own calls);
* in a lesson: the bar's title says the step in full (the whole title or the step's own); the
  latency view's plots with their axes in view where it scrolls;
* in a lesson: the narration shows (never folded away for room) in full or with a scroll bar, and
  what the step's narration points at is in view: its wave with every block placed, the selected
  thread's lane on screen (with its block whole where the zoom allows), the inspector's column
  and the side tab it names open.

It prints one JSON object: the configuration, the states walked, the seconds it took and the
problems per state. ``tests/ui/test_render_walk.py`` runs it for the four screens of the issue.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

#: the screens and text sizes the issue names: (size, text %, presentation mode)
CONFIGS = {
    "1024x768-100": ((1024, 768), 100, False),
    "1024x768-150-presentation": ((1024, 768), 150, True),
    "1280x800-200": ((1280, 800), 200, False),
    "1920x1080-250": ((1920, 1080), 250, False),
}


def screen_platform(size: tuple[int, int], folder: str) -> str:
    """The ``QT_QPA_PLATFORM`` value for an offscreen screen of ``size`` pixels at 96 dpi."""
    width, height = size
    config = {
        "screens": [
            {
                "name": f"screen-{width}x{height}",
                "x": 0,
                "y": 0,
                "width": width,
                "height": height,
                "logicalDpi": 96,
                "logicalBaseDpi": 96,
                "dpr": 1,
            }
        ]
    }
    path = Path(folder) / "screen.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return f"offscreen:configfile={path}"


class Walk:
    def __init__(self, size: tuple[int, int], scale: int, presenting: bool, png: Path | None) -> None:
        from explorer.ui.app import create_application
        from explorer.ui.context import AppContext
        from explorer.ui.main_window import MainWindow
        from tests.ui.machines import lab_discovery

        self.size, self.scale, self.presenting, self.png = size, scale, presenting, png
        self.app = create_application()
        self.window = MainWindow(AppContext(lab_discovery()), discover_on_show=False)
        self.problems: dict[str, list[str]] = {}
        self.states = 0
        w = self.window
        if presenting:
            from explorer.ui.theme import fitting_text_scale, text_scale_pct

            w.show()
            w.set_presentation(True)
            chosen = text_scale_pct()  # what presentation mode picks on a screen it has not seen
            if chosen > fitting_text_scale(*size):
                self.problems["presentation-default"] = [f"presentation mode chose {chosen}% on this screen"]
            w.apply_text_scale(scale)  # the teacher's choice on this projector
        else:
            w.apply_text_scale(scale)
            w.resize(*size)
            w.show()
        self.settle()

    def settle(self) -> None:
        from explorer.ui.settle import settle

        settle()

    # --- checks ---------------------------------------------------------------------------------
    def check(self, name: str, extra: list[str] | None = None) -> None:
        from tests.ui.figure_text import figure_problems, room_problems
        from tests.ui.layout_check import clipped

        self.settle()
        w = self.window
        found = [str(p) for p in clipped(w)]
        if (w.width(), w.height()) != self.size:
            found.append(
                f"the window is {w.width()}x{w.height()}, not the screen's {self.size[0]}x{self.size[1]}"
            )
        found += figure_problems(w)
        found += room_problems(w)  # after the figures painted: the plots they drew
        found += extra or []
        if "-opened" not in name:  # a column the page (or a step) opened fits its content's width
            found += self.sideways_columns()
        self.states += 1
        if found:
            self.problems[name] = found
        if self.png is not None:
            w.grab().save(str(self.png / f"{name}.png"))

    def sideways_columns(self) -> list[str]:
        from PySide6.QtWidgets import QScrollArea

        from explorer.ui.sidepanel import SidePanel

        found = []
        for side in self.window.findChildren(SidePanel):
            body = side.body
            if side.isVisibleTo(self.window) and side.is_open() and isinstance(body, QScrollArea):
                bar = body.horizontalScrollBar()
                if bar.maximum() > 0:
                    found.append(f"the {side.handle.title} column scrolls sideways by {bar.maximum()} px")
        return found

    # --- pages ----------------------------------------------------------------------------------
    def pages(self) -> None:
        from explorer.ui.main_window import PAGE_KEYS
        from tests.ui.machines import measured_gpu_matmul_points, measured_matmul_points

        w = self.window
        for key in PAGE_KEYS:
            panel = w.show_panel(key)
            if key == "benchmarks":
                panel.set_run(measured_matmul_points())  # measured rows, without measuring here
            else:
                panel.prepare_screenshot()
            self.check(f"page-{key}", self.preset_problems(panel) + self.bench_problems(panel))
            if key == "benchmarks":  # a GPU's run: wider names in the table than the CPU's
                panel.set_run(measured_gpu_matmul_points())
                self.check("page-benchmarks-gpu-rows", self.bench_problems(panel))
                panel.set_run(measured_matmul_points())
            self.columns(key, panel)
            for view in panel.SCREENSHOT_VIEWS:
                panel.show_screenshot_view(view)
                tab = panel.tabs.currentWidget() if key == "memory" else None
                if hasattr(tab, "preset"):  # the view's own preset, as its screenshot shows it
                    self.check(f"page-{key}-{view}-preset", self.preset_problems(panel))
                if hasattr(tab, "preset"):  # a memory tab's longest preset, the words at their longest
                    tab.preset.setCurrentIndex(
                        max(range(tab.preset.count()), key=lambda i: len(tab.preset.itemText(i)))
                    )
                self.check(f"page-{key}-{view}")
                self.columns(f"{key}-{view}", panel)
            if key == "visualizer":
                panel.session.set_compare(False)
                assert panel.controls.select_device("h100")
                self.check("page-visualizer-h100")
            if key == "benchmarks":
                panel.plot_tabs.setCurrentIndex(0)

    def preset_problems(self, panel) -> list[str]:
        """A memory tab's chosen preset named in full: the picture is about it. (Its longest
        names may end in "..." with the whole on hover; at 200% on 1280x800 the form's field
        column cut the screenshot's own "Stride 32: a[32*i]" short.)"""
        tab = panel.tabs.currentWidget() if hasattr(panel, "tabs") else None
        box = getattr(tab, "preset", None)
        if box is None or not hasattr(box, "shown_text") or box.shown_text() == box.currentText():
            return []
        return [f"the tab's preset {box.currentText()!r} shows as {box.shown_text()!r}"]

    def bench_problems(self, panel) -> list[str]:
        """The Benchmarks table's key columns, up to "% of peak", in view without scrolling
        sideways (the rest may scroll: at 200% on 1280x800 not every column fits), and the
        note on how to read the plot in full."""
        from explorer.ui.bench.table import COLUMNS

        table = getattr(panel, "table", None)
        if table is None or not hasattr(panel, "plot"):
            return []
        found = []
        header = table.horizontalHeader()
        key = COLUMNS.index("% of peak")
        for column in range(key + 1):
            if header.isSectionHidden(column):
                continue
            left = header.sectionViewportPosition(column)
            if left < 0 or left + header.sectionSize(column) > table.viewport().width() + 1:
                found.append(f"the table's {COLUMNS[column]!r} column is not wholly in view")
        hint = panel.plot.hint_label
        if hint.isVisibleTo(self.window) and hint.is_cut():
            found.append(f"the plot's note {hint.text()!r} is cut short")
        return found

    def columns(self, name: str, panel) -> None:  # a page
        """Each side column the page folded, opened by hand, then left to the page again."""
        from explorer.ui.sidepanel import SidePanel

        for side in panel.findChildren(SidePanel):
            if side.is_open() or not side.isVisibleTo(self.window):
                continue
            side.handle.click()
            self.check(f"page-{name}-{side.handle.title.lower().replace(' ', '-')}-opened")
            side.handle.click()
            side.choice = None
            panel.resize(panel.size())  # the page decides again
            self.settle()

    # --- lessons --------------------------------------------------------------------------------
    def lessons(self) -> None:
        from explorer.lessons.builtin import builtin_paths

        player = self.window.lessons
        for path in builtin_paths():
            assert player.open_path(path)
            for index in range(len(player.lesson.steps)):
                player.show_step(index)
                self.window.current_panel().finish_pending()  # a kernel step's trace
                self.settle()
                self.check(f"lesson-{path.stem[:2]}-step-{index + 1}", self.step_problems(index))
            player.close_lesson()

    def step_problems(self, index: int) -> list[str]:
        from explorer.lessons.model import MemoryState, VisualizerState

        player = self.window.lessons
        found = self.narration_problems() + self.title_problems() + self.latency_problems()
        step = player.lesson.steps[index]
        if isinstance(step.state, VisualizerState):
            found += self.visualizer_step_problems(step.state)
        if isinstance(step.state, MemoryState) and step.state.view == "kernel":
            found += self.kernel_step_problems(step.state.line)
        elif isinstance(step.state, MemoryState):
            found += self.memory_step_problems()
        return found

    def kernel_step_problems(self, line: int) -> list[str]:
        """The script traced, and the line the step picks in view in the table."""
        tab = self.window.panels["memory"].kernel
        if tab.session.report is None:
            return [f"the kernel tab shows no trace: {tab.status.text()}"]
        if not line:
            return []
        rows = tab.table.selectionModel().selectedRows()
        if not rows:
            return [f"line {line} is not picked"]
        rect = tab.table.visualRect(rows[0])
        if not tab.table.viewport().rect().intersects(rect):
            return [f"line {line}'s row is scrolled out of the table's view"]
        return []

    def memory_step_problems(self) -> list[str]:
        """The tab's picture, and coalescing's efficiency graph, at least half in view (their
        columns scroll on a short screen)."""
        from PySide6.QtCore import QPoint, QRect

        tab = self.window.panels["memory"].tabs.currentWidget()
        found = []
        for widget, area, what in (
            (tab.canvas, tab.right_area, "picture"),
            (tab.graph(), tab.left_area, "graph"),
        ):
            if widget is None:
                continue
            top_left = widget.mapTo(area.viewport(), QPoint(0, 0))
            shown = QRect(top_left, widget.size()).intersected(area.viewport().rect())
            if shown.height() < min(widget.height(), area.viewport().height()) / 2:
                found.append(
                    f"the tab's {what} is mostly scrolled out of view ({shown.height()} of {widget.height()} px shown)"
                )
        return found

    def title_problems(self) -> list[str]:
        """The lesson bar's title says the step: whole, or the step's own title whole where it
        fits the bar (at 150% on 1024x768 it read "Why 25% occupancy can still be enough: 16...",
        with room for the step's "16 warps: 25% occupancy")."""
        player = self.window.lessons
        title = player.title_label
        shown = title.shown_text()
        step = player.lesson.steps[player.index].title
        room = title.contentsRect().width()
        if shown.endswith("…") and title.fontMetrics().horizontalAdvance(step) <= room:
            return [f"the lesson bar's title {title.text()!r} shows as {shown!r}"]
        return []

    def latency_problems(self) -> list[str]:
        """The latency view's chart and graph, with their axes, in view where its area scrolls
        (its x axis was below the fold at 150% on 1024x768 with lesson 14 open), and the legend
        under them whole or wholly below the fold (it was cut through its words there)."""
        page = self.window.panels["visualizer"].latency_page
        if not page.view.isVisibleTo(self.window) or page.view.run is None:
            return []
        top, bottom = page.view.plots_span()
        start = page.view_area.verticalScrollBar().value()
        end = start + page.view_area.viewport().height()
        if bottom > end + 1 or (bottom - top <= end - start and top < start - 1):
            return [
                f"the latency plots (rows {top}-{bottom} px) are partly scrolled out of view ({start}-{end} px shown)"
            ]
        legend_end = page.view.legend_bottom()  # whole, or whole below the fold: never cut through
        if bottom + 3 < end - 1 and legend_end > end + 1:
            return [f"the latency legend (rows {bottom + 3}-{legend_end} px) is cut by the fold at {end} px"]
        return []

    def narration_problems(self) -> list[str]:
        player = self.window.lessons
        if not player.body.isVisible():
            return ["the narration is folded away"]
        view = player.narration
        lines = view.fontMetrics().lineSpacing()
        doc_h = view.document().size().height()
        shown = view.viewport().height()
        if doc_h > shown + 2 and view.verticalScrollBar().maximum() <= 0:
            return [f"the narration needs {doc_h:.0f} px, shows {shown} and does not scroll"]
        if shown < min(doc_h, 2 * lines) - 2:
            return [f"the narration shows {shown} px: less than two of its lines"]
        return []

    def visualizer_step_problems(self, state) -> list[str]:  # a VisualizerState
        vis = self.window.panels["visualizer"]
        found: list[str] = []
        a = vis.session.animation(0)
        if a is None:
            if not vis.left_side.is_open():
                found.append("the launch cannot run, and the launch controls that say why are folded")
            return found
        if (
            state.wave >= 1
            and state.blocks_placed is None
            and state.clock is None
            and state.wave <= a.plan.waves
        ):
            fill = a.fill()
            wave_blocks = len(a.plan.blocks_in_wave(state.wave - 1))
            if fill is None or fill.wave != state.wave - 1 or fill.dispatched != wave_blocks:
                placed = "none" if fill is None else f"{fill.dispatched} of wave {fill.wave + 1}"
                found.append(
                    f"wave {state.wave} should show its {wave_blocks} blocks placed; it shows {placed}"
                )
        if state.side_tab is not None and not vis.right_side.is_open():
            found.append(f"the step names the {state.side_tab} tab, and its column is folded")
        if state.thread:
            if not vis.left_side.is_open():
                found.append("a thread is selected, and the inspector's column is folded")
            found += self.selection_in_view(vis)
        return found

    def selection_in_view(self, vis) -> list[str]:  # the visualizer
        from PySide6.QtCore import QRect

        s = vis.session.selection
        if s is None or vis.session.compare:
            return ["the step's thread is not selected"]
        grid, area = vis.sm_view.grid, vis.sm_view.scroll_area
        plan = vis.session.animation(0).plan
        place = plan.placement(s.block)
        lay = grid.layout_now()
        x, y = lay.slot_origin(place.sm, place.slot)
        tile = QRect(x, y, lay.tile_w, lay.tile_h)
        view = QRect(-grid.x(), -grid.y(), area.viewport().width(), area.viewport().height())
        lane = grid.slot_center(place.sm, place.slot, s.warp, s.lane)
        if not view.contains(lane):
            return ["the selected thread's lane is scrolled out of view"]
        if tile.width() <= view.width() and tile.height() <= view.height() and not view.contains(tile):
            return ["the selected thread's block is partly scrolled out of view, though it fits"]
        return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", required=True)
    parser.add_argument("--scale", type=int, required=True)
    parser.add_argument("--presentation", action="store_true")
    parser.add_argument("--png", help="a folder to save a picture of every state in")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="render-walk-") as folder:
        os.environ["QT_QPA_PLATFORM"] = screen_platform((width, height), folder)
        os.environ["DEVICE_EXPLORER_HOME"] = folder  # nothing of the user's settings or results
        png = Path(args.png) if args.png else None
        if png is not None:
            png.mkdir(parents=True, exist_ok=True)
        walk = Walk((width, height), args.scale, args.presentation, png)
        walk.pages()
        walk.lessons()
        walk.window.close()
    print(
        json.dumps(
            {
                "size": args.size,
                "scale": args.scale,
                "presentation": args.presentation,
                "states": walk.states,
                "seconds": round(time.perf_counter() - started, 1),
                "problems": walk.problems,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
