"""Qt-free: the launch visualizer's runs, the kernels that check ``explorer.launch``'s model on a GPU.

``explorer.launch`` is the CUDA execution model (pure arithmetic and simulation); this package runs
numba kernels against it, always in a child agent process so a driver fault or a hung kernel ends
the child, never the caller:

- ``realrun``: a vector add launched with the user's grid and block, recording who wrote each
  element (on the GPU, under numba's CUDA simulator, or as the compiled CPU emulation).
  ``run_real(config, ...)`` takes the ``LaunchConfig``; ``check_launch(config, backend)`` refuses a
  run too big for the backend; ``check_size``/``run_here`` keep the agent's list form.
- ``realrun_emulation``: the same index code compiled by ``@njit`` (imports numba: child only).
- ``thread_index``: one thread's index arithmetic, the one copy both of the above compile.
- ``measured``: blocks timed on the GPU (``%smid``, ``%globaltimer``) into a ``launch.timeline.Timeline``,
  and memory bandwidth against resident warps per SM; ``measured_kernels`` holds their kernels,
  among them the app's one pointer chase (global and shared memory), whose chain ``chase`` builds
  (the Latency page's measurement and the Benchmarks page's latency ladder both use it).

Sits above ``launch`` (and ``remote``, ``agent``, ``devices``); nothing in ``launch`` imports it.
Not imported here, so ``import explorer.launch_runs`` stays light.
"""
