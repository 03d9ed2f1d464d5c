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
