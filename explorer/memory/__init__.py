"""What a warp's memory accesses and branches cost, exactly: global-memory coalescing (sectors and
lines), shared-memory bank conflicts, and warp divergence, Qt-free arithmetic over one warp's 32
lanes (``session``: the Memory page's model of those three tabs); and the tiled matrix multiply's
counts (``tiling``), its stepper (``tiling_steps``, ``tiling_session``) and its numba kernels
(``tiling_kernels``, imported only where one runs). The views and the CLI only show it. Imports
``launch`` and ``devices`` below it, never ``bench`` or ``ui``."""
