"""The Devices panel with a reachable remote: the loopback sshd running the installed package is
"the lab's server". Its devices are listed under their host with the same details as local
ones, and the same "why no GPU" words when it has none; removing it forgets it."""

from __future__ import annotations

import json
import os

import pytest

from explorer.devices.discovery import Discovery
from explorer.devices.model import CpuDevice
from explorer.remote import saved
from explorer.remote.target import SSH_CONFIG_ENV
from explorer.ui.context import AppContext
from explorer.ui.devices_panel import DevicesPanel
from tests.remote.servers import ALIAS, agent_python, free_port, ready_remote

pytest.importorskip("pytestqt")

#: listing a loopback remote's devices takes seconds (ssh, then the agent imports its probes)
LISTED_WITHIN_MS = 90_000


@pytest.fixture
def panel(qtbot, sshd, tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, str(sshd.config))
    local = Discovery(
        devices=[CpuDevice(name="This laptop's CPU", key="cpu", physical_cores=2, logical_cores=4)],
        reports=[],
    )
    made = DevicesPanel(AppContext(local))
    qtbot.addWidget(made)
    made.resize(1280, 760)
    made.show()
    yield made
    made.shutdown()


def test_a_remote_machines_devices_are_listed_under_its_host(panel, qtbot, tmp_path):
    host = panel.remotes.add(ALIAS, "", agent_python())
    assert panel.device_keys() == ["cpu"]  # listed at once, before the remote answers
    qtbot.waitUntil(lambda: host.status != "connecting", timeout=LISTED_WITHIN_MS)
    assert host.status == "ready", host.error
    rows = panel.remote_rows()
    assert rows[0] == (host.ident, None, f"ON {ALIAS.upper()}")
    cpu_rows = [text for ident, key, text in rows if key == "cpu"]
    assert len(cpu_rows) == 1 and f"{os.cpu_count()} threads" in cpu_rows[0]
    # this machine has no GPU: the remote says so in the same words a local probe uses
    why = [text for ident, key, text in rows[1:] if key is None]
    assert len(why) == 1 and why[0].startswith("No GPU there: No NVIDIA GPU")

    panel.select_remote(host.ident, "cpu")
    assert panel.details is not None and panel.details.host == ALIAS
    assert panel.details.header.badge.text() == f"● present on {ALIAS} · CPU"
    assert panel.details.groups["Compute"].values["physical_cores"].text() != "n/a"
    assert panel.selected_key is None and panel.lesson_state().device == "cpu"

    panel.select_remote(host.ident)
    page = panel.remote_page
    assert page.status.text().startswith(f"Connected to {os.uname().nodename}: ")
    assert page.how.values["command"].text() == f"{agent_python()} -m explorer agent"

    # Export lists this machine's devices and, under "remotes", each remote with its host, an
    # unreachable one with ssh's reason
    down = panel.remotes.add(f"127.0.0.1:{free_port()}", "", agent_python())
    qtbot.waitUntil(lambda: down.status != "connecting", timeout=LISTED_WITHIN_MS)
    data = json.loads(panel.export(tmp_path / "devices.json").read_text())
    assert [d["key"] for d in data["devices"]] == ["cpu"] and "host" not in data["devices"][0]
    there, gone = data["remotes"]
    assert there["host"] == ALIAS and there["reachable"] and there["error"] is None
    assert there["python"] == agent_python() and there["hostname"] == os.uname().nodename
    cpu = [d for d in there["devices"] if d["kind"] == "cpu"]
    assert len(cpu) == 1 and cpu[0]["host"] == ALIAS and cpu[0]["logical_cores"] == os.cpu_count()
    assert there["why_no_gpu"].startswith("No NVIDIA GPU")
    assert gone["host"] == "127.0.0.1" and not gone["reachable"] and gone["devices"] == []
    assert "refused the connection" in gone["error"]
    panel.remotes.remove(down)

    # a refresh of the local devices keeps the remote and the selection
    panel.set_discovery(panel.context.discovery)
    assert panel.selected_remote == (host.ident, None)

    panel.remote_page.remove_button.click()
    assert panel.remote_rows() == [] and panel.remotes.hosts == []
    assert json.loads((tmp_path / saved.REMOTES_FILE).read_text())["remotes"] == []
    assert panel.device_keys() == ["cpu"]


def test_the_benchmarks_panel_runs_on_the_remote_and_streams_points_back(sshd, qtbot, tmp_path, monkeypatch):
    """The Benchmarks panel offers the remote's devices under its name; choosing one clears this
    machine's boxes (a run measures on one machine), and the run goes over ssh point by point."""
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, str(sshd.config))
    context, host = ready_remote(qtbot, LISTED_WITHIN_MS)
    panel = BenchPanel(context)
    qtbot.addWidget(panel)
    try:
        c = panel.controls
        c.ceilings_combo.setCurrentIndex(c.ceilings_combo.findData("skip"))
        assert c.selected_devices() == ["cpu"] and c.selected_remote() is None
        boxes = c.remote_boxes()
        assert list(boxes) == [(host.ident, "cpu")]
        boxes[(host.ident, "cpu")].setChecked(True)
        assert c.selected_devices() == []  # this machine's CPU is cleared: one machine per run
        assert c.selected_remote() == (host, ["cpu"])
        c.set_workload("matmul")
        c.sizes_edit.setText("32, 64")
        c.repeats_spin.setValue(3)
        c.budget_spin.setValue(0.2)
        assert panel.start()
        qtbot.waitUntil(lambda: not panel.running, timeout=LISTED_WITHIN_MS)
        assert [p.size for p in panel.points] == [32, 64]
        assert all(p.error is None and p.median_s > 0 for p in panel.points), [p.error for p in panel.points]
        assert all(p.host == ALIAS for p in panel.points)
        assert panel.table.model().data(panel.table.model().index(0, 0)) is not None
        # the roofline draws the points under that machine's roof, named with the host
        remote_roofs = [r for r in panel.roofline.roofs if r.host]
        assert [(r.host, r.device) for r in remote_roofs] == [(ALIAS, "cpu")]
        assert any(label.startswith(f"CPU ON {ALIAS} ") for label in panel.roofline.line_labels())
        assert f"solid: measured on {ALIAS};" in panel.roofline.caption.text()
        # choosing this machine's CPU again clears the remote's box
        c.device_box("cpu").setChecked(True)
        assert c.selected_remote() is None and c.selected_devices() == ["cpu"]
    finally:
        panel.shutdown()
        context.remotes.shutdown()


def test_a_remote_gpu_in_the_visualizer_runs_for_real_on_that_machine(sshd, qtbot, tmp_path, monkeypatch):
    """A remote's GPU is offered in the visualizer under its host, and "Run it for real" with it
    chosen goes to that machine's agent over ssh. The loopback server has no GPU, so its listing
    is given one GPU record as a GPU server's would hold; the run then reaches the agent there,
    which says in one line, naming the machine, that it has no such CUDA GPU."""
    from explorer.devices.model import CudaGpu, CudaLimits
    from explorer.ui.visualizer.panel import VisualizerPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, str(sshd.config))
    context, host = ready_remote(qtbot, LISTED_WITHIN_MS)
    panel = VisualizerPanel(context)
    qtbot.addWidget(panel)
    try:
        assert not any(c.key.startswith(host.ident) for c in panel.session.devices)  # it has none
        host.found.discovery.devices.append(
            CudaGpu(
                name="NVIDIA Lab GPU",
                key="cuda:0",
                index=0,
                compute_capability=(8, 6),
                sm_count=28,
                limits=CudaLimits(max_threads_per_block=1024, warp_size=32),
            )
        )
        host.changed.emit()
        key = f"{host.ident}/cuda:0"
        assert panel.controls.select_device_key(key)
        assert panel.controls.device().name == f"NVIDIA Lab GPU ON {ALIAS}"
        choice = panel.session.edited_side.choice
        assert choice.remote is not None and choice.remote.host == ALIAS and choice.remote_index == 0
        panel.realrun_view.button.click()
        view = panel.realrun_view
        assert view.running and f"Runs on {ALIAS}'s GPU (cuda:0)" in view.where.text()
        qtbot.waitUntil(lambda: not view.running, timeout=LISTED_WITHIN_MS)
        assert view.status.text() == f"on {ALIAS}: cuda:0 is not present; this machine has 0 CUDA GPUs"
    finally:
        panel.shutdown()
        context.remotes.shutdown()
