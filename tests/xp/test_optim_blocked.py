"""The blocked Adam step of NumPy's fast path and its compiled float32 pass: the default's
result bit for bit, on one thread and on several, with AMSGrad's maximum and AdamW's
decay."""

from __future__ import annotations

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _optim, _threads, native_in_use, pure_standard, set_native


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("decay", [1.0, 0.99])
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_blocked_adam_is_the_default_bit_for_bit(monkeypatch, dtype, threads, amsgrad, decay,
                                                 compiled):
    if compiled and not native_in_use():
        pytest.skip("the compiled kernels are not built here")
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    was = set_native(compiled)
    monkeypatch.setattr(_optim, "ADAM_BLOCK", 1000)  # several blocks and a ragged one
    rng = np.random.default_rng(0)
    n = 10_503
    arrays = [rng.standard_normal(n).astype(dtype) for _ in range(3)]
    arrays.append(np.abs(rng.standard_normal(n)).astype(dtype))
    arrays.append(np.abs(rng.standard_normal(n)).astype(dtype) if amsgrad else None)
    args = (0.9, 0.999, 1e-8, 1e-3, decay)
    fast = [None if a is None else a.copy() for a in arrays]
    calls = []
    for name in ("_adam_blocked", "_adam_native"):
        original = getattr(_optim, name)
        monkeypatch.setattr(_optim, name,
                            lambda *a, _o=original, _n=name: calls.append(_n) or _o(*a))
    p, g, m, v, vh = fast
    try:
        got = _optim.adam_update(npx, p.reshape(-1, 3501), g.reshape(-1, 3501),
                                 m.reshape(-1, 3501), v.reshape(-1, 3501),
                                 None if vh is None else vh.reshape(-1, 3501), *args)
    finally:
        set_native(was)
    # float32 Adam (not AMSGrad) takes the compiled pass; the rest the blocked step
    native = compiled and dtype == np.float32 and not amsgrad
    assert calls == ["_adam_native" if native else "_adam_blocked"]
    pure = [None if a is None else a.copy() for a in arrays]
    with pure_standard():
        want = _optim.adam_update(npx, pure[0], pure[1], pure[2], pure[3], pure[4], *args)
    for a, b in zip(got, want):
        if b is None:
            assert a is None
        else:
            np.testing.assert_array_equal(a.reshape(-1), b)
