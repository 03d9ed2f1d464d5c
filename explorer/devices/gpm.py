"""SM activity and SM occupancy from NVML's GPM metrics: what "GPU utilization 100%" hides.

NVML's "GPU utilization" is the share of time at least one kernel ran; one warp spinning on one
SM reads 100%. GPM (GPU Performance Monitoring, Hopper and newer GPUs) counts what the SMs did:

* SM activity (``NVML_GPM_METRIC_SM_UTIL``): the share of SMs that were busy;
* SM occupancy (``NVML_GPM_METRIC_SM_OCCUPANCY``): the warps resident on the SMs against the most
  they can hold.

Both are averages between two samples of the GPU's counters, so one reading needs two samples:
``GpmReader`` keeps one GPU's previous sample and, at each ``read()``, answers for the time since
it (the Devices page reads once a second, so each value covers the last second). The first read
only takes a sample and says "no data yet".

Every failure (a GPU without GPM, a driver that refuses, an nvidia-ml-py without the functions)
becomes the reason for the two fields; nothing here raises. Samples are NVML allocations: each
one taken is freed, and ``close()`` frees the one kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from explorer.devices.nvml_errors import explain_field_error, explain_return_code

#: the LiveReading fields GPM fills, and the NVML metric each one is
GPM_METRICS: dict[str, str] = {
    "sm_activity_pct": "NVML_GPM_METRIC_SM_UTIL",
    "sm_occupancy_pct": "NVML_GPM_METRIC_SM_OCCUPANCY",
}
NO_DATA_YET = (
    "no data yet: GPM compares two samples of the GPU's counters, and the next reading has the second"
)
NOT_SUPPORTED = (
    "NVML's GPM metrics are not available for this GPU (they need a Hopper or newer GPU, "
    "and a driver that allows them)"
)
NO_GPM_FUNCTIONS = "this NVML library (nvidia-ml-py) is too old to have the GPM metrics"
#: errors that will not go away by asking again: the reader stops asking and keeps the reason
_PERMANENT = frozenset({"NVMLError_NotSupported", "NVMLError_NoPermission", "NVMLError_FunctionNotFound"})


@dataclass
class GpmResult:
    """What one read gave: values by LiveReading field, and for each field without one, why."""

    values: dict[str, float] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @classmethod
    def missing(cls, reason: str) -> GpmResult:
        return cls(reasons=dict.fromkeys(GPM_METRICS, reason))


class GpmReader:
    """SM activity and occupancy of one GPU (``handle``) since the previous ``read()``."""

    def __init__(self, nvml: Any, handle: Any) -> None:
        self._nvml = nvml
        self._handle = handle
        self._previous: Any = None
        self._checked = False
        self.unusable: str | None = None  # a lasting reason: nothing is asked any more

    @property
    def primed(self) -> bool:
        """A sample is kept: the next ``read()`` answers with values."""
        return self._previous is not None

    def read(self) -> GpmResult:
        if not self._checked:
            self._checked = True
            self.unusable = self._support_problem()
        if self.unusable:
            return GpmResult.missing(self.unusable)
        nvml = self._nvml
        try:
            sample = nvml.nvmlGpmSampleAlloc()
        except Exception as exc:
            return self._failed(exc)
        try:
            nvml.nvmlGpmSampleGet(self._handle, sample)
        except Exception as exc:
            self._free(sample)
            return self._failed(exc)
        previous, self._previous = self._previous, sample
        if previous is None:
            return GpmResult.missing(NO_DATA_YET)
        try:
            return self._metrics(previous, sample)
        except Exception as exc:
            return self._failed(exc)
        finally:
            self._free(previous)

    def close(self) -> None:
        previous, self._previous = self._previous, None
        if previous is not None:
            self._free(previous)

    # ----- the driver calls
    def _support_problem(self) -> str | None:
        nvml = self._nvml
        if not all(
            hasattr(nvml, name)
            for name in ("nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "c_nvmlGpmMetricsGet_t")
        ):
            return NO_GPM_FUNCTIONS
        try:
            support = nvml.nvmlGpmQueryDeviceSupport(self._handle)
        except Exception as exc:
            return f"{NOT_SUPPORTED}: {explain_field_error(exc)}"
        return None if int(getattr(support, "isSupportedDevice", 0)) else NOT_SUPPORTED

    def _metrics(self, first: Any, second: Any) -> GpmResult:
        nvml = self._nvml
        request = nvml.c_nvmlGpmMetricsGet_t()
        request.version = nvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(GPM_METRICS)
        request.sample1 = first
        request.sample2 = second
        for i, metric in enumerate(GPM_METRICS.values()):
            request.metrics[i].metricId = getattr(nvml, metric)
        nvml.nvmlGpmMetricsGet(request)
        result = GpmResult()
        for i, name in enumerate(GPM_METRICS):
            metric = request.metrics[i]
            code = int(metric.nvmlReturn)
            value = float(metric.value)
            if code != 0:
                result.reasons[name] = explain_return_code(code)
            elif not math.isfinite(value) or value < 0:
                result.reasons[name] = f"NVML answered {value!r}, which is not a share"
            else:
                result.values[name] = min(value, 100.0)
        return result

    def _failed(self, exc: BaseException) -> GpmResult:
        if isinstance(exc, AttributeError):
            self.unusable = NO_GPM_FUNCTIONS
        elif type(exc).__name__ in _PERMANENT:
            self.unusable = f"{NOT_SUPPORTED}: {explain_field_error(exc)}"
        return GpmResult.missing(self.unusable or explain_field_error(exc))

    def _free(self, sample: Any) -> None:
        try:
            self._nvml.nvmlGpmSampleFree(sample)
        except Exception:
            pass  # a sample the driver will not free is its own loss, never the reading's
