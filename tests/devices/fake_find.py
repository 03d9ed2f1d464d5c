"""``find_device`` answered from a fixed list of devices, as ``--device NAME`` is on a machine that
has exactly those: the CLI tests name GPUs without probing this one."""

from __future__ import annotations

from explorer.devices import find as find_module
from explorer.devices.discovery import Discovery
from explorer.devices.model import Device
from explorer.errors import UserError


def find_only(monkeypatch, devices: list[Device]) -> None:
    """Make ``find_device`` find only ``devices`` (one match or a one-line UserError)."""
    disc = Discovery(devices=list(devices), reports=[])

    def fake_find(query, discovery=None):
        found = disc.find(query)
        if len(found) != 1:
            raise UserError(f"no single device matches {query!r}")
        return found[0]

    monkeypatch.setattr(find_module, "find_device", fake_find)
