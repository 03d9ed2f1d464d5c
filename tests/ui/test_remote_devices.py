"""Remote machines in the real window: the Add dialog's checks and the commands it shows, the list
remembered across a restart and a damaged file, and a remote that cannot be reached shown with
ssh's own reason while this machine's devices list at once.

The unreachable remote is real: the system's ssh client against a closed port on 127.0.0.1.
The reachable one is the real loopback sshd of ``tests/remote`` running the installed package.
"""

from __future__ import annotations

import json
import os

import pytest

from explorer.remote import saved
from explorer.remote.target import SSH_CONFIG_ENV
from explorer.ui.context import AppContext
from explorer.ui.devices_panel import ADD_REMOTE, PRESENT_HEADER
from explorer.ui.main_window import MainWindow
from explorer.ui.remote_dialog import AddRemoteDialog
from tests.processes import alive
from tests.remote.servers import free_port

#: the ssh client has given up on a closed port long before this
SSH_FAILS_WITHIN_MS = 20_000


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, os.devnull)  # not this machine's own ssh config
    return tmp_path


@pytest.fixture
def window(qtbot, home, fake_nvml, fake_clock, fake_timer, no_gpu_discovery):
    made = []

    def make():
        w = MainWindow(
            AppContext(no_gpu_discovery),
            discover_on_show=False,
            devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
        )
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        w.devices_panel.shutdown()


def _closed_port() -> str:
    return f"127.0.0.1:{free_port()}"


def test_the_dialog_refuses_an_ssh_option_in_one_line_and_saves_nothing(window, home, qtbot):
    w = window()
    panel = w.devices_panel
    assert panel.add_remote_button.text() == ADD_REMOTE
    dialog = AddRemoteDialog(panel.remotes, panel)
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.add_button.isEnabled()  # nothing typed yet
    dialog.destination_edit.setText("-oProxyCommand=x")
    line = dialog.error_label.text()
    assert dialog.error_label.isVisible() and "\n" not in line
    assert "'-oProxyCommand=x'" in line and "option" in line
    assert not dialog.add_button.isEnabled()
    assert dialog.try_add() is False and dialog.isVisible()
    assert panel.remotes.hosts == [] and not (home / saved.REMOTES_FILE).exists()

    dialog.destination_edit.setText("gpu lab")
    assert "'gpu lab'" in dialog.error_label.text()
    dialog.destination_edit.setText("gpu-lab")
    dialog.prefix_edit.setText("--gres=gpu:1")
    assert "--gres=gpu:1" in dialog.error_label.text() and not dialog.add_button.isEnabled()


def test_the_dialog_shows_the_launcher_and_the_command_before_first_use(window, qtbot):
    w = window()
    dialog = AddRemoteDialog(w.devices_panel.remotes, w.devices_panel)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.destination_edit.setText("alice@gpu.example.edu:2222")
    dialog.prefix_edit.setText("srun --gres=gpu:1 --time=10 --partition=teach")
    dialog.python_edit.setText("~/dx/bin/python")
    shown = dialog.preview.text()
    assert "ssh -p 2222 alice@gpu.example.edu" in shown
    assert "srun --gres=gpu:1 --time=10 --partition=teach ~/dx/bin/python -m explorer agent" in shown
    assert dialog.error_label.isHidden() and dialog.add_button.isEnabled()
    dialog.python_edit.setText("")
    assert "python3 -m explorer agent" in dialog.preview.text()  # the default, shown


@pytest.mark.slow
def test_an_unreachable_remote_shows_its_reason_and_the_list_survives_a_restart(window, home, qtbot):
    w = window()
    panel = w.devices_panel
    dest = _closed_port()
    dialog = AddRemoteDialog(panel.remotes, panel)
    qtbot.addWidget(dialog)
    dialog.destination_edit.setText(dest)
    assert dialog.try_add() is True
    host = dialog.added
    # this machine's devices are listed while the remote connects, and after it failed
    assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    texts = panel.list_texts()
    assert texts[0] == PRESENT_HEADER.upper() and "ON 127.0.0.1" in texts
    qtbot.waitUntil(lambda: host.status == "unreachable", timeout=SSH_FAILS_WITHIN_MS)
    assert "refused the connection" in host.error and "\n" not in host.error
    rows = [text for ident, key, text in panel.remote_rows() if ident == host.ident and key is None]
    assert any(t.startswith("✕ cannot be reached: 127.0.0.1 refused the connection") for t in rows)
    assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    # the host's page names the reason, the command, and offers Reconnect and Remove
    panel.select_remote(host.ident)
    page = panel.remote_page
    assert page is not None and page.status.text().startswith("Cannot be reached: 127.0.0.1 refused")
    assert page.how.values["command"].text() == "python3 -m explorer agent"

    # a restart finds the remote again, connects in the background, and says why it fails again
    again = window()
    hosts = again.devices_panel.remotes.hosts
    assert [h.saved.destination for h in hosts] == [dest]
    assert again.devices_panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    qtbot.waitUntil(lambda: hosts[0].status == "unreachable", timeout=SSH_FAILS_WITHIN_MS)
    assert not again.context.notices

    # Remove forgets it, here and on disk
    again.devices_panel.select_remote(hosts[0].ident)
    again.devices_panel.remote_page.remove_button.click()
    assert again.devices_panel.remotes.hosts == [] and again.devices_panel.remote_rows() == []
    assert json.loads((home / saved.REMOTES_FILE).read_text())["remotes"] == []


@pytest.mark.slow
def test_a_damaged_list_is_named_once_and_the_window_opens_with_the_good_entries(window, home, qtbot):
    path = home / saved.REMOTES_FILE
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "remotes": [
                    {"destination": "-oProxyCommand=touch /tmp/pwned", "prefix": "", "python": "python3"},
                    {"destination": _closed_port(), "prefix": "", "python": "python3"},
                ],
            }
        )
    )
    w = window()
    assert len(w.context.notices) == 1
    notice = w.context.notices[0]
    assert "-oProxyCommand" in notice and str(path) in notice and "\n" not in notice
    assert w.notice_bar.isVisible()
    (aside,) = home.glob(saved.REMOTES_FILE + ".damaged-*")
    assert "-oProxyCommand" in aside.read_text()  # nothing the user had is lost
    assert len(w.devices_panel.remotes.hosts) == 1
    assert w.devices_panel.device_keys() == ["cpu", "catalog:gtx-1650"]

    path.write_bytes(b"\x00\xff garbage")
    w2 = window()
    assert w2.devices_panel.remotes.hosts == [] and len(w2.context.notices) == 1
    assert "could not be used" in w2.context.notices[0]
    assert w2.devices_panel.device_keys() == ["cpu", "catalog:gtx-1650"]


def test_a_remote_gpu_shows_the_same_details_and_its_live_readings(window, qtbot):
    """No GPU can exist here, so the host's thread is stood in for at the point where its answers
    reach the window (the listing, then the readings): what is drawn from them is the real panel."""
    from explorer.devices.discovery import Discovery
    from explorer.devices.live import LiveReading
    from explorer.remote.saved import make_saved
    from explorer.remote.session import RemoteDevices
    from explorer.ui.device_details import DeviceDetails
    from explorer.ui.remote_hosts import RemoteHost
    from tests.ui.conftest import gpu_device

    w = window()
    panel = w.devices_panel
    remotes = panel.remotes
    host = RemoteHost(make_saved("gpu-lab"), "lab", remotes)
    host.changed.connect(remotes.changed.emit)
    remotes.hosts.append(host)
    gpu = gpu_device(0)
    found = RemoteDevices(host.remote, Discovery(devices=[gpu], reports=[]), "gpu-lab-01", None, 1.5)
    host._on_listed(0, found)
    rows = panel.remote_rows()
    assert rows[0] == ("lab", None, "ON GPU-LAB")
    assert rows[1][:2] == ("lab", "cuda:0") and "cuda:0" in rows[1][2]
    assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]  # the local list is untouched

    panel.select_remote("lab", "cuda:0")
    assert panel.details.header.badge.text() == "● present on gpu-lab · cuda:0"
    local = DeviceDetails(gpu)  # the same record shown as this machine's GPU
    qtbot.addWidget(local)
    assert set(panel.details.groups) == set(local.groups) == {"Compute", "Memory", "Limits", "Board"}
    for name, group in local.groups.items():
        shown = {key: label.text() for key, label in panel.details.groups[name].values.items()}
        assert shown == {key: label.text() for key, label in group.values.items()}
    live = panel.live_view
    assert live is not None and live.monitor is host.live
    reading = LiveReading(
        timestamp_s=1.0, utilization_gpu_pct=42.0, memory_used_bytes=1 << 30, memory_total_bytes=4 << 30
    )
    host._on_live(0, [reading])
    assert live.values.values["utilization_gpu_pct"].text() == "42 %"
    assert live.values.values["memory_used_bytes"].text() == "1 GiB of 4 GiB"

    # the connection drops: the rows say why, the details fall back to this machine's device
    host._on_failed(0, "the connection was lost: the connection to gpu-lab dropped (broken pipe)")
    texts = [text for _i, _k, text in panel.remote_rows()]
    assert texts == [
        "ON GPU-LAB",
        "✕ cannot be reached: the connection was lost: the connection to gpu-lab dropped (broken pipe)",
    ]
    assert panel.selected_key == "cpu" and panel.selected_remote is None


@pytest.mark.slow
def test_a_host_that_never_answers_delays_nothing_and_closing_stops_its_ssh(window, qtbot):
    """A port that accepts and then says nothing (a firewall's tarpit): the window is up with this
    machine's devices, the host reads 'connecting…', and closing the window ends the ssh child
    at once instead of waiting out ssh's timeout."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        w = window()
        panel = w.devices_panel
        host = panel.remotes.add(f"127.0.0.1:{silent.getsockname()[1]}")
        assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]
        qtbot.waitUntil(lambda: host._agent is not None and host._agent.pid is not None, timeout=5_000)
        pid = host._agent.pid
        rows = [text for _i, key, text in panel.remote_rows() if key is None]
        assert rows[1].startswith("connecting… (127.0.0.1:")
        w.close()
        qtbot.waitUntil(lambda: not alive(pid), timeout=3_000)
        assert host.status == "connecting"  # closed while connecting: no failure is invented
    finally:
        silent.close()
