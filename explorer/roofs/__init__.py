"""A device's roofs: its ceilings (compute and, per memory level, bandwidth), where a measured point
sits under them, and the per-machine store of the measured ones. Qt-free, and below ``devices``
and ``bench``: both read the same records from here, so the Devices page, the CLI and the
roofline can never disagree about a roof.

* ``model``: ``Ceiling`` (one roof line: its value, kind, basis, memory level and the working-set
  range it was measured over) and ``Roof`` (every ceiling of one device), with their JSON forms.
* ``plateaus``: finds the flat stretches of a working-set sweep and names each by the cache sizes
  the OS reports (a pure function, tested on synthetic curves; the sweep itself is ``bench``'s).
* ``placement``: the memory level a point's working set lives in, the roof it is judged against
  at its intensity (that level's, or the compute roof where compute binds) and its share of it.
* ``store``: ``measured-ceilings.json``, read through ``explorer.statefile`` and checked through
  ``explorer.schema``; one entry per device and machine fingerprint; a measurement taken while
  other programs were busy never replaces a quiet one.

May import only the base modules (``errors``, ``schema``, ``statefile``, ``units``, ``userdirs``,
``atomicwrite``); never ``devices``, ``bench``, ``agent``, ``remote``, ``ui`` or Qt.
"""
