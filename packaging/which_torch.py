"""Which build of torch this machine can use: prints ``cpu`` or ``cuda``, the extra to install.

The README's install commands run it before the app is installed (plain ``python3``, nothing but
the standard library), as ``pip install ".[$(python3 packaging/which_torch.py)]"``: a laptop without
an NVIDIA driver gets the CPU build of torch (about 190 MB) instead of the CUDA build and its
NVIDIA libraries (about 5.9 GB), which it could not use. The reason for the choice goes to stderr,
so the person installing sees what was picked and how to pick the other.

An NVIDIA driver is there when the kernel module answers (``/proc/driver/nvidia/version``), when
``nvidia-smi`` is on the PATH, or when the driver's ``libcuda`` can be found: any one of them.
``DEVICE_EXPLORER_TORCH=cpu`` or ``=cuda`` overrides the guess (a machine whose GPU is elsewhere,
a build for another machine).
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

CHOICES = ("cpu", "cuda")
OVERRIDE_ENV = "DEVICE_EXPLORER_TORCH"


def driver_evidence(
    *,
    proc_file: Path = Path("/proc/driver/nvidia/version"),
    which: Callable[[str], str | None] = shutil.which,
    find_library: Callable[[str], str | None] = ctypes.util.find_library,
) -> str:
    """What shows an NVIDIA driver here, in words; "" when nothing does."""
    if proc_file.is_file():
        return f"the NVIDIA kernel driver answers ({proc_file})"
    smi = which("nvidia-smi")
    if smi:
        return f"nvidia-smi is installed ({smi})"
    lib = find_library("cuda")
    if lib:
        return f"the NVIDIA driver's CUDA library is installed ({lib})"
    return ""


def choose(environ: Mapping[str, str] = os.environ, evidence: str | None = None) -> tuple[str, str]:
    """(``cpu`` or ``cuda``, the one line saying why)."""
    forced = environ.get(OVERRIDE_ENV, "").strip().lower()
    if forced:
        if forced not in CHOICES:
            raise ValueError(f"{OVERRIDE_ENV} is {forced!r}; it must be cpu or cuda")
        return forced, f"torch: the {forced} build, as {OVERRIDE_ENV} says"
    found = driver_evidence() if evidence is None else evidence
    if found:
        return "cuda", (
            f"torch: the CUDA build (about 5.9 GB with NVIDIA's libraries), since {found}; "
            f"{OVERRIDE_ENV}=cpu picks the CPU build"
        )
    return "cpu", (
        "torch: the CPU build (about 190 MB), since no NVIDIA driver was found here (no "
        f"/proc/driver/nvidia, no nvidia-smi, no libcuda); {OVERRIDE_ENV}=cuda picks the CUDA build"
    )


def main() -> int:
    try:
        extra, why = choose()
    except ValueError as exc:
        print(f"which_torch.py: {exc}", file=sys.stderr)
        return 2
    print(why, file=sys.stderr)
    print(extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
