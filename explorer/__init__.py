"""Device Explorer: see and measure how compute devices work.

A Qt-free core that a headless GPU machine can import, from the bottom layer up:

* ``roofs``: a device's ceilings, where a measured point sits under them, the measured-roofs store.
* ``devices``: what hardware is there (probes, the catalog, per-architecture limits).
* ``agent``: the one worker program and protocol every child process and remote speaks.
* ``remote``: the agent on another machine, over ssh or inside a cluster's job.
* ``launch``: the CUDA execution model (limits, occupancy, dispatch in waves) and the real run.
* ``memory``: coalescing, bank conflicts, divergence and the tiled matmul's counts, exactly.
* ``bench``: benchmark workloads, honest timing, and the worker that streams their points.
* ``kernels``: a student's own numba kernel traced line by line under the CUDA simulator.
* ``quiz``: predict, then reveal: questions with exact answers on every model the app draws.
* ``lessons``: a teacher's sequence of page states with narration, replayed step by step.
* ``acceptance``: every GPU path of the app proved on a real GPU in one command.

Above them, thin Qt views in ``ui`` and the command line in ``commands`` (``cli`` dispatches to
it); below them all, small base modules of one job each (``errors``, ``events``, ``units``,
``schema`` ...). docs/design.md has the layers, the page-model recipe and a map of the concepts.
"""

__version__ = "0.1.0"
