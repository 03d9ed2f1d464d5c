"""The wheel and the bundle carry the whole app: no sub-package or data file left behind.

pyproject.toml lists packages by hand (resources/ installs as ``explorer_resources``, which
setuptools' find() cannot see), so a new folder under explorer/ is silently missing from every
wheel until it is listed. These tests turn that into a red test instead of a user's ImportError.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from explorer.resources import resource_path, resources_dir

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _explorer_packages() -> list[str]:
    return sorted(
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "explorer").rglob("__init__.py")
        if "__pycache__" not in init.parts
    )


def _resource_files() -> list[str]:
    """Data files under resources/, relative to it (what the wheel must carry)."""
    folder = ROOT / "resources"
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.name != "__init__.py"
    )


def test_every_explorer_package_is_listed_in_pyproject():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    missing = [pkg for pkg in _explorer_packages() if pkg not in listed]
    assert missing == [], f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert "explorer_resources" in listed


def test_every_listed_package_exists():
    for pkg in _pyproject()["tool"]["setuptools"]["packages"]:
        folder = ROOT / "resources" if pkg == "explorer_resources" else ROOT.joinpath(*pkg.split("."))
        assert (folder / "__init__.py").is_file(), f"pyproject.toml lists {pkg}, which has no __init__.py"


def test_package_data_patterns_cover_every_resource_file():
    patterns = _pyproject()["tool"]["setuptools"]["package-data"]["explorer_resources"]
    uncovered = [f for f in _resource_files() if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)]
    # fnmatch's "*" crosses "/", setuptools' does not: also require the folder depth to match.
    uncovered += [
        f
        for f in _resource_files()
        if not any(fnmatch.fnmatchcase(f, pat) and f.count("/") == pat.count("/") for pat in patterns)
    ]
    assert sorted(set(uncovered)) == [], f"package-data patterns {patterns} miss these files"


def test_resources_are_found_from_the_installed_package():
    folder = resources_dir()
    assert (folder / "catalog.json").is_file()
    assert resource_path("icons", "device-explorer.png").is_file()
    import explorer_resources

    assert Path(explorer_resources.__file__).resolve().parent == folder.resolve()


def test_app_icon_is_a_real_image_in_every_size():
    from PySide6.QtGui import QImage

    for size in (16, 32, 48, 64, 128, 256, 512):
        image = QImage(str(resource_path("icons", f"device-explorer-{size}.png")))
        assert (image.width(), image.height()) == (size, size)
    ico = QImage(str(resource_path("icons", "device-explorer.ico")))
    assert not ico.isNull()
    assert (ROOT / "resources" / "icons" / "device-explorer.icns").read_bytes()[:4] == b"icns"


def test_desktop_file_names_the_executable_and_icon():
    text = (ROOT / "packaging" / "device-explorer.desktop").read_text(encoding="utf-8")
    entries = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert text.splitlines()[0] == "[Desktop Entry]"
    assert entries["Type"] == "Application"
    assert entries["Exec"].split()[0] == "device-explorer"
    assert entries["Icon"] == "device-explorer"
    assert (ROOT / "resources" / "icons" / f"{entries['Icon']}.png").is_file()


@pytest.mark.slow
def test_wheel_contains_every_module_and_data_file(tmp_path):
    # Build from a copy: an in-tree build would write build/ and *.egg-info into the shared checkout.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "explorer", src / "explorer", ignore=ignore)
    shutil.copytree(ROOT / "resources", src / "resources", ignore=ignore)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = out.glob("device_explorer-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg in _explorer_packages():
        assert pkg.replace(".", "/") + "/__init__.py" in names, f"{pkg} is missing from the wheel"
    modules = sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "explorer").rglob("*.py")
        if "__pycache__" not in p.parts
    )
    assert [m for m in modules if m not in names] == []
    missing_data = [f for f in _resource_files() if f"explorer_resources/{f}" not in names]
    assert missing_data == []
    assert "explorer_resources/catalog.json" in names
    assert "explorer_resources/icons/device-explorer.png" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "device-explorer = explorer.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.slow
def test_smoke_test_fails_when_the_app_writes_into_its_bundle(tmp_path):
    """The read-only check must be able to fail: a fake app that leaves a cache file in its folder."""
    bundle = tmp_path / "device-explorer"
    bundle.mkdir()
    exe = bundle / "device-explorer"
    exe.write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/numba-cache.nbi"\n', encoding="utf-8")
    exe.chmod(0o755)
    proc = subprocess.run(
        ["bash", str(ROOT / "packaging" / "smoke_test.sh"), str(bundle)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "FAIL  read-only" in proc.stdout and "numba-cache.nbi" in proc.stdout
    assert "FAIL  screenshot" in proc.stdout  # no PNG was written either
