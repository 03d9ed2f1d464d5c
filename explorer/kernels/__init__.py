"""A student's own numba kernel, line by line: their script run under numba's CUDA simulator in a
child, every lane's accesses and lines recorded, and each source line's figures counted with
Nsight Compute's definitions by the same rules the Memory page draws. Qt-free.

* ``counts``: the pure counting (requests, sectors, wavefronts, warp executions, divergence).
* ``trace``: the child's hooks into the simulator, and running the script (agent side only).
* ``run``: the parent: the agent started with the simulator on, the budgets, the records.

Imports ``memory`` (the coalescing and bank rules) and ``agent`` (the child) below it; never
``bench``, ``ui`` or Qt. The window's "Your kernel" page and ``device-explorer kernel`` show it.
"""
