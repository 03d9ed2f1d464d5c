"""Listing devices through the CUDA driver (ctypes, libcuda) and NVML alone: every fact torch and
numba gave the list, in milliseconds, and never an import of torch or numba."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import explorer.devices.cuda as cuda_probes
import explorer.devices.cuda_driver as cuda_driver
import explorer.devices.nvml as nvml_probe
from explorer.cli import main
from explorer.devices.cuda_driver import ATTRIBUTE_CODES, LIMIT_ATTRIBUTES, probe_driver
from explorer.devices.discover import discover
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_libcuda import attributes_of, make_fake_libcuda
from tests.devices.fake_nvml import make_fake_nvml

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "numba", "llvmlite")


@pytest.fixture(autouse=True)
def _all_visible(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.fixture
def no_heavy_imports(monkeypatch):
    """Any import of torch or numba while this is on fails the test, wherever it comes from."""
    for name in (*HEAVY, "explorer.numbacuda"):
        monkeypatch.setitem(sys.modules, name, None)  # `import torch` now raises ImportError

    def refuse(*_args, **_kwargs):
        pytest.fail("listing devices asked torch or numba")

    monkeypatch.setattr(cuda_probes, "import_torch", refuse)
    monkeypatch.setattr(cuda_probes, "import_numba", refuse)


def test_the_driver_gives_every_fact_torch_and_numba_gave():
    lib = make_fake_libcuda([A100, GTX1650])
    devices, report = probe_driver(lib)
    assert report.ok and report.devices_found == 2
    assert report.message == "The CUDA driver (CUDA 12.4) sees 2 GPUs."
    assert [d.key for d in devices] == ["cuda:0", "cuda:1"]
    for dev, fake in zip(devices, (A100, GTX1650), strict=True):
        attrs = attributes_of(fake)
        assert dev.name == fake.name and dev.vendor == "NVIDIA" and dev.source == "CUDA driver"
        assert dev.compute_capability == fake.cc and dev.sm_count == fake.sm_count
        assert dev.memory_total_bytes == fake.total_memory
        assert dev.uuid == "GPU-" + fake.uuid  # as NVML writes it, so the views join on it
        assert dev.pci_bus_id == f"{fake.pci_domain:04x}:{fake.pci_bus:02x}:{fake.pci_device:02x}.0"
        assert dev.clock_sm_max_mhz == fake.clock_khz // 1000 and dev.clock_memory_max_mhz == 4001
        assert dev.memory_bus_width_bits == 128 and dev.cuda_driver_version == "12.4"
        for field, attr in LIMIT_ATTRIBUTES.items():
            assert getattr(dev.limits, field) == attrs[ATTRIBUTE_CODES[attr]], field
        assert dev.limits.max_block_dim == (1024, 1024, 64)
        assert dev.limits.max_grid_dim == (2147483647, 65535, 65535)
        # 2 x 4001 MHz x 128 bit / 8, labelled as theoretical
        assert dev.memory_bandwidth_gbps == round(2 * 4001e6 * 128 / 8 / 1e9, 1)
        assert dev.memory_bandwidth_basis == "theoretical, from memory clock and bus width"
    assert lib.calls[0] == "cuInit"


def test_every_attribute_code_is_asked_once_per_gpu_and_nothing_else_is_read():
    lib = make_fake_libcuda([A100])
    probe_driver(lib)
    assert lib.calls.count("cuDeviceGetAttribute") == len(ATTRIBUTE_CODES)
    assert set(lib.calls) == {
        "cuInit",
        "cuDeviceGetCount",
        "cuDriverGetVersion",
        "cuDeviceGet",
        "cuDeviceGetName",
        "cuDeviceGetAttribute",
        "cuDeviceTotalMem_v2",
        "cuDeviceGetUuid_v2",
    }


def test_an_attribute_an_older_driver_lacks_is_missing_with_its_reason():
    lib = make_fake_libcuda([A100])
    lib.missing_attributes.add(ATTRIBUTE_CODES["MAX_BLOCKS_PER_MULTIPROCESSOR"])
    (dev,) = probe_driver(lib)[0]
    assert dev.limits.max_blocks_per_sm is None and dev.limits.max_threads_per_sm == 2048
    disc = discover(include_catalog=False, nvml=make_fake_nvml(), driver=lib, runtimes=False)
    a100 = disc.present_gpus[0]
    assert a100.reason("limits.max_blocks_per_sm") == "the CUDA driver did not report this limit"


@pytest.mark.parametrize(
    ("kwargs", "env", "said"),
    [
        ({}, None, "The CUDA driver is installed but reports no NVIDIA GPU (CUDA_ERROR_NO_DEVICE)."),
        ({}, "", "CUDA_VISIBLE_DEVICES='' hides every GPU from CUDA."),
        ({"init_error": 35}, None, "The NVIDIA driver is too old for this CUDA driver library"),
        ({"init_error": 803}, None, "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH): reboot, or reinstall the driver."),
        ({"init_error": 999}, None, "The CUDA driver could not list GPUs: cuInit failed: CUresult 999."),
    ],
)
def test_a_driver_that_lists_no_gpu_says_why_in_words(monkeypatch, kwargs, env, said):
    if env is not None:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", env)
    gpus = [] if not kwargs else [A100]
    devices, report = probe_driver(make_fake_libcuda(gpus if env is None else [A100], **kwargs))
    assert devices == [] and not report.ok
    assert said in report.message


def test_no_driver_library_is_the_plain_reason(monkeypatch):
    def unloadable(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(cuda_driver, "_loaded", [])  # as in a fresh process
    monkeypatch.setattr(cuda_driver.ctypes, "CDLL", unloadable)
    devices, report = probe_driver()
    assert devices == [] and not report.ok
    assert report.message == (
        f"The CUDA driver library ({cuda_driver.LIBRARY_NAMES[0]}) cannot be loaded: no NVIDIA driver is installed."
    )


def test_the_library_is_loaded_once_so_a_stuck_cuinit_is_not_asked_again(monkeypatch):
    opened = []
    monkeypatch.setattr(cuda_driver, "_loaded", [])
    monkeypatch.setattr(cuda_driver.ctypes, "CDLL", lambda name: opened.append(name) or object())
    assert cuda_driver.load_library() is cuda_driver.load_library()
    assert opened == [cuda_driver.LIBRARY_NAMES[0]]


def test_devices_merge_nvml_and_the_driver_without_torch_or_numba(no_heavy_imports):
    disc = discover(nvml=make_fake_nvml(), driver=make_fake_libcuda([A100, GTX1650]), runtimes=False)
    assert [r.probe for r in disc.reports] == ["cpu", "nvml", "driver", "catalog"]
    a100, gtx = disc.present_gpus
    # CUDA's order (the driver's), NVML's live readings joined on UUID
    assert (a100.key, a100.name, a100.nvml_index) == ("cuda:0", "NVIDIA A100-SXM4-40GB", 1)
    assert (gtx.key, gtx.name, gtx.nvml_index) == ("cuda:1", "NVIDIA GeForce GTX 1650", 0)
    assert a100.sm_count == 108 and a100.limits.max_threads_per_sm == 2048
    assert a100.live is not None and a100.driver_version
    assert a100.source == "CUDA driver + NVML"
    assert a100.architecture == "Ampere" and a100.fp32_peak_gflops
    assert a100.unexplained() == [] and gtx.unexplained() == []
    assert disc.why_no_gpu() is None and disc.catalog


def test_a_gpu_hidden_by_cuda_visible_devices_is_listed_as_hidden(monkeypatch, no_heavy_imports):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaaaaaa")
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        driver=make_fake_libcuda([A100, GTX1650]),
        runtimes=False,
    )
    assert [(g.key, g.name) for g in disc.present_gpus] == [("cuda:0", "NVIDIA A100-SXM4-40GB")]
    (hidden,) = disc.hidden_gpus
    assert hidden.name == "NVIDIA GeForce GTX 1650" and hidden.index is None


def test_without_any_gpu_the_banner_gives_nvml_and_the_drivers_reasons(no_heavy_imports):
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(init_error="library_not_found"),
        driver=make_fake_libcuda([], init_error=100),
        runtimes=False,
    )
    assert disc.present_gpus == [] and disc.cpu is not None
    why = disc.why_no_gpu()
    assert why.startswith("No NVIDIA GPU was found on this machine. NVML")
    assert "The CUDA driver is installed but reports no NVIDIA GPU" in why
    assert "torch" not in why and "numba" not in why


def test_a_hung_cuinit_costs_its_deadline_and_the_banner_says_so():
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(init_error="library_not_found"),
        driver=make_fake_libcuda([A100], hang_s=3.0),
        runtimes=False,
        deadlines={"driver": 0.2},
    )
    report = disc.report("driver")
    assert report.timed_out
    assert report.message.startswith("The CUDA driver (cuInit) did not answer within 0.2 s")
    assert disc.why_no_gpu().startswith("No NVIDIA GPU could be listed: a driver did not answer in time")


def test_the_window_gets_the_drivers_facts_before_torch_and_numba_answer():
    partials = []
    final = discover(
        nvml=make_fake_nvml(),
        driver=make_fake_libcuda([A100, GTX1650]),
        torch=make_fake_torch(None),  # a CPU-only build
        numba=make_fake_numba([A100, GTX1650]),
        on_update=partials.append,
    )
    (partial,) = partials
    assert partial.pending == ["torch", "numba"]
    # already in CUDA's order, with the driver's SM counts and limits: nothing waits on torch
    assert [(g.key, g.sm_count) for g in partial.present_gpus] == [
        ("cuda:0", 108),
        ("cuda:1", GTX1650.sm_count),
    ]
    assert partial.present_gpus[0].unexplained() == []
    # then torch's and numba's word: the app's GPU work cannot go through this torch
    a100 = final.present_gpus[0]
    assert final.pending == [] and a100.sm_count == 108
    assert any(
        n.startswith("torch.cuda cannot use this GPU: torch was built without CUDA") for n in a100.notes
    )
    assert not any(n.startswith("numba.cuda cannot use") for n in a100.notes)


def test_the_devices_command_lists_gpus_from_the_driver_without_torch_or_numba(
    capsys, monkeypatch, no_heavy_imports
):
    monkeypatch.setattr(nvml_probe, "import_nvml", make_fake_nvml)
    monkeypatch.setattr(cuda_driver, "load_library", lambda: make_fake_libcuda([A100, GTX1650]))
    assert main(["devices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["probe"] for p in data["probes"]] == ["cpu", "nvml", "driver"]
    gpus = [d for d in data["devices"] if d["kind"] == "cuda"]
    assert [(g["key"], g["name"], g["sm_count"]) for g in gpus] == [
        ("cuda:0", "NVIDIA A100-SXM4-40GB", 108),
        ("cuda:1", "NVIDIA GeForce GTX 1650", GTX1650.sm_count),
    ]
    assert gpus[0]["limits"]["max_smem_per_block_optin_bytes"] == A100.smem_per_block_optin
    assert data["why_no_gpu"] is None
    assert main(["devices"]) == 0
    text = capsys.readouterr().out
    assert "cuda:0  NVIDIA A100-SXM4-40GB" in text and "108 SMs" in text


def _imported_modules(importtime_stderr: str) -> set[str]:
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.slow
@pytest.mark.parametrize("args", [["devices"], ["devices", "--json", "--catalog"]])
def test_the_devices_command_never_imports_torch_or_numba(args):
    """The real command on this machine, in a child: what it prints, and every module it imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "explorer", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = _imported_modules(proc.stderr)
    assert "explorer.devices.discover" in modules  # the listing did run in this child
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"listing devices imported {heavy[:5]}"
    if "--json" in args:
        data = json.loads(proc.stdout)
        assert [p["probe"] for p in data["probes"]][:3] == ["cpu", "nvml", "driver"]
        assert data["devices"][0]["kind"] == "cpu" and data["devices"][-1]["kind"] == "catalog"
        if not cuda_driver.library_loadable():
            assert "The CUDA driver library" in data["why_no_gpu"]
    else:
        assert proc.stdout.startswith("device")
        if not cuda_driver.library_loadable():
            assert "No NVIDIA GPU was found on this machine." in proc.stdout
            assert "cannot be loaded: no NVIDIA driver is installed." in proc.stdout


@pytest.mark.slow
def test_a_launch_on_a_catalog_gpu_imports_no_probe():
    """``launch --device 1650`` on a machine without that GPU is answered from the spec sheet:
    the child imports no probe (discovery, NVML, the CUDA driver), no torch or numba, not
    ``shutil`` (argparse's, for the terminal's width, with bz2 and lzma), and none of the record
    modules a single launch does not use (each dataclass costs milliseconds to create), so it
    starts at once."""
    from explorer.devices.find import installed_gpu_names

    if any("1650" in name for name in installed_gpu_names() or []):
        pytest.skip("this machine has a GTX 1650: the name means it, and the probes must run")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "explorer", "launch", "--device", "1650"]
        + ["--grid", "98", "--block", "1024"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("NVIDIA GeForce GTX 1650 Laptop GPU (catalog, not present): 16 SMs")
    modules = _imported_modules(proc.stderr)
    assert "explorer.devices.find" in modules and "explorer.launch.occupancy" in modules
    probes = {"explorer.devices.discover", "explorer.devices.nvml", "explorer.devices.cuda_driver"}
    unused_records = {
        "explorer.devices.discovery",
        "explorer.devices.live",
        "explorer.devices.caches",
        "explorer.launch.plan_records",
        "explorer.launch.sweep",
        "explorer.commands.occupancy",
        "explorer.commands.launch_compare",
    }
    unwanted = sorted(
        m for m in modules if m in probes | unused_records or m == "shutil" or m.split(".")[0] in HEAVY
    )
    assert unwanted == [], f"a catalog launch imported {unwanted}"


def test_the_attribute_numbers_are_cuda_hs():
    """numba's ctypes binding writes cuda.h's numbers out too (two names differ, two are newer than
    its table): a wrong number here would read another attribute on every real GPU."""
    enums = pytest.importorskip("numba.cuda.cudadrv.enums")
    numba_names = {"MAX_THREADS_PER_MULTIPROCESSOR": "MAX_THREADS_PER_MULTI_PROCESSOR"}
    compared = 0
    for name, code in ATTRIBUTE_CODES.items():
        theirs = getattr(enums, f"CU_DEVICE_ATTRIBUTE_{numba_names.get(name, name)}", None)
        if theirs is None:
            assert name in ("MAX_BLOCKS_PER_MULTIPROCESSOR", "RESERVED_SHARED_MEMORY_PER_BLOCK")
            continue
        assert theirs == code, name
        compared += 1
    assert compared >= len(ATTRIBUTE_CODES) - 2


def _real_gpu_or_skip() -> list:
    if not cuda_driver.library_loadable():
        pytest.skip("no CUDA driver library on this machine")
    devices, report = probe_driver()
    if not devices:
        pytest.skip(f"the CUDA driver lists no GPU here: {report.message}")
    return devices


def test_on_a_real_gpu_the_driver_agrees_with_nvidias_own_bindings():
    devices = _real_gpu_or_skip()
    reference = pytest.importorskip("explorer.acceptance.cudadriver")
    try:
        reference.bindings()
    except reference.DriverError as exc:
        pytest.skip(str(exc))
    lib = cuda_driver.CudaDriver(cuda_driver.load_library())
    for dev in devices:
        ours = cuda_driver.device_attributes(lib, dev.index)
        theirs = reference.device_attributes(dev.index)
        assert {k: v for k, v in ours.items() if theirs.get(k) is not None} == {
            k: v for k, v in theirs.items() if v is not None
        }


def test_on_a_real_gpu_the_driver_agrees_with_torch():
    devices = _real_gpu_or_skip()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch cannot use the GPU here")
    for dev in devices:
        props = torch.cuda.get_device_properties(dev.index)
        assert dev.name == props.name and dev.compute_capability == (props.major, props.minor)
        assert dev.sm_count == props.multi_processor_count and dev.memory_total_bytes == props.total_memory
        assert dev.limits.max_threads_per_sm == props.max_threads_per_multi_processor
        assert dev.limits.regs_per_sm == props.regs_per_multiprocessor
        assert dev.limits.smem_per_sm_bytes == props.shared_memory_per_multiprocessor


def test_a_present_gpu_named_on_the_command_line_resolves_without_torch_or_numba(
    monkeypatch, no_heavy_imports
):
    import explorer.devices.discover as discover_module
    from explorer.devices.find import find_device

    monkeypatch.setattr(nvml_probe, "import_nvml", make_fake_nvml)
    monkeypatch.setattr(cuda_driver, "load_library", lambda: make_fake_libcuda([A100, GTX1650]))
    monkeypatch.setattr(discover_module, "_cached", None)
    found = find_device("cuda:0")
    assert (found.key, found.name) == ("cuda:0", "NVIDIA A100-SXM4-40GB")
    assert found.limits.smem_per_sm_bytes == A100.smem_per_sm
    assert find_device("cuda:1").name == "NVIDIA GeForce GTX 1650"


def test_a_runtime_that_numbers_the_gpus_otherwise_is_not_merged_into_the_drivers_record():
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        driver=make_fake_libcuda([A100, GTX1650]),
        torch=make_fake_torch([GTX1650, A100]),  # another order: another environment, or a bug
        numba=make_fake_numba([A100, GTX1650]),
    )
    a100, gtx = disc.present_gpus
    assert (a100.key, a100.name, gtx.name) == ("cuda:0", "NVIDIA A100-SXM4-40GB", "NVIDIA GeForce GTX 1650")
    assert "torch.cuda and CUDA driver disagree on which GPU has this index" in " ".join(a100.notes)
    assert a100.sm_count == A100.sm_count and a100.source == "CUDA driver + numba.cuda + NVML"


def test_a_quick_probe_asks_no_runtime_when_neither_nvml_nor_the_driver_sees_a_gpu(no_heavy_imports):
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(init_error="library_not_found"),
        driver=make_fake_libcuda([]),
        quick=True,
    )
    assert [r.probe for r in disc.reports] == ["cpu", "nvml", "driver"]
    why = disc.why_no_gpu()
    assert why.startswith("No NVIDIA GPU was found on this machine. NVML")
    assert why.endswith("The CUDA driver is installed but reports no NVIDIA GPU (CUDA_ERROR_NO_DEVICE).")
