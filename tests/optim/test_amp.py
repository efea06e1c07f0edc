"""pg.amp: autocast's dtypes per op, gradients of float32 parameters, GradScaler against
torch.amp.GradScaler."""

import numpy as np
import pytest

import portagrad as pg


def test_autocast_dtypes_and_master_gradients():
    w = pg.nn.Parameter(np.ones((4, 3), np.float32))
    k = pg.nn.Parameter(np.ones((2, 1, 3, 3), np.float32))
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    with pg.amp.autocast("cuda", dtype="float16"):
        assert pg.amp.is_autocast_enabled() and pg.amp.get_autocast_dtype() == "float16"
        y = pg.ops.matmul(x, w)
        z = pg.ops.linear(x, pg.ops.matrix_transpose(w))
        c = pg.ops.conv(np.ones((1, 1, 5, 5), np.float32), k)
        s, ls = pg.ops.softmax(y), pg.ops.log_softmax(y)
        loss = pg.ops.softmax_cross_entropy(z, np.array([0, 1]))
        with pg.amp.autocast("cuda", enabled=False):
            plain = pg.ops.matmul(x, w)
    assert not pg.amp.is_autocast_enabled()
    assert [a.dtype for a in (y, z, c)] == [np.float16] * 3
    assert [a.dtype for a in (s, ls, loss, plain)] == [np.float32] * 4
    (loss + c.sum().astype(np.float32) * 0.01).backward()
    assert w.grad.dtype == np.float32 and k.grad.dtype == np.float32
    # The float16 product is the float32 one rounded.
    np.testing.assert_allclose(y.array, x @ np.ones((4, 3), np.float32), rtol=1e-3)
    assert pg.ops.matmul(x, w).dtype == np.float32


def test_autocast_leaves_float64_alone_and_decorates():
    x = np.ones((2, 2))

    @pg.amp.autocast("cuda", dtype="float16")
    def f(a):
        return pg.ops.matmul(a, a)

    assert f(x).dtype == np.float64
    assert f(x.astype(np.float32)).dtype == np.float16


def test_bfloat16_on_torch_and_its_absence_in_numpy():
    torch = pytest.importorskip("torch")
    a = torch.ones(2, 3)
    with pg.amp.autocast("cpu"):  # torch's CPU default: bfloat16
        assert pg.ops.matmul(a, a.T).dtype == torch.bfloat16
        with pytest.raises(pg.PortagradError, match="no bfloat16"):
            pg.ops.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        pg.amp.autocast(dtype="float64")


def _torch_scaler_run(torch, grads_seq, **kw):
    p = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    s = torch.amp.GradScaler("cpu", **kw)
    out = []
    for g in grads_seq:
        opt.zero_grad()
        s.scale(torch.ones(()))  # creates the scale tensor
        p.grad = torch.tensor(g, dtype=torch.float32) * s.get_scale()
        s.step(opt)
        s.update()
        out.append((s.get_scale(), p.detach().numpy().copy()))
    return out, s.state_dict()


def test_grad_scaler_matches_torch():
    torch = pytest.importorskip("torch")
    seq = [[1.0, 2.0, 3.0], [np.inf, 0.0, 0.0], [0.5, 0.5, 0.5], [1.0, np.nan, 1.0],
           [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 0.0, -1.0]]
    kw = {"init_scale": 256.0, "growth_interval": 2, "growth_factor": 4.0,
          "backoff_factor": 0.25}
    ref, ref_state = _torch_scaler_run(torch, seq, **kw)
    p = pg.nn.Parameter(np.zeros(3, np.float32))
    opt = pg.optim.SGD([p], lr=0.1)
    s = pg.amp.GradScaler(**kw)
    for g, (scale, value) in zip(seq, ref):
        opt.zero_grad()
        p.grad = np.array(g, np.float32) * s.get_scale()
        s.step(opt)
        s.update()
        assert s.get_scale() == scale
        np.testing.assert_allclose(p.array, value, rtol=1e-6)
    assert s.state_dict() == {k: (float(v) if k == "scale" else v) for k, v in
                              ref_state.items()}
    s2 = pg.amp.GradScaler()
    s2.load_state_dict(s.state_dict())
    assert s2.state_dict() == s.state_dict()


def test_grad_scaler_unscale_then_clip_and_errors():
    p = pg.nn.Parameter(np.zeros(2, np.float32))
    opt = pg.optim.SGD([p], lr=1.0)
    s = pg.amp.GradScaler(init_scale=4.0)
    s.scale((p * np.array([3.0, 4.0], np.float32)).sum()).backward()
    s.unscale_(opt)
    np.testing.assert_allclose(p.grad, [3.0, 4.0])
    with pytest.raises(ValueError, match="already"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(ValueError, match="twice"):
        s.step(opt)
    s.update()
    np.testing.assert_allclose(p.array, [-3.0, -4.0])
    off = pg.amp.GradScaler(enabled=False)
    loss = (p * p).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}


def test_float16_training_with_adam_learns_like_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    t = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    results = {}
    for low in (False, True):
        pg.random.seed(0)
        model = pg.nn.Sequential(pg.nn.Linear(8, 16), pg.nn.ReLU(), pg.nn.Linear(16, 2))
        opt = pg.optim.Adam(model.parameters(), lr=1e-2)
        scaler = pg.amp.GradScaler(init_scale=2.0**12, enabled=low)
        for _ in range(40):
            opt.zero_grad()
            with pg.amp.autocast("cuda", dtype="float16", enabled=low):
                loss = pg.ops.softmax_cross_entropy(model(x), t)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        assert all(p.dtype == np.float32 for p in model.parameters())
        results[low] = float(loss.array)
    assert np.isfinite(results[True]) and results[True] < 0.2
    assert abs(results[True] - results[False]) < 0.02
