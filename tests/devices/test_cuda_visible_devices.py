"""CUDA ordinals -> NVML indices under CUDA_VISIBLE_DEVICES, the way the CUDA driver reads it."""

from __future__ import annotations

import pytest

from explorer.devices.nvml import cuda_visible_nvml_indices, probe_nvml
from tests.devices.fake_nvml import FakeGpu, make_fake_nvml

UUIDS = [
    "GPU-11111111-2222-3333-4444-555555555555",
    "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
    "GPU-abcdef01-0000-0000-0000-000000000000",
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2,0", [2, 0]),
        ("1", [1]),
        (" 1 , 2 ", [1, 2]),
        ("GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", [1]),
        ("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee,0", [1, 0]),
        ("GPU-1111", [0]),  # a unique UUID prefix is enough
        ("MIG-GPU-abcdef01-0000-0000-0000-000000000000/1/0", [2]),
        ("MIG-3f0e5c6a-0000-0000-0000-000000000001", [1]),
        ("0,7,1", [0]),  # CUDA stops at the first entry that names no device
        ("1,-1,0", [1]),
        ("GPU-a", []),  # ambiguous prefix (two UUIDs start with 'a') names no device
        ("", []),
    ],
)
def test_mapping(value, expected):
    mapping = cuda_visible_nvml_indices(value, UUIDS, {"mig-3f0e5c6a-0000-0000-0000-000000000001": 1})
    assert mapping.nvml_indices == expected


def test_unset_means_all_in_bus_order_with_a_note():
    mapping = cuda_visible_nvml_indices(None, UUIDS)
    assert mapping.nvml_indices == [0, 1, 2]


def test_repeated_device_hides_all_and_says_why():
    mapping = cuda_visible_nvml_indices("0,GPU-11111111", UUIDS)
    assert mapping.nvml_indices == [] and "twice" in mapping.note


def test_invalid_entry_is_explained():
    mapping = cuda_visible_nvml_indices("1,9", UUIDS)
    assert mapping.nvml_indices == [1] and "'9'" in mapping.note


def test_probe_numbers_devices_by_cuda_ordinal_and_names_hidden_ones():
    fake = make_fake_nvml()
    result = probe_nvml(fake, env={"CUDA_VISIBLE_DEVICES": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"})
    gtx, a100 = result.devices
    assert (a100.index, a100.key, a100.nvml_index) == (0, "cuda:0", 1)
    assert gtx.index is None
    assert result.hidden == ["NVIDIA GeForce GTX 1650"]
    assert "hides 1" in result.report.message


def test_probe_maps_mig_instance_to_its_parent():
    gpus = [
        FakeGpu(),
        FakeGpu(
            name="NVIDIA H100 80GB HBM3",
            uuid="GPU-99999999-0000-0000-0000-000000000000",
            bus_id="00000000:81:00.0",
            mig_mode=(1, 1),
            mig_uuids=["MIG-deadbeef-0000-0000-0000-000000000000"],
        ),
    ]
    result = probe_nvml(
        make_fake_nvml(gpus), env={"CUDA_VISIBLE_DEVICES": "MIG-deadbeef-0000-0000-0000-000000000000"}
    )
    assert [d.index for d in result.devices] == [None, 0]
    assert result.devices[1].mig_mode == "enabled"


def _torch_hidden_everything():
    """A CUDA build of torch under CUDA_VISIBLE_DEVICES="": it sees no GPU."""
    from tests.devices.fake_cuda import A100, make_fake_torch

    torch = make_fake_torch([A100])
    torch.cuda.is_available = lambda: False
    torch.cuda.device_count = lambda: 0
    return torch


def test_gpus_hidden_from_cuda_are_listed_with_live_readings_and_never_claimed_absent(monkeypatch):
    from explorer.devices.discover import discover
    from explorer.devices.model import HIDDEN_BY_CUDA_VISIBLE_DEVICES
    from tests.devices.fake_cuda import make_fake_numba

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        torch=_torch_hidden_everything(),
        numba=make_fake_numba(None),
    )
    gtx, a100 = disc.installed_gpus
    assert [g.key for g in (gtx, a100)] == ["nvml:0", "nvml:1"]
    assert gtx.hidden == a100.hidden == HIDDEN_BY_CUDA_VISIBLE_DEVICES
    assert gtx.index is None and not gtx.usable and gtx.reason("index") == HIDDEN_BY_CUDA_VISIBLE_DEVICES
    assert gtx.live is not None and gtx.live.temperature_c == 45.0  # NVML still reads it
    assert disc.present_gpus == [] and disc.hidden_gpus == [gtx, a100]
    why = disc.why_no_gpu()
    assert not why.startswith("No NVIDIA GPU was found")
    assert "2 NVIDIA GPUs" in why and HIDDEN_BY_CUDA_VISIBLE_DEVICES in why
    assert "NVIDIA GeForce GTX 1650" in why and "NVIDIA A100-SXM4-40GB" in why
    assert gtx.reason("sm_count") == f"CUDA cannot see this GPU here: it is {HIDDEN_BY_CUDA_VISIBLE_DEVICES}"
    assert gtx.unexplained() == [] and a100.unexplained() == []
    assert all("cannot run the app's GPU benchmarks" not in n for n in gtx.notes)
    data = disc.to_dict()["devices"]
    assert [d["hidden"] for d in data if d["kind"] == "cuda"] == [HIDDEN_BY_CUDA_VISIBLE_DEVICES] * 2


def test_visible_gpus_keep_cudas_numbering_beside_a_hidden_one(monkeypatch):
    from explorer.devices.discover import discover
    from tests.devices.fake_cuda import A100, make_fake_numba, make_fake_torch

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # NVML's 1 is the A100: CUDA's 0
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch([A100]),
        numba=make_fake_numba([A100]),
    )
    a100, gtx = disc.installed_gpus
    assert (a100.key, a100.index, a100.nvml_index, a100.usable) == ("cuda:0", 0, 1, True)
    assert (gtx.key, gtx.index, gtx.nvml_index, gtx.hidden is not None) == ("nvml:0", None, 0, True)
    assert disc.present_gpus == [a100] and disc.why_no_gpu() is None
    assert a100.sm_count == 108 and a100.live is not None
