"""Qt-free: what hardware is there. Probes fill ``model.Device`` records; ``discover`` merges them.

``limits`` holds the per-compute-capability limits (``ArchLimits``, with what a driver reported
put first). Below ``agent``, ``remote``, ``launch`` and ``bench``: it imports only ``roofs`` and
the base modules (import-linter's layers contract in pyproject.toml holds it to that).
"""
