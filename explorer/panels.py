"""The window's pages, named once: as ``--panel`` takes them, as the settings keep the last one
and as a lesson step shows one. A base module (it imports nothing), so the command line, the
settings and the lesson model share it without importing each other."""

from __future__ import annotations

PANELS = ("devices", "visualizer", "benchmarks", "memory")
