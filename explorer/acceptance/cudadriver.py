"""The CUDA driver's own answers, asked directly (NVIDIA's ``cuda-bindings``), to check the app's
against: device attributes, and a compiled kernel's registers and occupancy.

The app reads its device facts from the driver API through ctypes (``explorer.devices.cuda_driver``,
with cuda.h's attribute numbers written out) and computes occupancy itself; the acceptance
compares both with what NVIDIA's own bindings say, which name each attribute themselves, so a
wrong number in the app's table shows up here as a wrong value. Imported only in the
acceptance's child processes, on a machine with a GPU; ``cuda-bindings`` comes with numba-cuda.
Every call's status is checked: a failure is a ``DriverError`` naming the call and the driver's
error.
"""

from __future__ import annotations

from typing import Any

from explorer.devices.cuda_driver import ATTRIBUTE_CODES

#: the device attributes compared, by the name cuda.h gives them after ``CU_DEVICE_ATTRIBUTE_``: the
#: very list the app's own driver probe reads (``explorer.devices.cuda_driver``)
ATTRIBUTES = tuple(ATTRIBUTE_CODES)


class DriverError(RuntimeError):
    """A driver call failed; ``str()`` names the call and the error."""


def bindings() -> Any:
    """``cuda.bindings.driver``, or ``DriverError`` saying it is not installed."""
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6 named it so
        except ImportError as exc:
            raise DriverError(
                "NVIDIA's cuda-bindings (cuda-python) is not installed: the driver cannot be asked directly"
            ) from exc
    return driver


def _checked(cu: Any, call: str, answer: Any) -> Any:
    """The value of a cuda-bindings call (it returns ``(error, value...)``), or ``DriverError``."""
    err, *values = answer if isinstance(answer, tuple) else (answer,)
    if int(err) != 0:
        name = getattr(err, "name", str(int(err)))
        raise DriverError(f"{call} failed: {name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def device_attributes(index: int) -> dict[str, int | None]:
    """Every attribute of ``ATTRIBUTES`` for CUDA device ``index`` (None where this driver lacks it)."""
    cu = bindings()
    _checked(cu, "cuInit", cu.cuInit(0))
    device = _checked(cu, "cuDeviceGet", cu.cuDeviceGet(index))
    out: dict[str, int | None] = {}
    for name in ATTRIBUTES:
        attr = getattr(cu.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", None)
        if attr is None:
            out[name] = None
            continue
        try:
            out[name] = int(
                _checked(cu, f"cuDeviceGetAttribute({name})", cu.cuDeviceGetAttribute(attr, device))
            )
        except DriverError:
            out[name] = None
    return out


class KernelHandle:
    """One compiled numba kernel as the driver sees it: its registers, and its occupancy for a
    block size and dynamic shared memory, from ``cuOccupancyMaxActiveBlocksPerMultiprocessor``.

    ``overload`` is the numba kernel object (a dispatcher's overload); its driver function is taken
    from numba (numba-cuda hands out a context-independent ``CUkernel``, which is turned into the
    current context's ``CUfunction`` here, or numba's own ctypes handle)."""

    def __init__(self, overload: Any) -> None:
        cu = self._cu = bindings()
        cufunc = overload._codelibrary.get_cufunc()  # numba keeps no public name for the handle
        handle = cufunc.handle
        if isinstance(handle, getattr(cu, "CUkernel", ())):
            handle = _checked(cu, "cuKernelGetFunction", cu.cuKernelGetFunction(handle))
        elif not isinstance(handle, cu.CUfunction):  # numba's ctypes binding: a c_void_p
            handle = cu.CUfunction(int(getattr(handle, "value", handle) or 0))
        self.function = handle
        attr = cu.CUfunction_attribute
        self.regs = self._attribute(attr.CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS")
        self.static_smem = self._attribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES")
        self.max_threads = self._attribute(
            attr.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK"
        )

    def _attribute(self, attr: Any, name: str) -> int:
        cu = self._cu
        return int(_checked(cu, f"cuFuncGetAttribute({name})", cu.cuFuncGetAttribute(attr, self.function)))

    def allow_dynamic_smem(self, nbytes: int) -> None:
        """Opt the kernel in to ``nbytes`` of dynamic shared memory (needed past 48 KiB)."""
        cu = self._cu
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _checked(
            cu,
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            cu.cuFuncSetAttribute(self.function, attr, nbytes),
        )

    def active_blocks(self, threads: int, dynamic_smem: int) -> int:
        cu = self._cu
        answer = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(self.function, threads, dynamic_smem)
        return int(_checked(cu, "cuOccupancyMaxActiveBlocksPerMultiprocessor", answer))
