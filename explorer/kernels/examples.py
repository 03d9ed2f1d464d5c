"""The example scripts shipped with the app (``resources/examples``): the kernels a course's
notebook has students write, ready to trace. A lesson step names one by its file name; it never
names a path, so a lesson runs no script of anyone's choosing."""

from __future__ import annotations

from pathlib import Path

from explorer.errors import UserError
from explorer.inputs import one_line


def examples_dir() -> Path:
    from explorer.resources import resource_path

    return resource_path("examples")


def example_names() -> list[str]:
    """The shipped examples' file names, sorted."""
    return sorted(p.name for p in examples_dir().glob("*.py") if p.is_file())


def example_path(name: str) -> Path:
    """A shipped example by its file name; one line naming the choices when there is no such one."""
    names = example_names()
    if name not in names:
        raise UserError(f"example is {one_line(name)!r}, not one of the shipped examples: {', '.join(names)}")
    return examples_dir() / name
