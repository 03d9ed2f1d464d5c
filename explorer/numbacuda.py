"""numba's CUDA target, imported in one place so that it meets the numpy it was written for.

Every module that compiles a kernel takes ``cuda`` from here, never ``from numba import cuda``.
The first GPU this project ran on (an H100 image with numpy 2.5.2 and numba-cuda 0.30.4) showed
why: numba-cuda registers an overload of ``np.row_stack`` when its first kernel compiles, numpy
2.5 removed that name (it was only ever an alias of ``np.vstack``), and so every numba kernel
failed with "module 'numpy' has no attribute 'row_stack'" while torch ran fine. Putting the alias
back before numba-cuda loads changes nothing numpy itself does; the app's own code never uses it.

Importing this module imports numba: import it lazily, inside the functions that need a kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: numpy names that numba-cuda still registers overloads for, and what they were aliases of.
REMOVED_NUMPY_ALIASES: dict[str, str] = {"row_stack": "vstack"}


def restore_numpy_aliases(module: Any = np) -> list[str]:
    """Put back each alias numba-cuda expects that this numpy lacks; the names put back."""
    restored = []
    for old, new in REMOVED_NUMPY_ALIASES.items():
        if not hasattr(module, old) and hasattr(module, new):
            setattr(module, old, getattr(module, new))
            restored.append(old)
    return restored


restore_numpy_aliases()

from numba import cuda as _numba_cuda  # noqa: E402  (after the aliases it needs)

#: typed as Any on purpose: numba's hints describe its Python internals (``cuda.grid`` is an
#: intrinsic taking a typing context, ``threadIdx.x`` a property of its typing class), not what a
#: kernel's body sees, so with them mypy would reject every typed kernel
cuda: Any = _numba_cuda

__all__ = ["cuda", "restore_numpy_aliases"]
