"""What a warp's memory accesses and branches cost, exactly: global-memory coalescing (sectors and
lines), shared-memory bank conflicts, and warp divergence. Qt-free arithmetic over one warp's 32
lanes; the views and the CLI only show it."""
