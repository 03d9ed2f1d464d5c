"""The catalog of spec sheets: what lessons rely on, and that its numbers agree with each other."""

from __future__ import annotations

import pytest

from explorer.devices.catalog import catalog_device, load_catalog, theoretical_fp32_gflops


def test_enough_sheets_across_compute_capabilities_and_form_factors():
    catalog = load_catalog()
    assert len(catalog) >= 12
    ccs = {d.compute_capability for d in catalog}
    assert min(ccs)[0] == 5 and max(ccs)[0] == 12
    assert {d.form_factor for d in catalog} >= {"laptop", "desktop", "data centre"}
    names = " ".join(d.name for d in catalog)
    for required in (
        "GTX 1650",
        "T4",
        "V100",
        "A100",
        "RTX 3090",
        "RTX 4090",
        "L4",
        "H100",
        "H200",
        "RTX 5090",
    ):
        assert required in names


def test_all_sheets_are_catalog_and_never_present():
    for d in load_catalog():
        assert d.kind == "catalog" and not d.present
        assert d.key.startswith("catalog:")
        assert d.limits is None  # limits come from the per-CC table, not from here
        assert d.source, f"{d.key} has no source"
        assert "catalog" in d.display_name


def test_gtx_1650_of_the_numba_lesson():
    gtx = catalog_device("gtx-1650-laptop")
    assert gtx.name == "NVIDIA GeForce GTX 1650 Laptop GPU"
    assert gtx.compute_capability == (7, 5) and gtx.cc_string == "7.5"
    assert gtx.sm_count == 16 and gtx.cuda_cores_per_sm == 64  # 1024 CUDA cores
    assert gtx.architecture == "Turing"
    assert gtx.memory_total_bytes == 4 * 1024**3


def test_h100_sxm5_has_132_sms():
    h100 = catalog_device("catalog:h100-sxm5")
    assert h100.sm_count == 132 and h100.compute_capability == (9, 0)


@pytest.mark.parametrize("device", load_catalog(), ids=lambda d: d.key)
def test_fp32_peak_matches_sms_cores_and_boost_clock(device):
    expected = theoretical_fp32_gflops(device)
    assert expected is not None
    assert device.fp32_peak_gflops == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("device", load_catalog(), ids=lambda d: d.key)
def test_bandwidth_is_plausible_for_the_bus(device):
    # bandwidth / bus width = data rate per pin: HBM2 ~1.4 Gbit/s up to GDDR7 28 Gbit/s. A typo in
    # either number (GB vs Gbit, a lost digit) lands far outside that range.
    if device.memory_bandwidth_gbps is None:
        assert "memory_bandwidth_gbps" in device.unavailable
        return
    per_pin_gbit = device.memory_bandwidth_gbps * 8 / device.memory_bus_width_bits
    assert 1.0 <= per_pin_gbit <= 32, f"{device.name}: {per_pin_gbit:.1f} Gbit/s per pin is not a real memory"


def test_each_call_returns_independent_copies():
    first = load_catalog()
    first[0].sm_count = 1
    first[0].notes.append("edited")
    second = load_catalog()
    assert second[0].sm_count != 1 and "edited" not in second[0].notes


@pytest.mark.parametrize("device", load_catalog(), ids=lambda d: d.key)
def test_a_sheet_built_on_its_own_is_the_sheet_of_the_whole_catalog(device):
    # a launch builds only the sheet it names; it must be the record the device list shows
    alone = catalog_device(device.key)
    assert alone == device
    assert alone.unavailable == device.unavailable
    alone.notes.append("edited")
    assert "edited" not in catalog_device(device.key).notes


def test_a_damaged_sheet_stops_the_list_but_not_a_launch_on_another(monkeypatch):
    import copy

    from explorer.devices import catalog
    from explorer.devices.find import catalog_match_without_probing

    entries = copy.deepcopy(list(catalog._entries()))
    damaged = next(e for e in entries if e["slug"] == "h100-sxm5")
    damaged["sm_count"] = "lots"
    monkeypatch.setattr(catalog, "_entries", lambda: tuple(entries))
    monkeypatch.setattr(catalog, "_sheets", catalog._sheets.__wrapped__)
    found = catalog_match_without_probing("1650", proc_dir="/nonexistent")
    assert found is not None and found.key == "catalog:gtx-1650-laptop"
    assert catalog_match_without_probing("h100", proc_dir="/nonexistent") is None  # the probe will say why
    with pytest.raises(catalog.CatalogError, match="h100-sxm5.*sm_count"):
        catalog.load_catalog()
