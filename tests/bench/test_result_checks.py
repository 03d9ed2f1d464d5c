"""Every product a benchmark times is checked afterwards: sampled entries against float64, so a
fast wrong kernel (on a GPU: a missed tile, a stale buffer) is an error row, never a figure."""

from __future__ import annotations

import pytest
import torch

from explorer.bench.execute import PointError
from explorer.bench.wl_torch import PRODUCT_TOLERANCE, check_product


def _operands(n: int = 96):
    gen = torch.Generator().manual_seed(n)
    return torch.rand(n, n, generator=gen), torch.rand(n, n, generator=gen)


def test_a_right_float32_product_passes_with_room_to_spare():
    a, b = _operands()
    assert check_product(a, b, a @ b, "the matmul") < PRODUCT_TOLERANCE / 100


@pytest.mark.parametrize("damage", ["scaled", "nan", "stale"])
def test_a_wrong_product_is_an_error_naming_how_far_off(damage):
    a, b = _operands()
    c = a @ b
    if damage == "scaled":
        c *= 1.01  # every entry 1% off: far beyond float32's rounding
    elif damage == "nan":
        c[:, :] = float("nan")
    else:
        c = torch.zeros_like(c)  # a kernel that never ran
    with pytest.raises(PointError, match="the matmul gave a wrong result"):
        check_product(a, b, c, "the matmul")
