"""Device names as people type them: case, spaces, dashes and underscores ignored, "did you mean"."""

from __future__ import annotations

import pytest

from explorer.devices.discovery import Discovery
from explorer.devices.find import find_device
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu
from explorer.devices.names import best_match, candidates, normalise, suggestions
from explorer.errors import UserError

CPU = CpuDevice(name="AMD Ryzen 7 5800X 8-Core Processor", key="cpu")
GTX = CatalogGpu(name="NVIDIA GeForce GTX 1650", key="catalog:gtx-1650-laptop")
GTX1050 = CatalogGpu(name="NVIDIA GeForce GTX 1050", key="catalog:gtx-1050")
RTX = CatalogGpu(name="NVIDIA GeForce RTX 4090", key="catalog:rtx-4090")
H100_SHEET = CatalogGpu(name="NVIDIA H100 SXM5 80GB", key="catalog:h100-sxm5")
H100_HERE = CudaGpu(name="NVIDIA H100 PCIe", key="cuda:0", index=0)
DISC = Discovery(devices=[CPU, GTX, GTX1050, RTX, H100_SHEET], reports=[])


def test_normalise_drops_case_spaces_dashes_underscores():
    assert normalise(" GeForce GTX-1650_Ti ") == "geforcegtx1650ti"


@pytest.mark.parametrize(
    "query,device",
    [
        ("gtx1650", GTX),
        ("GTX-1650", GTX),
        ("gtx_1650", GTX),
        ("geforce gtx 1650", GTX),
        ("NVIDIA GeForce GTX 1650", GTX),
        ("1650", GTX),  # a unique part is still enough
        ("rtx 4090", RTX),
        ("RTX4090", RTX),
        ("rtx-4090", RTX),
        ("h100", H100_SHEET),
        ("catalog:gtx-1050", GTX1050),
        ("gtx-1050", GTX1050),  # the catalog slug
        ("cpu", CPU),
    ],
)
def test_names_as_typed(query, device):
    assert find_device(query, DISC) is device


def test_a_present_gpu_wins_over_its_catalog_sheet():
    both = [H100_SHEET, H100_HERE]
    assert best_match("h100", both) == [H100_HERE]
    assert candidates("h100", both) == both
    rtx_here = CudaGpu(name="NVIDIA GeForce RTX 4090", key="cuda:1", index=1)
    assert best_match("rtx 4090", [RTX, rtx_here]) == [rtx_here]  # though it spells the sheet's slug
    assert best_match("catalog:rtx-4090", [RTX, rtx_here]) == [RTX]  # the sheet, asked for by key


def test_a_near_miss_says_did_you_mean():
    with pytest.raises(UserError) as info:
        find_device("gtx1605", DISC)
    message = str(info.value)
    assert message.startswith("no device matches 'gtx1605'; did you mean 'NVIDIA GeForce GTX 1650'")
    assert "\n" not in message
    assert suggestions("rtx 4900", DISC.devices)[0] is RTX
    assert suggestions("h1000", DISC.devices) == [H100_SHEET]


def test_a_word_every_gpu_shares_suggests_none_of_them():
    assert suggestions("geforse", DISC.devices) == []


def test_nothing_near_lists_the_keys():
    with pytest.raises(
        UserError, match="no device matches 'zzzz'; known devices: cpu, catalog:gtx-1650-laptop"
    ):
        find_device("zzzz", DISC)


def test_ambiguous_part_lists_the_candidates():
    with pytest.raises(UserError, match="'gtx' matches 2 devices"):
        find_device("gtx", DISC)


@pytest.mark.parametrize("query", ["", "   ", "- _", "9" * 5000, "\n\x1b[2J"])
def test_empty_or_hostile_queries_are_one_line(query):
    with pytest.raises(UserError) as info:
        find_device(query, DISC)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
