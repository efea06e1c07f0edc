"""NumPy's channels-last convolution kernels against the pure-standard default."""

from __future__ import annotations

import itertools

import array_api_compat.numpy as xp
import numpy as np
import pytest

from portagrad.xp import _conv_channels_last as cl
from portagrad.xp import pure_standard
from portagrad.xp._conv import conv_forward, conv_input_grad, conv_weight_grad


def _kernels(x, w, b, gy, args):
    return (conv_forward(xp, x, w, *args, bias=b), conv_input_grad(xp, gy, w, *args,
                                                                   x.shape[2:]),
            conv_weight_grad(xp, x, gy, *args, w.shape[2:]))


@pytest.mark.parametrize("chunk", [None, 1])  # one chunk of columns, or one per sample
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_last_kernels_equal_the_pure_standard_path(chunk, dtype, monkeypatch):
    if chunk is not None:
        monkeypatch.setattr(cl, "CHUNK_BYTES", chunk)
    calls = []
    forward = cl._forward
    monkeypatch.setattr(cl, "_forward", lambda *a: calls.append(1) or forward(*a))
    rng = np.random.default_rng(0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for nd, k, s, d in itertools.product((1, 2, 3), (2, 3), (1, 2), (1, 2)):
        if nd == 3 and d == 2:
            continue
        size = 6 if nd < 3 else 4
        x = rng.standard_normal((3, 16) + (size,) * nd).astype(dtype)
        w = rng.standard_normal((17, 16) + (k,) * nd).astype(dtype)
        b = rng.standard_normal(17).astype(dtype)
        # Asymmetric pads; at stride 2 the high one reaches past the last window.
        args = ((s,) * nd, ((1, s),) * nd, (d,) * nd, 1)
        y = conv_forward(xp, x, w, *args)
        gy = rng.standard_normal(y.shape).astype(dtype)
        fast = _kernels(x, w, b, gy, args)
        with pure_standard():
            pure = _kernels(x, w, b, gy, args)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=tol, atol=tol * np.abs(p).max())
    assert calls  # the channels-last forward ran, not only the paths it hands over to


def test_channels_last_kernels_on_views_and_small_channels():
    rng = np.random.default_rng(1)
    # Channels-last memory and a strided batch: the samples are not contiguous.
    x = rng.standard_normal((4, 10, 10, 20)).transpose(0, 3, 1, 2)[::2]
    w = rng.standard_normal((16, 20, 3, 3))
    b = rng.standard_normal(16)
    args = ((1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    gy = rng.standard_normal((2, 16, 8, 8))
    fast = _kernels(x, w, b, gy, args)
    with pure_standard():
        pure = _kernels(x, w, b, gy, args)
    for f, p in zip(fast, pure):
        np.testing.assert_allclose(f, p, rtol=1e-12, atol=1e-12)
    # Three input channels (an image) and 1x1 kernels take the channels-first paths.
    assert not cl._suits(x, w, 1, (3, 16), (3, 3))
    assert not cl._suits(x, w, 1, (20, 16), (1, 1))
    assert cl._suits(x, w, 1, (20, 16), (3, 3), b)
    assert not cl._suits(x, w, 1, (20, 16), (3, 3), b.astype(np.float32))


def test_scratch_is_kept_and_outputs_are_fresh():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    args = ((1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    y1 = conv_forward(xp, x, w, *args)
    y2 = conv_forward(xp, 2 * x, w, *args)
    assert not np.may_share_memory(y1, y2)
    np.testing.assert_allclose(y2, 2 * y1, rtol=1e-5, atol=1e-5)
