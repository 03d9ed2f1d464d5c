"""Running a script under numba's CUDA simulator, as every kernel test without a GPU does: in a
fresh process (the simulator must be switched on before numba is first imported), the script
printing one ``RESULT{json}`` line that the test reads back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


def run_on_simulator(script: str, timeout_s: float = 300) -> Any:
    """The JSON the script printed after ``RESULT``; the test fails with the script's stderr tail
    when it exits with an error."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=timeout_s
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    return json.loads(line[len("RESULT") :])
