"""Qt-free: the CUDA execution model (limits, validation, occupancy, dispatch in waves).

API notes for callers:
- ``occupancy(...)`` also takes ``carveout_percent`` (keyword, CUDA's -1/0..100 preference).
- ``Occupancy.blocks_limit_regs`` / ``blocks_limit_smem`` are ``UNLIMITED`` (2**31-1, NVIDIA's
  INT_MAX) when the block uses no registers / no shared memory at all; ``to_dict()`` gives null.
  Extra fields: ``regs_per_thread``, ``smem_per_block_bytes``, ``max_blocks_per_sm``,
  ``regs_per_sm``, ``reg_alloc_unit``, ``reserved_smem_per_block_bytes``; ``block_limits()``.
- ``ArchLimits`` has one extra field, ``reg_sub_partitions``, and ``label`` / ``cc_string``.
- ``validate(config, limits, device_name=None)``: without a name, messages say
  "compute capability X.Y (Arch)". ``notes(config, limits)`` lists allowed-but-notable things
  (shared memory that needs the opt-in). ``check()`` raises instead of returning the list.
- ``LaunchPlan`` adds ``uncovered_elements`` (n past the last thread: the launch is too small),
  ``notes``, ``warp_size``, ``block_busy_threads(block_linear)``, ``blocks_on_sm_in_wave(sm, wave)``,
  ``thread_index(thread_linear)`` / ``thread_linear(thread_idx)`` and ``thread_at_global(i)``;
  out-of-range block or thread numbers raise ``LaunchValidationError``. ``schedule.blocks_for(n, tpb)``
  is ceil(n / tpb).
- A problem may have a size per axis: ``LaunchConfig.extent: Dim3 | None`` (``parse_launch(..., n="1920,1080")``,
  CLI ``--n 1920,1080``); a thread is idle when blockIdx*blockDim+threadIdx is outside it on any axis.
  ``config.problem_elements``; ``to_dict()`` keeps ``n`` (the element count) and adds ``extent``.
  ``ThreadInfo.global_position`` (per axis) and ``ThreadInfo.extent``.
- The records a plan answers with (``ThreadInfo``, ``BlockPlacement``, ``WaveFill``, ``IdleRun``,
  ``WaveIdle``) live in ``plan_records``, built only when asked for: ``device-explorer launch`` needs none.
- For drawing a wave without one object per block: ``plan.wave_fill(wave, dispatched) -> WaveFill``
  (``slots_taken(sm)``, ``busy_sms``, ``block_at(sm, slot)``, ``position(block)``, ``spans(start, stop)``),
  ``plan.idle_blocks_in_wave(wave) -> WaveIdle`` (runs of blocks with the same idle lanes) and
  ``plan.block_busy_lanes(block) -> tuple | None``.
- The launch visualizer's model is ``session.LaunchSession`` (devices, sides A and B as
  ``LaunchSetup``/``LaunchSide``, compare mode, one clock, the selection, and ``events``), with
  ``animation.Animation`` (one launch's clock in waves), ``lockstep.LockStep`` (two on one clock)
  and ``presets``. Nothing is imported here: each caller imports the module it needs, so a
  terminal's launch loads the model and not the visualizer's records.
- The runs that check this model with real kernels (the real run, measured timelines and
  bandwidth) live one layer up, in ``explorer.launch_runs``: nothing here runs a kernel.
  ``measurable.measurable(device)`` is the pure check both the model and the runner ask.
- Occupancy assumes what the CUDA runtime assumes for an ordinary kernel: partitioned global
  caching off, the kernel opted in to the shared memory it asks for, barriers never the limit.
  ``tests/launch/test_occupancy_vs_nvidia.py`` checks the port against cuda_occupancy.h itself.
"""
