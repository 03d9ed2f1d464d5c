"""The GPU machine has no Qt, pyqtgraph, superqt or platformdirs: the acceptance run, the CLI
commands it calls and every worker process they start must never import them. Tested by running
them with those imports made to fail in every process (a ``sitecustomize`` on PYTHONPATH, which
each child Python loads at start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process

REPO = Path(__file__).resolve().parents[2]
BLOCKED = ("PySide6", "shiboken6", "pyqtgraph", "superqt", "platformdirs")
BLOCKER = textwrap.dedent(
    f"""
    import sys

    class _NoQtHere:
        BLOCKED = {BLOCKED!r}

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.BLOCKED:
                raise ImportError(f"{{name}} is not installed on the GPU machine (blocked by the test)")
            return None

    sys.meta_path.insert(0, _NoQtHere())
    """
)
#: every module the acceptance run imports, directly or inside its checks' functions
PATH_MODULES = (
    "explorer.acceptance.runner",
    "explorer.acceptance.registry",
    "explorer.acceptance.child",
    "explorer.acceptance.cudadriver",
    "explorer.bench.runner",
    "explorer.bench.execute",
    "explorer.bench.wl_torch",
    "explorer.bench.wl_numba",
    "explorer.bench.wl_memory",
    "explorer.bench.wl_copies",
    "explorer.bench.wl_cnn",
    "explorer.bench.peaks",
    "explorer.launch_runs.realrun",
    "explorer.launch.schedule",
    "explorer.lessons.recording",
    "explorer.remote",
    "explorer.devices.discover",
    "explorer.devices.nvml",
    "explorer.devices.gpm",
    "explorer.agent.serve",
    "explorer.commands.agent",
    "explorer.cli",
    "explorer.commands.devices",
    "explorer.commands.selftest",
)


@pytest.fixture(scope="module")
def no_qt_env(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("noqt")
    (folder / "sitecustomize.py").write_text(BLOCKER)
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if k not in ("DEVICE_EXPLORER_HOME", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(REPO)])
    env["DEVICE_EXPLORER_HOME"] = str(home)
    return env


def _python(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_blocker_works(no_qt_env):
    proc = _python(no_qt_env, "-c", "import PySide6")
    assert proc.returncode != 0 and "blocked by the test" in proc.stderr


def test_every_module_on_the_acceptance_path_imports_without_qt(no_qt_env):
    code = f"import importlib\nfor m in {PATH_MODULES!r}:\n    importlib.import_module(m)\nprint('imported')"
    proc = _python(no_qt_env, "-c", code)
    assert proc.returncode == 0 and "imported" in proc.stdout, proc.stderr[-2000:]


def test_the_script_lists_and_refuses_without_qt(no_qt_env):
    listed = _python(no_qt_env, "benchmarks/gpu_acceptance.py", "--list")
    assert listed.returncode == 0 and "occupancy" in listed.stdout, listed.stderr
    refused = _python(no_qt_env, "benchmarks/gpu_acceptance.py", "--out", "/tmp/never-written")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("gpu_acceptance: no usable NVIDIA GPU here")


def test_devices_json_and_a_check_with_its_benchmark_workers_run_without_qt(no_qt_env, tmp_path):
    devices = _python(no_qt_env, "-m", "explorer", "devices", "--json")
    assert devices.returncode == 0 and json.loads(devices.stdout)["devices"][0]["kind"] == "cpu", (
        devices.stderr
    )
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from explorer.acceptance import checks_bench
        from explorer.acceptance.context import CheckContext, Sizes
        from explorer.acceptance.registry import CheckSpec
        from explorer.acceptance.runner import run_acceptance
        spec = CheckSpec("branch", "t", checks_bench.check_branch, 1, 600, {{"NUMBA_ENABLE_CUDASIM": "1"}})
        ctx = CheckContext(device="cuda:0", out_dir=Path({str(tmp_path / "acc")!r}), repo=Path({str(REPO)!r}), sizes=Sizes.tiny())
        report = run_acceptance([spec], ctx, budget_s=600, say=lambda _: None)
        print("STATUS", report.checks[0].status, report.checks[0].summary)
        """
    )
    proc = _python(no_qt_env, "-c", code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "STATUS pass" in proc.stdout or "STATUS miss" in proc.stdout, (
        proc.stdout + (tmp_path / "acc" / "acceptance.log").read_text()[-3000:]
    )


def test_self_test_without_qt_fails_only_the_qt_checks(no_qt_env):
    from explorer.acceptance.checks_devices import QT_ONLY_CHECKS, judge_self_test

    proc = _python(no_qt_env, "-m", "explorer", "self-test", "--json")
    report = json.loads(proc.stdout)
    counted, qt_only = judge_self_test(report)
    assert counted == [], counted
    assert {c["name"] for c in qt_only} == QT_ONLY_CHECKS
