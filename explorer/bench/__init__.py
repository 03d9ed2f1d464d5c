"""Qt-free: benchmark workloads, honest timing, and a worker process that streams results.

Public API (see /tmp/api-bench.md; names and signatures kept as agreed):

* ``explorer.bench.results``: ``BenchPoint``, ``write_csv``/``read_csv``, ``write_json``/``read_json``,
  ``last_results_path()``, ``save_last(points)``, ``load_last()``, ``format_point(p)`` (one text line).
* ``explorer.bench.workloads``: ``Workload``, ``WORKLOADS`` (the eight, in menu order),
  ``get_workload(name)``, ``visible_workloads()``. Additions: ``Workload.variants(device)`` gives
  the variant labels a device will produce (the series names; they include the device, so they
  are unique within a run), ``Workload.default_sizes(device)``, ``Workload.size_label(size)``.
  Hidden test workloads ``_crash_test`` and ``_hang_test`` (in ``TEST_WORKLOADS``, not in
  ``WORKLOADS``) segfault / hang their worker at size 2 and measure a short sum at other sizes.
* ``explorer.bench.runner``: ``BenchPlan``, ``Progress``, ``BenchRun`` (``events()``, ``cancel()``,
  ``total_points``; also ``run_all()`` and ``points``), ``parse_device(text)``.
  ``events()`` first yields ``Progress(0, total, None)``, then for each point the BenchPoint
  followed by a Progress.
"""
