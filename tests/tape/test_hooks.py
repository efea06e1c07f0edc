"""Variable.register_hook, retain_grad and clone against torch, in backward, in grad and
under create_graph (higher-order gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg

torch = pytest.importorskip("torch")


def _both(values):
    return (pg.Variable(np.array(values, dtype=np.float64)),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


def _np(v):
    if isinstance(v, torch.Tensor):
        return v.detach().numpy()
    return np.asarray(v.array if isinstance(v, pg.Variable) else v)


def test_leaf_hook_sees_this_passes_total_and_replaces_it():
    (x, tx) = _both([1.0, -2.0, 3.0])
    seen, tseen = [], []
    x.register_hook(lambda g: seen.append(g.array.copy()) or g * 2)
    tx.register_hook(lambda g: tseen.append(g.clone()) or g * 2)
    for v, _s in ((x, seen), (tx, tseen)):
        (v * 2 + v * v).sum().backward()
        (v * 5).sum().backward()
    np.testing.assert_allclose(x.grad, _np(tx.grad), rtol=1e-12)
    np.testing.assert_allclose(np.stack(seen), np.stack([_np(t) for t in tseen]))


def test_nonleaf_hooks_in_order_and_retain_grad_last():
    (x, tx) = _both([0.5, 1.5])
    out = []
    for v in (x, tx):
        h = v.tanh() if isinstance(v, pg.Variable) else v.tanh()
        h.retain_grad()  # registered first, stored after the other hooks all the same
        h.register_hook(lambda g: g + 1)
        h.register_hook(lambda g: g * 3)
        (h * h).sum().backward(retain_graph=True)
        (h * h).sum().backward()
        out.append((_np(h.grad), _np(v.grad)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_hooks_in_grad_and_on_a_target_that_is_not_a_leaf():
    (x, tx) = _both([2.0, 3.0])
    x.register_hook(lambda g: g * 2)
    tx.register_hook(lambda g: g * 2)
    np.testing.assert_allclose(pg.grad((x * x).sum(), x)[0].array,
                               _np(torch.autograd.grad((tx * tx).sum(), tx)[0]))
    (a, ta) = _both([1.0, 4.0])
    b, tb = a * 2, ta * 2
    b.register_hook(lambda g: g * 5)
    tb.register_hook(lambda g: g * 5)
    np.testing.assert_allclose(pg.grad((b * b).sum(), b)[0].array,
                               _np(torch.autograd.grad((tb * tb).sum(), tb)[0]))
    c, tc = a * 3, ta * 3
    c.retain_grad()
    tc.retain_grad()
    pg.grad((c * c).sum(), a)
    torch.autograd.grad((tc * tc).sum(), ta)
    np.testing.assert_allclose(c.grad, _np(tc.grad))


@pytest.mark.parametrize("leaf", [True, False])
def test_hooks_under_create_graph_give_higher_order_gradients(leaf):
    (x, tx) = _both([0.3, -0.7])
    results = []
    for v, grad in ((x, pg.grad), (tx, torch.autograd.grad)):
        h = v if leaf else v.sin()
        # A hook that depends on the gradient nonlinearly: its own derivative matters.
        h.register_hook(lambda g: g * g)
        y = (h * h * h).sum()
        (g1,) = grad(y, v, create_graph=True)
        (g2,) = grad(g1.sum(), v, create_graph=True)
        (g3,) = grad(g2.sum(), v)
        results.append([_np(g) for g in (g1, g2, g3)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_retain_grad_under_create_graph_is_differentiable():
    x = pg.Variable(np.array([1.0, 2.0]))
    h = x * x
    h.retain_grad()
    (h * h).sum().backward(create_graph=True)
    assert h.grad_var.creator is not None  # 2h, recorded
    (gx,) = pg.grad(h.grad_var.sum(), x)
    np.testing.assert_allclose(gx.array, 4 * x.array)  # d(2 x^2)/dx


def test_handle_remove_and_errors():
    x = pg.Variable(np.ones(2))
    h1 = x.register_hook(lambda g: g * 100)
    h2 = x.register_hook(lambda g: g + 1)
    h1.remove()
    h1.remove()
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 3.0])
    h2.remove()
    x.cleargrad()
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad, [2.0, 2.0])
    with pytest.raises(pg.GradientError, match="requires_grad=False"):
        pg.Variable(np.ones(2), requires_grad=False).register_hook(lambda g: g)
    with pytest.raises(pg.GradientError, match="requires_grad=False"):
        pg.Variable(np.ones(2), requires_grad=False).retain_grad()
    with pytest.raises(TypeError, match="callable"):
        x.register_hook(3)
    x.register_hook(lambda g: np.ones(3))
    with pytest.raises(pg.ShapeError, match="register_hook"):
        (x * 2).sum().backward()


def test_leaf_hook_and_post_accumulate_hook_together():
    w = pg.Variable(np.ones(2))
    w.register_hook(lambda g: g * 10)
    seen = []
    w.register_post_accumulate_grad_hook(lambda v: seen.append(v.grad.copy()))
    ((w * 2).sum() + (w * 3).sum()).backward()
    np.testing.assert_allclose(seen[0], [50.0, 50.0])
    np.testing.assert_allclose(w.grad, [50.0, 50.0])


def test_retain_grad_on_a_leaf_and_retains_grad():
    x = pg.Variable(np.ones(2))
    x.retain_grad()
    assert not x.retains_grad
    h = x * 2
    assert not h.retains_grad
    h.retain_grad()
    h.retain_grad()
    assert h.retains_grad
    (h * 1.0).sum().backward()
    np.testing.assert_allclose(h.grad, [1.0, 1.0])


def test_clone_and_requires_grad_():
    x = pg.Variable(np.array([1.0, 2.0]))
    c = x.clone()
    assert c.array is not x.array and np.array_equal(c.array, x.array)
    (gx,) = pg.grad((c * c).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.array, [2.0, 4.0])
    (ggx,) = pg.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.array, [2.0, 2.0])
    k = pg.Variable(np.array([1, 2])).clone()
    assert k.dtype == np.int64 and not k.requires_grad
    v = pg.Variable(np.ones(2), requires_grad=False)
    assert v.requires_grad_() is v and v.requires_grad
