"""Outlier inputs (benchmarks/inputs.py): every one carries a full-scale value of each sign."""

from __future__ import annotations

import pytest
import torch

from benchmarks.inputs import OUTLIER_SCALE, amplify_outliers


@pytest.mark.parametrize("seed", range(20))
def test_a_mixed_sign_tensor_gets_a_full_scale_outlier_of_each_sign(seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((8, 300), generator=gen) * 2.0  # 2400 elements: a fraction of 1e-3 picks 2
    y = amplify_outliers(x, gen)
    top = 0.5 * OUTLIER_SCALE[1]  # a pick is pushed to at least 0.5 in magnitude, then scaled
    assert float(y.max()) >= top and float(y.min()) <= -top


@pytest.mark.parametrize("seed", range(20))
def test_a_tensor_with_one_pick_gets_a_full_scale_positive_outlier(seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((3, 17), generator=gen) * 2.0  # 51 elements: one pick
    assert float(amplify_outliers(x, gen).max()) >= 0.5 * OUTLIER_SCALE[1]


def test_a_one_signed_tensor_keeps_its_sign_and_the_rest_is_untouched() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.rand((64, 64), generator=gen) + 0.01
    y = amplify_outliers(x, gen)
    assert float(y.min()) > 0 and float(y.max()) >= 0.5 * OUTLIER_SCALE[1]
    changed = (y != x).sum().item()
    assert 1 <= changed <= max(1, int(x.numel() * 1e-3))


def test_the_same_generator_state_gives_the_same_outliers() -> None:
    x = torch.randn((8, 8), generator=torch.Generator().manual_seed(1))
    a = amplify_outliers(x, torch.Generator().manual_seed(5))
    b = amplify_outliers(x, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
