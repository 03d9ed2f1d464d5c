"""numba's CUDA target meets a numpy without the aliases numba-cuda still registers overloads for."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from explorer.numbacuda import REMOVED_NUMPY_ALIASES, restore_numpy_aliases


def test_a_numpy_without_row_stack_gets_the_vstack_alias_back():
    vstack = object()
    numpy_25 = SimpleNamespace(vstack=vstack)
    assert restore_numpy_aliases(numpy_25) == ["row_stack"]
    assert numpy_25.row_stack is vstack


def test_a_numpy_that_still_has_the_name_is_left_alone():
    own = object()
    numpy_24 = SimpleNamespace(vstack=object(), row_stack=own)
    assert restore_numpy_aliases(numpy_24) == []
    assert numpy_24.row_stack is own


def test_every_alias_names_a_function_this_numpy_has():
    import numpy as np

    for old, new in REMOVED_NUMPY_ALIASES.items():
        assert callable(getattr(np, new)), new
        assert getattr(np, old) is not None, old


def test_no_module_of_the_app_imports_numba_cuda_past_the_aliases():
    """On numpy 2.5 with numba-cuda 0.30 every kernel failed until all of them took ``cuda`` from
    ``explorer.numbacuda``; a new ``from numba import cuda`` would bring that back."""
    root = Path(__file__).resolve().parent.parent / "explorer"
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "numbacuda.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                if any(a.name == "cuda" for a in node.names):
                    offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}")
            elif isinstance(node, ast.Import) and any(a.name.startswith("numba.cuda") for a in node.names):
                offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert offenders == []
