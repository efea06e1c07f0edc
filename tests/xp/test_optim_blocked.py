"""The blocked Adam step of NumPy's fast path: the default's result bit for bit, on one
thread and on several, with AMSGrad's maximum and AdamW's decay."""

from __future__ import annotations

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _optim, _threads, pure_standard


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("decay", [1.0, 0.99])
def test_blocked_adam_is_the_default_bit_for_bit(monkeypatch, dtype, threads, amsgrad, decay):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    monkeypatch.setattr(_optim, "ADAM_BLOCK", 1000)  # several blocks and a ragged one
    rng = np.random.default_rng(0)
    n = 10_503
    arrays = [rng.standard_normal(n).astype(dtype) for _ in range(3)]
    arrays.append(np.abs(rng.standard_normal(n)).astype(dtype))
    arrays.append(np.abs(rng.standard_normal(n)).astype(dtype) if amsgrad else None)
    args = (0.9, 0.999, 1e-8, 1e-3, decay)
    fast = [None if a is None else a.copy() for a in arrays]
    calls = []
    blocked = _optim._adam_blocked
    monkeypatch.setattr(_optim, "_adam_blocked", lambda *a: calls.append(1) or blocked(*a))
    p, g, m, v, vh = fast
    got = _optim.adam_update(npx, p.reshape(-1, 3501), g.reshape(-1, 3501),
                             m.reshape(-1, 3501), v.reshape(-1, 3501),
                             None if vh is None else vh.reshape(-1, 3501), *args)
    assert calls  # the blocked step ran
    pure = [None if a is None else a.copy() for a in arrays]
    with pure_standard():
        want = _optim.adam_update(npx, pure[0], pure[1], pure[2], pure[3], pure[4], *args)
    for a, b in zip(got, want):
        if b is None:
            assert a is None
        else:
            np.testing.assert_array_equal(a.reshape(-1), b)
