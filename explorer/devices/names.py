"""Which device a typed name means: ``gtx1650``, ``GTX-1650``, ``rtx 4090``, ``h100``, ``cuda:0``.

People type GPU names the way the box or a forum spells them, so spaces, dashes, underscores
and case are ignored when names are compared; a unique part of a name is enough; and a near
miss ("gtx1605") gets a "did you mean" instead of a list of every key. Pure functions over
anything with ``key``, ``name`` and ``present`` (the device records, whatever their shape), so
the rules live in one place and do not depend on how devices were found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

_IGNORED = re.compile(r"[\s_\-]+")


class Named(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def present(self) -> bool: ...


D = TypeVar("D", bound=Named)


def normalise(text: str) -> str:
    """``" GeForce GTX-1650 "`` -> ``"geforcegtx1650"``: case, spaces, dashes and underscores dropped."""
    return _IGNORED.sub("", str(text)).lower()


def _slug(key: str) -> str:
    return key.split(":", 1)[1] if key.startswith("catalog:") else key


def _exact(q: str, d: Named) -> bool:
    return q in (normalise(d.key), normalise(_slug(d.key)), normalise(d.name))


def _contains(q: str, d: Named) -> bool:
    return q in normalise(d.name) or q in normalise(d.key)


def candidates(query: str, devices: Sequence[D]) -> list[D]:
    """The devices ``query`` may mean: those it names exactly (key, catalog slug or full name),
    else those whose name or key contains it, comparing normalised forms."""
    q = normalise(query)
    if not q:
        return []
    return [d for d in devices if _exact(q, d)] or [d for d in devices if _contains(q, d)]


def best_match(query: str, devices: Sequence[D]) -> list[D]:
    """The devices ``query`` means, present ones first: if any device here matches, catalog
    sheets do not (so "h100" or "rtx 4090" on a machine with that GPU means the real one, even
    though "rtx 4090" spells a sheet's slug exactly); then an exact match wins over a part.
    One left means that device."""
    q = normalise(query)
    if not q:
        return []
    matching = [d for d in devices if _exact(q, d) or _contains(q, d)]
    pool = [d for d in matching if d.present] or matching
    return [d for d in pool if _exact(q, d)] or pool


def _spellings(d: Named) -> list[str]:
    """The forms a person might aim at: the key, the slug, and every run of the name's words
    ("nvidiageforcegtx1650", "geforcegtx", "gtx1650", "1650", "h100", ...)."""
    words = str(d.name).split()
    runs = [normalise("".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, len(words) + 1)]
    return [normalise(d.key), normalise(_slug(d.key)), *runs]


def suggestions(query: str, devices: Sequence[D], n: int = 3) -> list[D]:
    """Devices whose name is close to ``query`` (difflib's ratio of at least 0.75), closest first."""
    q = normalise(query)
    if not q:
        return []
    owners: dict[str, list[D]] = {}
    for d in devices:
        for spelling in dict.fromkeys(_spellings(d)):
            owners.setdefault(spelling, []).append(d)
    # a spelling many devices share ("nvidia", "geforce") points at none of them in particular
    own = {spelling: ds[0] for spelling, ds in owners.items() if len(ds) == 1}
    import difflib  # only when nothing matched

    close = difflib.get_close_matches(q, list(own), n=4 * n, cutoff=0.75)
    picked: list[D] = []
    for spelling in close:
        if own[spelling] not in picked:
            picked.append(own[spelling])
    return picked[:n]


_VENDOR_PREFIXES = ("NVIDIA GeForce ", "NVIDIA Quadro ", "NVIDIA RTX ", "NVIDIA ", "GeForce ")


def short_device_name(name: str) -> str:
    """ "NVIDIA GeForce GTX 1650 Laptop GPU" -> "GTX 1650 Laptop": the part a class tells apart, for
    narrow places (a form's menu, a compare pane's title); the full name goes in the tooltip."""
    short = name
    for prefix in _VENDOR_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            short = name[len(prefix) :]
            break
    return short.removesuffix(" GPU") if short.endswith(" Laptop GPU") else short
