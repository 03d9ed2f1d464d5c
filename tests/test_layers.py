"""The layer contracts bite: an import that climbs a layer, or closes a cycle, fails lint-imports.

CI runs ``lint-imports`` on the tree as it is (``.ci/run``). These tests run it on a copy of the
package with one import planted, the kind the contracts were written against: one inside a
function (where a lazy import used to hide a cycle between packages), and one that closes a cycle
between two modules of one package. Each must break its contract and name the import.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

pytestmark = [
    pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed"),
    pytest.mark.slow,  # each case runs lint-imports in a process
]


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the copy, not the installed package
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tree, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "explorer", tmp_path / "explorer", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _plant(path: Path, code: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + code + "\n", encoding="utf-8")


def test_the_package_as_it_is_keeps_every_contract(tree: Path):
    done = _lint(tree)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Contracts: 3 kept, 0 broken." in done.stdout


PLANTED = [
    pytest.param(  # devices once reached up into bench for the peaks this way
        "devices/cpu.py",
        "from explorer.bench import peaks",
        [
            "explorer.devices is not allowed to import explorer.bench",
            "explorer.devices.cpu -> explorer.bench.peaks",
        ],
        id="devices-to-bench",
    ),
    pytest.param(  # the agent's methods once imported the self-test by name; by import it is caught
        "agent/serve.py",
        "from explorer.commands import selftest",
        [
            "explorer.agent is not allowed to import explorer.commands",
            "explorer.agent.serve -> explorer.commands.selftest",
        ],
        id="agent-to-commands",
    ),
    pytest.param(  # the real run and its emulation once imported each other; thread_index is below both
        "launch_runs/thread_index.py",
        "from explorer.launch_runs import realrun",
        ["No cycles are allowed in explorer.launch_runs."],
        id="cycle-in-launch-runs",
    ),
    pytest.param(  # the model once reached for the runner to ask whether a device can be measured
        "launch/time_views.py",
        "from explorer.launch_runs import measured",
        ["explorer.launch is not allowed to import explorer.launch_runs"],
        id="model-to-runner",
    ),
    pytest.param(  # the core runs on headless servers and in the agent, where no Qt is installed
        "memory/banks.py",
        "import pyqtgraph",
        ["explorer.memory is not allowed to import pyqtgraph", "explorer.memory.banks -> pyqtgraph"],
        id="qt-in-the-core",
    ),
    pytest.param(  # a model that reached for a view would drag Qt into the core with it
        "launch/session.py",
        "from explorer.ui import theme",
        ["explorer.launch is not allowed to import explorer.ui"],
        id="view-in-the-core",
    ),
]


@pytest.mark.parametrize(("module", "statement", "said"), PLANTED)
def test_an_import_inside_a_function_that_climbs_or_cycles_breaks_a_contract(
    tree: Path, module: str, statement: str, said: list[str]
):
    _plant(tree / "explorer" / module, f"def _planted():\n    {statement}\n\n    return None")
    done = _lint(tree)
    assert done.returncode == 1, done.stdout[-3000:]
    for line in said:
        assert line in done.stdout
