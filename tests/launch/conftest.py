"""What the launch CLI tests share: a discovery of one CPU and two catalog GPUs, so a device name
("1650", "h100", "cpu") resolves without probing this machine."""

from __future__ import annotations

import pytest

from explorer.devices.model import CatalogGpu, CpuDevice
from tests.devices.fake_find import find_only

GTX = CatalogGpu(
    name="NVIDIA GeForce GTX 1650", key="catalog:gtx-1650", compute_capability=(7, 5), sm_count=16
)
H100 = CatalogGpu(name="NVIDIA H100 SXM5 80GB", key="catalog:h100", compute_capability=(9, 0), sm_count=132)
CPU = CpuDevice(name="Some CPU", key="cpu")


@pytest.fixture
def fake_devices(monkeypatch):
    """``find_device`` answers from CPU, GTX and H100 only; a name matching none or several is one line."""
    find_only(monkeypatch, [CPU, GTX, H100])
