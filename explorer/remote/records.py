"""Device records rebuilt from what a remote agent sent (``Discovery.to_dict()``), checked field by field.

A remote agent is another machine: its answer is untrusted input. Each record is rebuilt from
the dataclass's own fields and types (unknown keys are ignored, a value of the wrong type is
dropped and marked unavailable with the reason), so the Devices panel and the CLI show a
remote GPU with exactly the details, and the same "why missing" words, as a local one.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from explorer.agent.protocol import ProtocolError
from explorer.devices.caches import CpuCache
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.live import GpuProcess, LiveReading
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu, Device
from explorer.schema import SchemaError, check_value

_KINDS: dict[str, type] = {"cpu": CpuDevice, "cuda": CudaGpu, "catalog": CatalogGpu}
#: records the device records hold whose modules ``explorer.devices.model`` imports for type
#: checking only (so a launch on a spec sheet never loads them): their annotations name them
_HELD_RECORDS: dict[str, Any] = {"CpuCache": CpuCache, "GpuProcess": GpuProcess, "LiveReading": LiveReading}
_MAX_TEXT = 2000


def _convert(value: Any, hint: Any) -> Any:
    """``value`` as type ``hint``; ValueError when it is not one.

    Plain JSON types are ``explorer.schema``'s checks (the same as for saved files); what those
    do not cover is handled here: the nested records (a GPU's processes, limits, live reading),
    fixed-length tuples (a compute capability, also accepted as "8.6"), and long text, which is
    cut rather than refused (a remote's error words are shown, not stored)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(value, arg)
            except ValueError:
                continue
        raise ValueError(f"{value!r:.60}")
    if dataclasses.is_dataclass(hint):
        return _record(typing.cast(type, hint), value)
    if origin is list and dataclasses.is_dataclass(args[0]):
        if isinstance(value, list):
            return [_convert(v, args[0]) for v in value]
        raise ValueError(f"{value!r:.60}")
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        if isinstance(value, (list, tuple)) and len(value) == len(args):
            return tuple(_convert(v, a) for v, a in zip(value, args, strict=True))
        if isinstance(value, str) and len(args) == 2 and args[0] is int:  # "8.6" compute capability
            major, _, minor = value.partition(".")
            if major.isdigit() and minor.isdigit():
                return (int(major), int(minor))
        raise ValueError(f"{value!r:.60}")
    if hint is str and isinstance(value, str):
        return value[:_MAX_TEXT]
    try:
        return check_value(value, hint, "value")
    except (SchemaError, TypeError):
        raise ValueError(f"{value!r:.60}") from None


def _record(cls: type, data: Any) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{cls.__name__} is not an object")
    hints = typing.get_type_hints(cls, localns=_HELD_RECORDS)
    kwargs: dict[str, Any] = {}
    dropped: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "unavailable" or f.name not in data:
            continue
        try:
            kwargs[f.name] = _convert(data[f.name], hints[f.name])
        except ValueError:
            dropped[f.name] = "the remote sent a value that is not valid here"
    try:
        record = cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"{cls.__name__}: {exc}") from None
    unavailable = getattr(record, "unavailable", None)
    if unavailable is not None:
        reasons = data.get("unavailable")
        if isinstance(reasons, dict):
            for name, reason in reasons.items():
                if isinstance(name, str) and isinstance(reason, str):
                    try:
                        unavailable.mark(name, reason[:_MAX_TEXT])
                    except KeyError:
                        pass  # a field this version does not have
        for name, reason in dropped.items():
            unavailable.mark(name, reason)
    return record


def device_from_dict(data: Any) -> Device:
    """One Device record from ``Device.to_dict()``'s output; ProtocolError when it is not one."""
    if not isinstance(data, dict) or data.get("kind") not in _KINDS:
        kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise ProtocolError(f"the remote sent a device of unknown kind {kind!r:.40}")
    try:
        record: Device = _record(_KINDS[data["kind"]], data)
    except ValueError as exc:
        raise ProtocolError(f"the remote sent a device that is not valid: {exc}") from None
    return record


def discovery_from_dict(data: Any) -> Discovery:
    """A Discovery from ``Discovery.to_dict()``'s output (devices and probe reports)."""
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list):
        raise ProtocolError("the remote's device list is not a list of devices")
    devices = [device_from_dict(d) for d in data["devices"]]
    reports = []
    for r in data.get("probes") or []:
        try:
            reports.append(_record(ProbeReport, r))
        except ValueError:
            continue
    return Discovery(devices=devices, reports=reports)


def live_from_dict(data: Any) -> LiveReading:
    """One LiveReading from ``LiveReading.to_dict()``; ProtocolError when it is not one."""
    try:
        reading: LiveReading = _record(LiveReading, data)
    except ValueError as exc:
        raise ProtocolError(f"the remote sent a reading that is not valid: {exc}") from None
    return reading
