"""A stand-in ``pynvml`` whose ``nvmlInit`` blocks, as it does when a GPU fell off the bus.

Put this folder first on ``PYTHONPATH`` to run the app against it:

    PYTHONPATH=tests/devices/hung_nvml device-explorer devices

``HUNG_NVML_SLEEP_S`` sets how long ``nvmlInit`` sleeps (default 60 s, what nvidia-smi waits);
``HUNG_NVML_ENTERED`` names a file it creates as it starts to hang (a test acts on that, not on a
guessed delay).
"""

from __future__ import annotations

import os
import time

NVML_CLOCK_SM = 0
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0


class NVMLError(Exception):
    pass


def nvmlInit() -> None:
    entered = os.environ.get("HUNG_NVML_ENTERED")
    if entered:
        with open(entered, "a"):
            pass
    time.sleep(float(os.environ.get("HUNG_NVML_SLEEP_S", "60")))


def nvmlShutdown() -> None:
    pass


def nvmlDeviceGetCount() -> int:
    return 0


def nvmlSystemGetDriverVersion() -> str:
    return "0.0"


def nvmlSystemGetCudaDriverVersion() -> int:
    return 0
