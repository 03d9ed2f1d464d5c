"""The install picks the torch build the machine can use: CPU without an NVIDIA driver."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("which_torch", ROOT / "packaging" / "which_torch.py")
assert _spec is not None and _spec.loader is not None
which_torch = importlib.util.module_from_spec(_spec)
sys.modules["which_torch"] = which_torch
_spec.loader.exec_module(which_torch)


def _evidence(tmp_path: Path, *, proc: bool = False, smi: bool = False, lib: bool = False) -> str:
    proc_file = tmp_path / "version"
    if proc:
        proc_file.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54\n")
    return which_torch.driver_evidence(
        proc_file=proc_file,
        which=lambda name: "/usr/bin/nvidia-smi" if smi and name == "nvidia-smi" else None,
        find_library=lambda name: "libcuda.so.1" if lib and name == "cuda" else None,
    )


def test_no_driver_picks_the_cpu_build_and_says_so(tmp_path):
    extra, why = which_torch.choose({}, _evidence(tmp_path))
    assert extra == "cpu" and "CPU build" in why and "DEVICE_EXPLORER_TORCH=cuda" in why


@pytest.mark.parametrize("found", [{"proc": True}, {"smi": True}, {"lib": True}])
def test_any_sign_of_the_driver_picks_the_cuda_build(tmp_path, found):
    evidence = _evidence(tmp_path, **found)
    extra, why = which_torch.choose({}, evidence)
    assert extra == "cuda" and evidence in why and "DEVICE_EXPLORER_TORCH=cpu" in why


def test_the_override_wins_and_a_wrong_one_is_refused(tmp_path):
    assert which_torch.choose({"DEVICE_EXPLORER_TORCH": "CPU"}, "nvidia-smi is installed")[0] == "cpu"
    assert which_torch.choose({"DEVICE_EXPLORER_TORCH": "cuda"}, "")[0] == "cuda"
    with pytest.raises(ValueError, match="'gpu'; it must be cpu or cuda"):
        which_torch.choose({"DEVICE_EXPLORER_TORCH": "gpu"}, "")


def test_both_extras_exist_and_the_cpu_one_names_the_cpu_build():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(which_torch.CHOICES) <= set(extras)
    assert any(re.match(r"torch==[\d.]+\+cpu;", req) for req in extras["cpu"])


def test_the_readme_s_run_and_test_commands_pick_the_torch_build_and_ci_installs_no_other():
    readme = (ROOT / "README.md").read_text()
    for marker in ("run-command", "test-command"):
        block = readme.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
        assert "$(python3 packaging/which_torch.py)]" in block, marker
    assert "download.pytorch.org" not in readme and "--index-url" not in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -q "torch' not in ci and "openbox xdotool x11-utils" in ci
