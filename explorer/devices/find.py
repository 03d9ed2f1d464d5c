"""Which device a typed name means ("1650", "RTX 4090", "cuda:0", "cpu"), kept apart from
the probes: a name that can only mean a catalog sheet is answered from the sheets and the
kernel module's list of installed GPUs, so ``launch --device 1650`` imports no probe code
(``devices.discover`` is imported only when the probes must run)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from explorer.devices.model import CudaGpu, Device
from explorer.devices.names import best_match, normalise, suggestions
from explorer.errors import UserError
from explorer.inputs import shown

if TYPE_CHECKING:  # the probes' answer: a name found on the spec sheets alone never builds one
    from explorer.devices.discovery import Discovery

#: Where the NVIDIA kernel module lists the GPUs it drives, one folder per GPU (Linux).
PROC_NVIDIA_GPUS = "/proc/driver/nvidia/gpus"


def installed_gpu_names(proc_dir: str = PROC_NVIDIA_GPUS) -> list[str] | None:
    """Names of the NVIDIA GPUs in this machine, read without any driver call; ``None`` when
    this system cannot say so (not Linux).

    On Linux the kernel module writes ``<bus id>/information`` for each GPU ("Model: NVIDIA
    GeForce GTX 1650") when it loads; reading it never waits on a GPU, where ``nvmlInit`` on a
    GPU that fell off the bus waits a minute. No folder means no NVIDIA driver, so no GPU.
    """
    import os
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        entries = sorted(os.listdir(proc_dir))
    except FileNotFoundError:
        return []
    except OSError:
        return None
    names = []
    for entry in entries:
        try:
            with open(os.path.join(proc_dir, entry, "information"), encoding="utf-8", errors="replace") as fh:
                text = fh.read(65536)
        except OSError:
            return None
        model = next(
            (ln.partition(":")[2].strip() for ln in text.splitlines() if ln.startswith("Model:")), ""
        )
        names.append(model or f"NVIDIA GPU at {entry}")
    return names


def catalog_match_without_probing(query: str, *, proc_dir: str = PROC_NVIDIA_GPUS) -> Device | None:
    """The catalog sheet ``query`` means, found without asking any driver, or ``None`` when only
    the probes can tell (then the caller runs them).

    This is what keeps ``launch --device 1650`` on a laptop instant: no torch, no numba, no NVML.
    A name that fits both a GPU in this machine and a catalog sheet still means the GPU in the
    machine (``find_device``'s rule), and that is decided without a slow probe: the query is
    matched against the catalog *and* the names of the installed GPUs (``installed_gpu_names``,
    no driver call), with the same rules ``find_device`` uses. Only when the single answer is a
    catalog sheet is it returned; a present GPU, an ambiguity, no match, a key of a present
    device ("cpu", "cuda:0") or a system that cannot list its GPUs without the driver all go
    to the full probe, which gives the real record or the error listing every device.
    """
    q = (query or "").strip().lower()
    if not q or q == "cpu" or q.startswith(("cuda:", "nvml:")):
        return None
    names = installed_gpu_names(proc_dir)
    if names is None:
        return None
    try:
        from explorer.devices.catalog import catalog_device, sheet_names

        named = sheet_names()
    except Exception:
        return None
    if named is None:
        return None
    here: list[Device] = [CudaGpu(name=name, key=f"installed:{i}") for i, name in enumerate(names)]
    try:
        found = _one_of(query, [*here, *named], None)
    except UserError:
        return None
    if found.kind != "catalog":
        return None
    try:  # only the sheet named is checked and built; a damaged one goes to the full probe
        return catalog_device(found.key)
    except Exception:
        return None


def _no_such_cuda_device(index: int, disc: Discovery) -> str:
    """Why ``cuda:N`` names nothing here, in one line: no CUDA device at all (and why), or the
    indices there are."""
    usable = disc.present_gpus
    if not usable:
        why = disc.why_no_gpu() or "no NVIDIA GPU was found"
        return (
            f"cuda:{index} names no device: this machine has no CUDA device. {why.rstrip('.')}. A "
            "catalog GPU's spec sheet works without one (--device 1650, --device h100; "
            "'devices --catalog' lists them)"
        )
    keys = ", ".join(d.key for d in usable)
    return f"there is no cuda:{index} here; this machine's CUDA devices: {keys}"


def find_device(query: str, discovery: Discovery | None = None) -> Device:
    """The one device a user means by ``query`` ("1650", "gtx1650", "RTX 4090", "cuda:0", "cpu").

    Rules (``explorer.devices.names``): case, spaces, dashes and underscores are ignored; an
    exact key, slug or name wins; otherwise the devices whose name or key contain the query; if
    some of those are present they win over catalog sheets (so "h100" on an H100 machine means
    the real GPU); if exactly one is left it is the answer, else a ``UserError`` lists the
    candidates, or, when nothing matches, suggests the nearest names. The catalog keeps one
    sheet per common short name (one H100, one A100) so such names stay unambiguous. Without a
    ``discovery``, a query that can only mean a catalog sheet is answered without probing any
    driver (``catalog_match_without_probing``); anything else asks NVML and the CUDA driver once
    per process (never torch or numba).
    """
    if not normalise(query or ""):
        raise UserError("no device named; give a name or part of one, e.g. 'cpu', 'cuda:0', '1650', 'h100'")
    if len(query) > 100:
        raise UserError(f"no device matches {shown(query)}; device names are at most 100 characters")
    if discovery is None:
        sheet = catalog_match_without_probing(query)
        if sheet is not None:
            return sheet
        from explorer.devices.discover import default_discovery

        discovery = default_discovery()
    return _one_of(query, discovery.devices, discovery)


def _one_of(query: str, devices: list[Device], disc: Discovery | None) -> Device:
    """The one device of ``devices`` that ``query`` means, else a ``UserError`` saying why; ``disc``
    (the probes' answer the devices came from, if they did) explains a ``cuda:N`` that names none."""
    found = best_match(query, devices)
    if len(found) == 1:
        return found[0]
    if not found:
        cuda_index = re.fullmatch(r"\s*cuda\s*:\s*(\d+)\s*", query, flags=re.IGNORECASE)
        if cuda_index is not None and disc is not None:  # by number: say what there is, not every sheet
            raise UserError(_no_such_cuda_device(int(cuda_index.group(1)), disc))
        near = suggestions(query, devices)
        if near:
            names = " or ".join(f"{d.name!r} ({d.key})" for d in near)
            raise UserError(f"no device matches {shown(query)}; did you mean {names}?")
        known = ", ".join(d.key for d in devices)
        raise UserError(f"no device matches {shown(query)}; known devices: {known}")
    listed = ", ".join(f"{d.key} ({d.name})" for d in found)
    raise UserError(f"{shown(query)} matches {len(found)} devices: {listed}; give more of the name or a key")
