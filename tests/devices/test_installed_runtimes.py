"""torch's and numba's reports read from their installed files where no GPU can be found: the
window's device list is whole in milliseconds instead of after seconds of importing them."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from explorer.devices.cuda import installed_facts, probe_torch, torch_no_gpu_reason
from explorer.devices.discover import discover

ROOT = Path(__file__).resolve().parents[2]


def _planted_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version_py: str) -> None:
    """A ``torch`` package in ``tmp_path`` found before the real one, with this ``version.py``."""
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('the planted torch must never be imported')\n")
    (package / "version.py").write_text(version_py)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)


def test_the_installed_torch_read_from_its_files_says_what_importing_it_says():
    files = installed_facts(driver_found=False)
    assert files is not None
    import torch

    if torch.cuda.is_available():
        pytest.skip("this torch sees a GPU: the files are not read then")
    assert files["torch"].message == torch_no_gpu_reason(torch) == probe_torch(torch)[1].message
    assert not files["torch"].ok and not files["numba"].ok


@pytest.mark.parametrize(
    "version_py,words",
    [
        (
            "from typing import Optional\n__version__ = '2.9.1+cpu'\ncuda: Optional[str] = None\n",
            "torch was built without CUDA (CPU-only build 2.9.1+cpu)",
        ),
        (
            "__version__ = '2.9.1+cu126'\ncuda = '12.6'\nhip = None\n",
            "torch 2.9.1+cu126 was built for CUDA 12.6 but finds no usable GPU",
        ),
        (
            "__version__ = '2.9.1+rocm6.2'\ncuda = None\nhip: str = '6.2.4'\n",
            "torch 2.9.1+rocm6.2 was built for AMD ROCm (HIP 6.2.4)",
        ),
    ],
)
def test_each_kind_of_torch_build_is_named_from_its_version_file(tmp_path, monkeypatch, version_py, words):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _planted_torch(tmp_path, monkeypatch, version_py)
    files = installed_facts(driver_found=True)
    assert files is not None
    assert words in files["torch"].message
    assert "torch" not in sys.modules  # read, not imported


def test_a_version_file_is_parsed_never_run(tmp_path, monkeypatch):
    """A planted or damaged ``version.py`` runs nothing; without a literal version the caller
    imports torch after all (its import then says what is wrong)."""
    marker = tmp_path / "ran"
    _planted_torch(
        tmp_path,
        monkeypatch,
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n__version__ = str(2)\ncuda = None\n",
    )
    assert installed_facts(driver_found=False) is None
    assert not marker.exists()
    (tmp_path / "torch" / "version.py").write_bytes(b"\xff\xfe not python (")
    assert installed_facts(driver_found=False) is None


def test_numba_without_a_driver_and_with_one_that_sees_no_gpu(monkeypatch):
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    without = installed_facts(driver_found=False)
    with_driver = installed_facts(driver_found=True)
    assert without is not None and with_driver is not None
    assert "no NVIDIA driver is installed" in without["numba"].message
    assert with_driver["numba"].message == "The CUDA driver is installed but reports no NVIDIA GPU."
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    simulated = installed_facts(driver_found=False)
    assert simulated is not None and "simulator is on" in simulated["numba"].message


def test_runtimes_not_installed(monkeypatch):
    real_find_spec = __import__("importlib.util").util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name in ("torch", "numba") else real_find_spec(name, *args)

    monkeypatch.setattr("importlib.util.find_spec", find_spec)
    files = installed_facts(driver_found=False)
    assert files is not None
    assert files["torch"].message.startswith("torch is not installed")
    assert files["numba"].message.startswith("numba is not installed")


def test_stand_in_runtimes_are_still_asked():
    """A test's (or the agent's) torch is asked, never replaced by the files."""
    fake = types.SimpleNamespace(
        __version__="9.9.9+cpu",
        version=types.SimpleNamespace(cuda=None, hip=None),
        cuda=types.SimpleNamespace(is_available=lambda: False),
    )
    found = discover(include_catalog=False, probe_cpu=False, torch=fake, numba=None)
    torch_report = next(r for r in found.reports if r.probe == "torch")
    assert "9.9.9+cpu" in torch_report.message


@pytest.mark.slow
def test_listing_devices_in_a_fresh_process_imports_neither_runtime():
    """What the window's list asks (torch and numba included) on a machine without a GPU:
    answered with neither imported, and torch's words the same as its import would give."""
    code = (
        "import sys\n"
        "from explorer.devices.discover import discover\n"
        "found = discover()\n"
        "print('imported', 'torch' in sys.modules, 'numba' in sys.modules, not found.pending)\n"
        "print(next(r.message for r in found.reports if r.probe == 'torch'))\n"
    )
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    first, torch_words = done.stdout.splitlines()[:2]
    if discover(include_catalog=False, probe_cpu=False, runtimes=False).installed_gpus:
        pytest.skip("this machine has a GPU: torch and numba are asked then")
    assert first == "imported False False True"
    import torch

    assert torch_words == torch_no_gpu_reason(torch)
