"""GPU acceptance: every GPU path of the app proved on a real GPU in one command, with a report
that says at once what is wrong (``benchmarks/gpu_acceptance.py --out DIR``).

Map of the package (Qt-free; it never imports ``explorer.ui`` or Qt, so it runs on a GPU server
with none; it sits at the top of the layers, beside ``explorer.commands``, and imports
``lessons``, ``bench``, ``memory``, ``launch``, ``remote``, ``agent`` and ``devices`` below it):

* ``records``: a check's result (status, one-line summary, figures against their targets) and
  the whole report, as JSON and as the text summary.
* ``judge``: the decisions, apart from the measuring: a figure against its target, a sweep
  against a model, the app's device fields against NVML and nvidia-smi. Pure; tested with values.
* ``context``: what a check is given (the device, the output folder, the sizes to measure at).
* ``registry``: the checks in the order they run, each with its deadline and expected time.
* ``runner``: the parent: runs each check in a child process of its own under a deadline (a
  crash or a hang costs that check only), keeps to the time budget, writes the report.
* ``child``: the child's entry point (``python -m explorer.acceptance.child``).
* ``checks_*``: the checks themselves, each a function ``(CheckContext) -> CheckResult``.

Statuses: ``pass`` (right, and every target met), ``miss`` (right, but a performance target
missed: a finding about the app or the machine, not a broken app), ``fail`` (a wrong answer or
a mismatch), ``error`` (the check itself broke), ``timeout``, ``skip`` (cannot run here, and
why), ``not run`` (left out by ``--only``/``--skip`` or by the time budget).
"""
