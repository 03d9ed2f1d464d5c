"""Why one NVML query gave no value, in a few plain words (the reason shown beside the field).

Kept apart from ``nvml.py`` so the GPM reader (``gpm.py``), which ``nvml.py`` uses, can say why
too without the two modules importing each other.
"""

from __future__ import annotations

_FIELD_EXPLANATIONS = {
    "NVMLError_NotSupported": "not supported by this GPU or driver",
    "NVMLError_NoPermission": "no permission to read it (try as administrator)",
    "NVMLError_GpuIsLost": "the GPU stopped responding",
    "NVMLError_FunctionNotFound": "the driver is too old to report it",
    "NVMLError_Unknown": "the driver returned an unknown error",
    "NVMLError_NotFound": "not found",
    "NVMLError_NoData": "no data yet",
    "NVMLError_InvalidArgument": "the driver rejected the query",
}

#: nvml.h's return codes for the errors above, as a GPM metric reports them (a number, no exception)
_CODE_NAMES = {
    2: "NVMLError_InvalidArgument",
    3: "NVMLError_NotSupported",
    4: "NVMLError_NoPermission",
    6: "NVMLError_NotFound",
    13: "NVMLError_FunctionNotFound",
    15: "NVMLError_GpuIsLost",
    999: "NVMLError_Unknown",
}

#: an NVML module without the query asked for: an nvidia-ml-py older than the query
MISSING_QUERY = "this NVML library (nvidia-ml-py) is too old to have this query"


def explain_field_error(exc: BaseException) -> str:
    """The reason for a field whose query raised ``exc``."""
    if isinstance(exc, AttributeError):
        return MISSING_QUERY
    reason = _FIELD_EXPLANATIONS.get(type(exc).__name__)
    return reason if reason else f"NVML error: {exc}"


def explain_return_code(code: int) -> str:
    """The reason for a value NVML answered with return code ``code`` instead of raising."""
    reason = _FIELD_EXPLANATIONS.get(_CODE_NAMES.get(int(code), ""))
    return reason if reason else f"NVML error code {int(code)}"
