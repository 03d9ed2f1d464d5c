"""discover() never raises; find_device() resolves what users type."""

from __future__ import annotations

import types

import pytest

from explorer.devices.discover import discover
from explorer.devices.discovery import Discovery
from explorer.devices.find import find_device
from explorer.devices.model import CatalogGpu, CudaGpu, Device
from explorer.errors import UserError
from tests.devices.fake_cuda import A100, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml


class _Exploding(types.ModuleType):
    """A module where touching anything raises, like a broken install."""

    def __getattr__(self, name):
        raise RuntimeError(f"broken module: {name}")


def test_discover_never_raises_when_every_probe_breaks(monkeypatch):
    import explorer.devices.catalog as catalog_module
    import explorer.devices.cpu as cpu_module

    def boom(*a, **k):
        raise OSError("no /proc here")

    monkeypatch.setattr(cpu_module, "probe_cpu", boom)
    monkeypatch.setattr(catalog_module, "load_catalog", boom)
    disc = discover(nvml=_Exploding("pynvml"), torch=_Exploding("torch"), numba=_Exploding("numba"))
    assert disc.devices == []
    by_probe = {r.probe: r for r in disc.reports}
    assert set(by_probe) >= {"cpu", "nvml", "torch", "numba", "catalog"}
    assert all(not r.ok for r in disc.reports)
    assert "no /proc here" in by_probe["cpu"].message
    assert by_probe["nvml"].message  # a sentence, not an exception
    assert disc.why_no_gpu().startswith("No NVIDIA GPU was found")


def test_order_is_cpu_then_present_gpus_then_catalog():
    disc = discover(nvml=make_fake_nvml(), torch=make_fake_torch([A100]), numba=make_fake_numba([A100]))
    kinds = [d.kind for d in disc.devices]
    assert kinds[0] == "cpu"
    assert kinds[1:2] == ["cuda"]
    assert set(kinds[2:]) == {"catalog"}


def test_without_any_gpu_the_reasons_reach_the_banner():
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(init_error="library_not_found"),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
    )
    why = disc.why_no_gpu()
    assert "NVML library not found: no NVIDIA driver is installed." in why
    assert "torch was built without CUDA (CPU-only build 2.13.0+cpu)" in why
    assert "CUDA driver not found" in why
    assert disc.cpu is not None and disc.cpu.logical_cores >= 1


def _disc(*devices: Device) -> Discovery:
    return Discovery(devices=list(devices), reports=[])


def test_find_device_rules():
    disc = discover(probe_cpu=True, probe_gpus=False)
    assert find_device("1650", disc).key == "catalog:gtx-1650-laptop"
    assert find_device("H100", disc).key == "catalog:h100-sxm5"
    assert find_device("cpu", disc).kind == "cpu"
    assert find_device("t4", disc).key == "catalog:t4"  # slug is exact, though "t4" is in other names too
    assert find_device("catalog:l4", disc).key == "catalog:l4"


def test_find_device_prefers_a_present_gpu_over_its_catalog_sheet():
    present = CudaGpu(name="NVIDIA GeForce GTX 1650", index=0, key="cuda:0")
    sheet = CatalogGpu(name="NVIDIA GeForce GTX 1650", key="catalog:gtx-1650-laptop")
    assert find_device("1650", _disc(present, sheet)) is present


def test_find_device_errors_list_candidates():
    disc = discover(probe_cpu=False, probe_gpus=False)
    with pytest.raises(UserError) as ambiguous:
        find_device("rtx", disc)
    assert "rtx-4090" in str(ambiguous.value) and "rtx-3090" in str(ambiguous.value)
    with pytest.raises(UserError) as unknown:
        find_device("voodoo 2", disc)
    assert "no device matches 'voodoo 2'" in str(unknown.value) and "catalog:t4" in str(unknown.value)
    with pytest.raises(UserError):
        find_device("  ", disc)


def _proc(tmp_path, *models):
    root = tmp_path / "gpus"
    root.mkdir()
    for i, model in enumerate(models):
        slot = root / f"0000:0{i + 1}:00.0"
        slot.mkdir()
        (slot / "information").write_text(f"Model: \t\t {model}\nIRQ:   \t\t 130\nBus Type: \t PCIe\n")
    return str(root)


def test_a_catalog_name_is_answered_without_probing_when_no_installed_gpu_fits(tmp_path, monkeypatch):
    from explorer.devices import find as find_module

    monkeypatch.setattr("sys.platform", "linux")
    proc = _proc(tmp_path, "NVIDIA GeForce RTX 3090")
    sheet = find_module.catalog_match_without_probing("1650", proc_dir=proc)
    assert sheet is not None and sheet.kind == "catalog" and "1650" in sheet.name
    # no driver installed at all (no /proc folder): the catalog answers too
    assert (
        find_module.catalog_match_without_probing("h100", proc_dir=str(tmp_path / "none")).kind == "catalog"
    )


def test_a_name_that_fits_an_installed_gpu_goes_to_the_probes(tmp_path, monkeypatch):
    """ "1650" on a machine with a GTX 1650 means that GPU (its real SM count and limits), not the sheet."""
    from explorer.devices import find as find_module

    monkeypatch.setattr("sys.platform", "linux")
    proc = _proc(tmp_path, "NVIDIA GeForce GTX 1650")
    assert find_module.installed_gpu_names(proc) == ["NVIDIA GeForce GTX 1650"]
    assert find_module.catalog_match_without_probing("1650", proc_dir=proc) is None
    for query in ("cpu", "cuda:0", "nvml:1", "no such gpu"):
        assert find_module.catalog_match_without_probing(query, proc_dir=proc) is None


def test_without_proc_the_probes_decide(monkeypatch):
    from explorer.devices import find as find_module

    monkeypatch.setattr("sys.platform", "win32")
    assert find_module.installed_gpu_names() is None
    assert find_module.catalog_match_without_probing("1650") is None


def test_a_cuda_index_on_a_machine_without_cuda_says_so_in_one_line():
    """``launch --device cuda:0`` without CUDA listed 18 catalog names instead of saying
    there is no CUDA device (and why), and a missing index names the ones there are."""
    import pytest

    from explorer.devices.catalog import load_catalog
    from explorer.devices.discovery import Discovery, ProbeReport
    from explorer.devices.find import find_device
    from explorer.devices.model import CpuDevice, CudaGpu
    from explorer.errors import UserError

    cpu = CpuDevice(name="Test CPU", key="cpu", source="test")
    none = Discovery(
        devices=[cpu, *load_catalog()],
        reports=[ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed.")],
    )
    with pytest.raises(UserError) as err:
        find_device("cuda:0", none)
    message = str(err.value)
    assert message.startswith("cuda:0 names no device: this machine has no CUDA device.")
    assert "NVML library not found" in message and "catalog:" not in message and "\n" not in message
    two = Discovery(
        devices=[cpu, CudaGpu(name="A", index=0, key="cuda:0"), CudaGpu(name="B", index=1, key="cuda:1")],
        reports=[],
    )
    with pytest.raises(
        UserError, match=r"there is no cuda:3 here; this machine's CUDA devices: cuda:0, cuda:1"
    ):
        find_device("CUDA:3", two)
    assert find_device("cuda:1", two).name == "B"
