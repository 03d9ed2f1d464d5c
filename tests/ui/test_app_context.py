"""The window's Qt adapter of ``AppModel``: each model event becomes its signal, carrying the
model's new value, and every change made through the adapter is the model's."""

from __future__ import annotations

import pytest

from explorer.app_model import AppModel
from explorer.bench.remeasure import Measured
from explorer.devices.discovery import Discovery
from explorer.devices.model import CpuDevice
from explorer.roofs.model import Roof
from explorer.ui.context import AppContext


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))


def _discovery() -> Discovery:
    return Discovery(devices=[CpuDevice(name="Test CPU", key="cpu")], reports=[])


def test_each_model_event_is_one_signal_with_the_new_value(qapp):
    model = AppModel()
    context = AppContext(model=model)
    heard: list[tuple[str, object]] = []
    context.discovery_changed.connect(lambda d: heard.append(("discovery", d)))
    context.status_message.connect(lambda t: heard.append(("status", t)))
    context.notice_added.connect(lambda t: heard.append(("notice", t)))
    context.roofs_measured.connect(lambda r: heard.append(("roofs", r)))

    found = _discovery()
    model.set_discovery(found)  # a change made on the model reaches the signal
    context.say("wrote results.csv")
    context.add_notice("the saved results were moved aside")
    context.add_notice("")  # nothing to tell: no signal
    roof = Roof("cpu", "Test CPU", [], measured_at=5.0)
    seen_in_book: list[Roof | None] = []
    context.roofs_measured.connect(lambda _r: seen_in_book.append(context.roofs.get("cpu")))
    result = [Measured("cpu", roof, "cpu: measured on a quiet machine and stored")]
    context.measured_again(result)

    assert heard == [
        ("discovery", found),
        ("status", "wrote results.csv"),
        ("notice", "the saved results were moved aside"),
        ("roofs", result),
    ]
    assert seen_in_book == [roof]  # the book holds the new roof before any page hears of it
    assert context.discovery is found and context.devices == model.devices
    assert context.notices == ["the saved results were moved aside"] and model.status == "wrote results.csv"


def test_the_adapter_reads_through_to_one_model(qapp):
    context = AppContext(_discovery())
    assert context.model.discovery is context.discovery
    cpu = context.devices[0]
    assert context.roof_of(cpu) is context.model.roofs.get("cpu")
    assert context.gpus == []
