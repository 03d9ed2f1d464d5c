"""A stand-in ``pynvml`` for a remote agent started as "a GPU server" in the tests: the two GPUs of
``tests.devices.fake_nvml`` (a GTX 1650 and an A100), so NVML sees GPUs where torch is the CPU build.

``tests.remote.servers.fake_gpu_python`` puts this folder first on the agent's PYTHONPATH."""

import sys

from tests.devices.fake_nvml import make_fake_nvml

sys.modules[__name__] = make_fake_nvml()
