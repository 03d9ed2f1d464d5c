"""Qt-free: benchmark workloads, honest timing, and a worker process that streams results.

Public API (the names and signatures the rest of the app relies on; change them together):

* ``explorer.bench.results``: ``BenchPoint``, ``write_csv``/``read_csv``, ``write_json``/``read_json``,
  ``last_results_path()``, ``save_last(points)``, ``load_last()``; ``explorer.bench.lines``:
  ``format_point(p)`` (one text line).
* ``explorer.bench.workloads``: ``WORKLOADS`` (every visible workload, in menu order),
  ``get_workload(name)``, ``visible_workloads()``; the ``Workload`` record is in
  ``explorer.bench.workload``. Additions: ``Workload.variants(device)`` gives
  the variant labels a device will produce (the series names; they include the device, so they
  are unique within a run), ``Workload.default_sizes(device)``, ``Workload.size_label(size)``.
  Hidden test workloads ``_crash_test``, ``_hang_test`` and ``_oom_test`` (in ``TEST_WORKLOADS``,
  not in ``WORKLOADS``; ``get_workload`` finds them) segfault / hang / run out of memory at size 2
  and measure a short Python sum at other sizes (default sizes 1, 2, 3).
* ``explorer.bench.runner``: ``BenchPlan``, ``Progress``, ``BenchRun`` (``events()``, ``cancel()``,
  ``total_points``; also ``run_all()`` and ``points``), ``parse_device(text)``.
  ``BenchPlan.low_priority=True`` runs the worker below normal priority (for the window).
  ``events()`` first yields ``Progress(0, total, None)``, then for each point the BenchPoint
  followed by a Progress. ``BenchRun(plan)`` raises ``UserError`` (one line) for a bad plan:
  unknown workload, size <= 0, repeats < 1, a device that is not 'cpu' or 'cuda:N'. Points run
  in order of size, then device, then variant. A device that is not present gives error rows,
  not an exception. For ``two_gpus`` the first GPU chosen runs the points and the second is its
  partner (``PointSpec.partner``); with one GPU named, the partner is the next GPU.
* Error rows: ``BenchPoint.error`` is one line ("needs two GPUs; 0 found", "out of memory: ...",
  "the worker process crashed (SIGSEGV) while measuring this point; ...", "took longer than
  the time limit of 120 s; ..."); timings and throughput are ``None``.
* ``explorer.bench.timing``: ``measure()`` / ``measure_torch()`` / ``summarize()`` (Timing record).
* ``explorer.bench.noise``: what disturbed a point (``Load``) and the verdict on it (``judge`` ->
  ``Verdict(noisy, reason)``), in ``BenchPoint.noisy`` / ``noise_reason``.
* ``explorer.bench.variants``: ``Variant(key, label, run)``, declared in each ``wl_*`` module;
  ``Workload.variants_on(device)`` / ``Workload.variant(key)``.
* ``explorer.bench.spec``: ``PointKey`` (host, device, variant key, size: what a point measured,
  ``BenchPoint.key``; never its label) and ``PointSpec``, the typed record ``plan_points`` returns
  and a worker is sent (``to_dict`` / checked ``from_dict``). ``explorer.bench.resume`` matches
  finished points by key (an earlier version's labels are mapped to keys).
* ``explorer.bench.run_results``: ``RunResults``, the Qt-free model of the panel's runs (one per
  workload) that its table and plots read, with the roofs each run's points were placed under.
* Roofs (the records and the store live below, in ``explorer.roofs``): ``sweep`` (the CPU's
  working-set sweep: read, copy and triad kernels on every core), ``gpu_sweep`` and
  ``roof_kernels`` (a GPU's L2 and DRAM), ``chase`` (a GPU's latency ladder, stored with its
  ceilings), ``ceilings`` (measuring a device's ceilings, judged by the noise verdict), ``peaks``
  (the one roof per device a worker places its points under, and the PCIe peak), ``judge`` (a
  point's level and share of its roof), ``remeasure`` ("Measure again" in a worker process),
  ``roofline`` (the lines and steps the views draw).
"""
