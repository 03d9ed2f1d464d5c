"""The window's app-wide model without Qt: devices found, roofs, notices, status, and its events."""

from __future__ import annotations

import pytest

from explorer.app_model import AppModel
from explorer.bench.remeasure import Measured
from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery
from explorer.devices.model import CpuDevice
from explorer.errors import UserError
from explorer.roofs.model import Roof

EVENTS = ("discovery", "roofs", "notice", "status")


class Heard:
    """Counts each event of a model since the last ``take``."""

    def __init__(self, model: AppModel) -> None:
        self.counts = dict.fromkeys(EVENTS, 0)
        for name in EVENTS:
            getattr(model.events, name).connect(lambda name=name: self._hear(name))

    def _hear(self, name: str) -> None:
        self.counts[name] += 1

    def take(self) -> dict[str, int]:
        heard = {name: n for name, n in self.counts.items() if n}
        self.counts = dict.fromkeys(EVENTS, 0)
        return heard


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """Stored ceilings of the test's own (none): each roof is built from its record alone."""
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


def _cpu() -> CpuDevice:
    return CpuDevice(name="Test CPU", key="cpu", physical_cores=4, logical_cores=8)


def test_a_new_model_has_no_devices_notices_or_status():
    m = AppModel()
    assert m.discovery is None and m.devices == [] and m.gpus == []
    assert m.notices == [] and m.status == "" and m.measured == ()


def test_devices_found_anew_emit_once_and_roofs_are_built_again():
    m = AppModel(Discovery(devices=[_cpu()], reports=[]))
    first = m.roof_of(m.devices[0])
    assert m.roof_of(m.devices[0]) is first  # built once
    heard = Heard(m)
    found = Discovery(devices=[_cpu(), *load_catalog()], reports=[])
    m.set_discovery(found)
    assert heard.take() == {"discovery": 1}
    assert m.discovery is found and m.devices[0].key == "cpu"
    assert m.roofs.get("cpu") is None  # forgotten: built again from the new records when asked
    assert m.roof_of(m.devices[0]) is not first


def test_the_gpus_offered_are_catalog_gpus_when_none_is_present():
    m = AppModel(Discovery(devices=[_cpu(), *load_catalog()], reports=[]))
    assert m.gpus and all(g.kind == "catalog" for g in m.gpus)


def test_devices_must_come_as_a_discovery():
    m = AppModel()
    heard = Heard(m)
    with pytest.raises(UserError, match="from a Discovery, not list"):
        m.set_discovery([_cpu()])
    assert heard.take() == {} and m.discovery is None


def test_a_notice_is_kept_and_emitted_once_and_an_empty_one_is_ignored():
    m = AppModel()
    heard = Heard(m)
    m.add_notice("")
    assert heard.take() == {} and m.notices == []
    m.add_notice("the saved results were damaged and moved aside")
    m.add_notice("the remote machines' file was damaged")
    assert heard.take() == {"notice": 2}
    assert m.notices == [
        "the saved results were damaged and moved aside",
        "the remote machines' file was damaged",
    ]
    with pytest.raises(UserError, match="a sentence, not int"):
        m.add_notice(3)


def test_every_status_message_is_said_even_the_same_words_again():
    m = AppModel()
    heard = Heard(m)
    m.say("")
    assert heard.take() == {} and m.status == ""
    m.say("wrote results.csv")
    m.say("wrote results.csv")  # a second export of the same name is a second message
    assert heard.take() == {"status": 2} and m.status == "wrote results.csv"
    with pytest.raises(UserError, match="a sentence, not NoneType"):
        m.say(None)


def test_ceilings_measured_again_are_in_the_book_before_anyone_hears():
    m = AppModel(Discovery(devices=[_cpu()], reports=[]))
    m.roof_of(m.devices[0])
    again = Roof("cpu", "Test CPU", [], note="measured again", measured_at=2000.0)
    seen: list[Roof | None] = []
    m.events.roofs.connect(lambda: seen.append(m.roofs.get("cpu")))
    heard = Heard(m)
    result = [Measured("cpu", again, "cpu: measured on a quiet machine and stored")]
    m.measured_again(result)
    assert heard.take() == {"roofs": 1} and seen == [again]
    assert m.measured == tuple(result) and m.roof_of(m.devices[0]) is again


def test_a_failed_measurement_is_heard_but_keeps_the_roofs():
    m = AppModel(Discovery(devices=[_cpu()], reports=[]))
    before = m.roof_of(m.devices[0])
    heard = Heard(m)
    m.measured_again([Measured("", None, "the ceilings could not be measured: OSError: disk full")])
    assert heard.take() == {"roofs": 1} and m.roofs.get("cpu") is before
    assert m.measured[0].message.startswith("the ceilings could not be measured")
    m.measured_again([])  # nothing measured: nothing changed, nothing said
    assert heard.take() == {}


def test_a_predicted_occupancy_is_kept_per_gpu_and_heard_once():
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch.occupancy_truth import PredictedOccupancy
    from explorer.launch.schedule import plan_launch

    model = AppModel(Discovery(devices=load_catalog(), reports=[]))
    heard: list[PredictedOccupancy | None] = []
    model.events.occupancy.connect(lambda: heard.append(model.last_prediction))
    gpu = model.devices[0]
    plan = plan_launch(LaunchConfig(Dim3(64), Dim3(128)), gpu)
    first = PredictedOccupancy.from_plan("cuda:0", "A", plan, 0.1, 1.0, 2.0)
    second = PredictedOccupancy.from_plan("cuda:1", "B", plan, 0.2, 3.0, 4.0)
    model.predict_occupancy(first)
    model.predict_occupancy(second)
    assert heard == [first, second]
    assert model.predictions == {"cuda:0": first, "cuda:1": second}
