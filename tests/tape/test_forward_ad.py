"""Forward mode: dual levels, tangent rules, nesting with itself and with reverse mode."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
import portagrad.autograd.forward_ad as fwAD
from portagrad.tape import primitive

F = pg.ops


def _tangent_of(f, x, t):
    with fwAD.dual_level():
        return fwAD.unpack_dual(f(fwAD.make_dual(x, t))).tangent


def _fd(f, x, t, eps=1e-6):
    def val(z):
        return np.asarray(f(pg.Variable(z, requires_grad=False)).array)

    return (val(x + eps * t) - val(x - eps * t)) / (2 * eps)


@pytest.mark.parametrize("f", [
    lambda z: F.sin(z) * F.exp(z / 3.0),
    lambda z: F.softmax(z, axis=-1),
    lambda z: F.sum(F.reshape(z, (2, 3)) ** 2, axis=0),
    lambda z: F.concat([z, F.flip(z, axis=0)]) @ F.ones((12,), dtype=z.dtype),
    lambda z: F.cumulative_prod(z, axis=0),
    lambda z: F.linalg.vector_norm(z),
], ids=["elementwise", "softmax", "reshape-sum", "concat-flip-matmul", "cumprod", "norm"])
def test_tangent_matches_central_differences(f, rng):
    x = rng.uniform(0.5, 1.5, 6)
    t = rng.standard_normal(6)
    got = _tangent_of(f, x, t)
    np.testing.assert_allclose(got.array, _fd(f, x, t), rtol=1e-6, atol=1e-8)


def test_network_ops_match_reverse_mode(rng):
    """conv, batch norm, max pooling, ReLU, linear and the fused softmax cross entropy:
    ``<u, J t>`` equals ``<J^T u, t>``."""
    x = rng.standard_normal((4, 2, 8, 8))
    w = rng.standard_normal((3, 2, 3, 3)) * 0.3
    lw = rng.standard_normal((5, 27)) * 0.2
    labels = np.array([0, 4, 2, 1])

    def net(x, w, lw):
        h = F.relu(F.batch_norm(F.conv2d(x, w), np.full(3, 1.5), np.full(3, 0.1), train=True))
        h = F.reshape(F.max_pool2d(h, 2), (4, -1))
        return F.softmax_cross_entropy(F.linear(h, lw), labels)

    ts = [rng.standard_normal(a.shape) for a in (x, w, lw)]
    with fwAD.dual_level():
        args = [fwAD.make_dual(a, t) for a, t in zip((x, w, lw), ts)]
        jt = float(fwAD.unpack_dual(net(*args)).tangent.array)
    vs = [pg.Variable(a) for a in (x, w, lw)]
    gs = pg.grad(net(*vs), vs)
    want = sum(float(np.sum(g.array * t)) for g, t in zip(gs, ts))
    assert jt == pytest.approx(want, rel=1e-9)


def test_nested_levels_give_second_derivatives():
    x = np.array([0.3, 1.1])
    with fwAD.dual_level():
        xo = fwAD.make_dual(x, np.ones(2))
        with fwAD.dual_level():
            xi = fwAD.make_dual(xo, np.ones(2))
            inner = fwAD.unpack_dual(F.sin(xi)).tangent  # cos x, carrying the outer level
        second = fwAD.unpack_dual(inner).tangent  # -sin x
    np.testing.assert_allclose(inner.array, np.cos(x))
    np.testing.assert_allclose(second.array, -np.sin(x))


def test_forward_over_reverse_is_a_hessian_vector_product(rng):
    """Tangents ride through backward, including the fused paths that backward takes on raw
    arrays when nothing is recorded (linear, ReLU, batch norm, LSTM, cross entropy)."""
    x = rng.standard_normal((6, 4))
    seq = rng.standard_normal((5, 3, 4))
    labels = np.array([0, 2, 1, 1, 0, 2])
    lstm_w = [rng.standard_normal(s) * 0.5 for s in ((12, 4), (12, 3), (12,), (12,))]
    wh = rng.standard_normal((3, 4)) * 0.5
    c0 = rng.standard_normal((6, 3))

    def f(w):
        h = F.relu(F.batch_norm(F.linear(x, w), np.full(3, 1.5), np.full(3, 0.1), train=True))
        ys, _, _ = F.n_step_lstm(seq + F.reshape(F.sum(w, axis=0), (1, 1, 4)),
                                 np.zeros((3, 3)), np.zeros((3, 3)), *lstm_w)
        c, hc = F.lstm(c0, F.concat([h, h * 0.5, h, h * 2.0], axis=1))
        return (F.softmax_cross_entropy(h, labels) + F.sum(F.exp(ys)) * 0.1
                + F.sum(c * hc) + F.sum(F.tanh(c)))

    v = rng.standard_normal(wh.shape)
    _, ref = pg.vhp(f, wh, v)
    w = pg.Variable(wh)
    with fwAD.dual_level():
        (g,) = pg.grad(f(fwAD.make_dual(w, v)), [w])
        hv = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(hv.array, ref.array, rtol=1e-9, atol=1e-12)
    _, hv2 = pg.hvp(f, wh, v)
    np.testing.assert_allclose(hv2.array, ref.array, rtol=1e-9, atol=1e-12)


def test_saved_outputs_recreated_for_backward_keep_their_tangents():
    # exp saves its output; nothing else holds it, so backward rebuilds it from the array.
    x = np.array([0.5, -1.0])
    v = np.array([1.0, 2.0])
    w = pg.Variable(x)
    with fwAD.dual_level():
        loss = F.sum(F.exp(fwAD.make_dual(w, v)))
        (g,) = pg.grad(loss, [w])
        np.testing.assert_allclose(fwAD.unpack_dual(g).tangent.array, np.exp(x) * v)


def test_reverse_over_forward():
    x = pg.Variable(np.array([0.7, 1.3]))
    with fwAD.dual_level():
        t = fwAD.unpack_dual(F.sum(F.sin(fwAD.make_dual(x, np.ones(2))))).tangent  # sum cos
    (g,) = pg.grad(t, [x])
    np.testing.assert_allclose(g.array, -np.sin(x.array))


def test_tangents_flow_without_recording():
    with pg.no_grad(), fwAD.dual_level():
        y = F.tanh(fwAD.make_dual(np.array([0.2]), np.array([1.0])))
        p, t = fwAD.unpack_dual(y)
    assert not p.requires_grad and p.creator is None
    np.testing.assert_allclose(t.array, 1 - np.tanh(0.2) ** 2)


def test_levels_scope_their_tangents():
    with fwAD.dual_level():
        y = F.exp(fwAD.make_dual(np.array([1.0]), np.array([1.0])))
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None  # the level is closed
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None  # a new level sees none of it
        assert fwAD.unpack_dual(F.exp(y)).tangent is None


def test_primal_graph_is_kept():
    x = pg.Variable(np.array([2.0]))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, np.array([1.0]))
        p, _ = fwAD.unpack_dual(d * d)
    (g,) = pg.grad(p, [x])
    assert float(g.array[0]) == 4.0


def test_rule_order_explicit_linear_and_fallback(rng):
    calls = []

    @primitive(saves="inputs")
    def cube(xp, x):
        return x * x * x

    @cube.defvjp
    def _(ctx, gy):
        (x,) = ctx.inputs
        return (gy * 3.0 * x * x,)

    x = rng.standard_normal(3)
    t = rng.standard_normal(3)
    # No jvp rule: the double-vjp identity.
    np.testing.assert_allclose(_tangent_of(cube, x, t).array, 3 * x * x * t)

    @cube.defjvp
    def _(ctx, tx):
        calls.append(1)
        (x,) = ctx.inputs
        return 3.0 * x * x * tx

    np.testing.assert_allclose(_tangent_of(cube, x, t).array, 3 * x * x * t)
    assert calls == [1]


def test_complex_ops_by_the_double_vjp_identity(rng):
    x = rng.standard_normal(8)
    t = rng.standard_normal(8)

    def f(z):
        return F.real(F.fft.ifft(F.fft.fft(z) * F.exp(1j * F.astype(z, np.complex128))))

    np.testing.assert_allclose(_tangent_of(f, x, t).array, _fd(f, x, t), rtol=1e-6,
                               atol=1e-8)


def test_errors_name_the_function():
    x = np.ones(3)
    with pytest.raises(pg.GradientError, match=r"make_dual: expected to be called inside a "
                                               r"dual_level\(\) block"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(pg.ShapeError, match=r"make_dual\(tangent\): expected shape \(3,\)"):
            fwAD.make_dual(x, np.ones(2))
        with pytest.raises(pg.DTypeError, match=r"make_dual\(tangent\): expected dtype"):
            fwAD.make_dual(x, np.ones(3, dtype=np.float32))
        with pytest.raises(pg.DTypeError, match=r"make_dual\(tensor\): expected a "
                                                r"floating-point array"):
            fwAD.make_dual(np.arange(3), np.ones(3))
        with pytest.raises(TypeError, match=r"make_dual\(tangent\): expected an array"):
            fwAD.make_dual(x, [1.0, 2.0, 3.0])
        with pytest.raises(pg.GradientError, match=r"unpack_dual\(level\)"):
            fwAD.unpack_dual(pg.Variable(x), level=10 ** 9)


def test_mixed_namespaces_are_refused():
    strict = pytest.importorskip("array_api_strict")
    with fwAD.dual_level(), pytest.raises(pg.NamespaceMismatchError, match="make_dual"):
        fwAD.make_dual(np.ones(2), strict.ones(2, dtype=strict.float64))


def test_jvp_is_one_forward_pass(monkeypatch):
    """pg.jvp runs no backward pass."""
    from portagrad.tape import _engine

    def no_backward(*a, **k):
        raise AssertionError("backward ran")

    monkeypatch.setattr(_engine, "_run", no_backward)
    out, t = pg.jvp(lambda z: F.tanh(z) * 2.0, np.array([0.1, 0.2]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(t.array, 2 * (1 - np.tanh([0.1, 0.2]) ** 2))
    assert getattr(out, "_tangents", None) is None


def test_jacobian_forward_mode_matches_reverse_mode(rng):
    w = rng.standard_normal((4, 3))

    def f(x, y):
        return F.tanh(w @ x) * F.sum(y), F.exp(y[0]) * x[:2]

    x, y = rng.standard_normal(3), rng.standard_normal((2, 2))
    fwd = pg.jacobian(f, (x, y), strategy="forward-mode")
    rev = pg.jacobian(f, (x, y))
    for i in range(2):
        for j in range(2):
            assert fwd[i][j].shape == rev[i][j].shape
            np.testing.assert_allclose(fwd[i][j].array, rev[i][j].array, rtol=1e-12)
    single = pg.jacobian(lambda z: F.sin(z), x, strategy="forward-mode")
    np.testing.assert_allclose(single.array, np.diag(np.cos(x)))
    with pytest.raises(ValueError, match="jacobian\\(strategy\\)"):
        pg.jacobian(f, (x, y), strategy="sideways")
    with pytest.raises(pg.GradientError, match="strict"):
        pg.jacobian(lambda a, b: a * 2.0, (x, x), strict=True, strategy="forward-mode")


def test_nested_levels_through_the_double_vjp_rule(rng):
    """A primitive without a tangent rule, differentiated twice in forward mode."""

    @primitive(saves="inputs")
    def quartic(xp, x):
        return x ** 4

    @quartic.defvjp
    def _(ctx, gy):
        (x,) = ctx.inputs
        return (gy * 4.0 * x ** 3,)

    x = rng.uniform(0.5, 1.5, 3)
    with pg.no_grad(), fwAD.dual_level():
        xo = fwAD.make_dual(x, np.ones(3))
        with fwAD.dual_level():
            inner = fwAD.unpack_dual(quartic(fwAD.make_dual(xo, np.ones(3)))).tangent
        second = fwAD.unpack_dual(inner).tangent
    np.testing.assert_allclose(inner.array, 4 * x ** 3)
    np.testing.assert_allclose(second.array, 12 * x ** 2)


def test_gradcheck_check_jvp_and_modes():
    x = np.array([0.3, -0.8])
    pg.gradcheck.check_jvp(lambda z: F.tanh(z) * z, [x])
    pg.gradcheck.check_grads(lambda z: F.exp(z) * z, [x], order=3, modes=("fwd",))

    @primitive(elementwise=True)
    def bad_tan(xp, z):
        return xp.tan(z)

    @bad_tan.defvjp
    def _(ctx, gy):
        (z,) = ctx.inputs
        return (gy / F.cos(z) ** 2,)

    @bad_tan.defjvp
    def _(ctx, t):
        return t  # missing the 1 / cos^2 factor

    pg.gradcheck.check_backward(bad_tan, [x])  # reverse mode is right
    with pytest.raises(pg.gradcheck.GradientCheckError, match="forward-mode directional"):
        pg.gradcheck.check_jvp(bad_tan, [x])
    with pytest.raises(pg.gradcheck.GradientCheckError, match="forward mode"):
        pg.gradcheck.check_grads(bad_tan, [x], order=1)
    pg.gradcheck.check_grads(bad_tan, [x], order=1, modes=("rev",))
    with pytest.raises(ValueError, match=r"check_grads\(modes\)"):
        pg.gradcheck.check_grads(bad_tan, [x], modes=("sideways",))


def test_nondiff_arguments_record_no_edge(rng):
    from portagrad.ops.nn.activation import _relu_grad

    y = pg.Variable(rng.uniform(-1, 1, 4))
    g = pg.Variable(rng.standard_normal(4), requires_grad=False)
    assert not _relu_grad(g, y).requires_grad  # y is only the mask's source
    gv = pg.Variable(g.array)
    out = _relu_grad(gv, y)
    assert out.requires_grad and out.creator.edges[1] is None
    assert pg.grad(F.sum(out), [y], allow_unused=True) == (None,)


def test_hvp_does_only_the_products_it_needs(monkeypatch, rng):
    """Reverse-over-forward on an MLP runs the products of the R-pass and no gradient of
    the gradient itself: with a, b, c the sizes of the three weight products, a forward
    and backward takes 2a + 3b + 3c multiply-adds, this HVP 3a + 7b + 8c (2.05 times as
    many on the benchmark's MLP), a second backward through the gradient more."""
    from portagrad.ops.nn import connection as C

    macs = [0]
    fwd, vjp_arrays = C._linear.forward, C._linear_vjp_arrays

    def count_fwd(xp, x, w, b=None):
        macs[0] += x.shape[0] * x.shape[1] * w.shape[0]
        return fwd(xp, x, w, b)

    def count_vjp(xp, gy, x, w, nd, want_x, want_w, want_b, *rest):
        macs[0] += gy.shape[0] * gy.shape[1] * w.shape[1] * (int(want_x) + int(want_w))
        return vjp_arrays(xp, gy, x, w, nd, want_x, want_w, want_b, *rest)

    monkeypatch.setattr(C._linear, "forward", count_fwd)
    monkeypatch.setattr(C, "_linear_vjp_arrays", count_vjp)
    x = rng.standard_normal((16, 30))
    labels = np.arange(16) % 5
    ws = [rng.standard_normal(s) * 0.2 for s in ((40, 30), (40, 40), (5, 40))]
    vs = [rng.standard_normal(w.shape) for w in ws]

    def loss(w1, w2, w3):
        h = F.relu(F.linear(F.relu(F.linear(x, w1)), w2))
        return F.softmax_cross_entropy(F.linear(h, w3), labels)

    a, b, c = 16 * 30 * 40, 16 * 40 * 40, 16 * 40 * 5
    params = [pg.Variable(w) for w in ws]
    pg.grad(loss(*params), params)
    assert macs[0] == 2 * a + 3 * b + 3 * c
    macs[0] = 0
    _, hv = pg.hvp(loss, tuple(ws), tuple(vs))
    assert macs[0] == 3 * a + 7 * b + 8 * c
    _, ref = pg.vhp(loss, tuple(ws), tuple(vs))
    for h, r in zip(hv, ref):
        np.testing.assert_allclose(h.array, r.array, rtol=1e-9, atol=1e-12)


def test_products_at_a_kept_point_do_only_the_products_they_need(monkeypatch, rng):
    """At a point whose gradient graph is kept (conjugate gradients, Lanczos), one more
    H v differentiates the gradient with ``grad_outputs=v``: the R-forward and the
    R-backward, 2a + 6b + 6c multiply-adds, 1.66 times a forward and backward on the
    benchmark's MLP; no product of the first layer's input gradient."""
    from portagrad.ops.nn import connection as C
    from portagrad.ops.std.linalg import products as L

    macs = [0]
    linear_vjp, matmul_vjp = C._linear_vjp_arrays, L._matmul_vjp_arrays

    def count_linear(xp, gy, x, w, nd, want_x, want_w, want_b, *rest):
        macs[0] += gy.shape[0] * gy.shape[1] * w.shape[1] * (int(want_x) + int(want_w))
        return linear_vjp(xp, gy, x, w, nd, want_x, want_w, want_b, *rest)

    def count_matmul(xp, g, a, b, want_a, want_b, *rest):
        macs[0] += a.shape[0] * a.shape[1] * b.shape[1] * (int(want_a) + int(want_b))
        return matmul_vjp(xp, g, a, b, want_a, want_b, *rest)

    monkeypatch.setattr(C, "_linear_vjp_arrays", count_linear)
    monkeypatch.setattr(L, "_matmul_vjp_arrays", count_matmul)
    x = rng.standard_normal((16, 30))
    labels = np.arange(16) % 5
    params = [pg.Variable(rng.standard_normal(s) * 0.2) for s in ((40, 30), (40, 40), (5, 40))]
    vs = [rng.standard_normal(p.shape) for p in params]
    h = F.relu(F.linear(F.relu(F.linear(x, params[0])), params[1]))
    kept = pg.grad(F.softmax_cross_entropy(F.linear(h, params[2]), labels), params,
                   create_graph=True)
    a, b, c = 16 * 30 * 40, 16 * 40 * 40, 16 * 40 * 5
    for _ in range(2):
        macs[0] = 0
        hv = pg.grad(kept, params, grad_outputs=vs, retain_graph=True)
        assert macs[0] == 2 * a + 6 * b + 6 * c
    _, ref = pg.hvp(lambda *w: F.softmax_cross_entropy(F.linear(F.relu(F.linear(F.relu(
        F.linear(x, w[0])), w[1])), w[2]), labels), tuple(p.array for p in params), tuple(vs))
    for g, r in zip(hv, ref):
        np.testing.assert_allclose(g.array, r.array, rtol=1e-9, atol=1e-12)


def test_primitive_without_rules_is_named():
    @primitive()
    def opaque(xp, x):
        return x * 2

    with fwAD.dual_level(), pytest.raises(pg.GradientError, match="opaque: no jvp or vjp"):
        opaque(fwAD.make_dual(np.ones(2), np.ones(2)))


def test_repr_shows_the_tangent_of_the_innermost_level():
    with fwAD.dual_level():
        d = fwAD.make_dual(np.array([1.0]), np.array([2.0]))
        assert repr(d) == "Variable(array([1.]), tangent=array([2.]))"
    assert repr(d) == "Variable(array([1.]))"


def test_hessian_forward_over_reverse_matches_reverse_over_reverse(rng):
    w = rng.standard_normal((3, 2))

    def f(x, y):
        return F.sum(F.tanh(w @ x) * F.sum(y ** 3)) + F.sum(F.exp(x)) * y[0, 1]

    x, y = rng.standard_normal(2), rng.standard_normal((2, 2))
    fwd = pg.hessian(f, (x, y), outer_jacobian_strategy="forward-mode")
    rev = pg.hessian(f, (x, y))
    for i in range(2):
        for j in range(2):
            assert fwd[i][j].shape == rev[i][j].shape
            np.testing.assert_allclose(fwd[i][j].array, rev[i][j].array, rtol=1e-12,
                                       atol=1e-14)
    xv = pg.Variable(x)
    h = pg.hessian(lambda z: F.sum(z ** 3), xv, outer_jacobian_strategy="forward-mode",
                   create_graph=True)  # diag(6 z), differentiable in z
    (g,) = pg.grad(F.sum(h), [xv])
    np.testing.assert_allclose(g.array, 6.0 * np.ones(2))
    with pytest.raises(ValueError, match=r"hessian\(outer_jacobian_strategy\)"):
        pg.hessian(f, (x, y), outer_jacobian_strategy="sideways")
    with pytest.raises(pg.GradientError, match="strict"):
        pg.hessian(lambda a, b: F.sum(a ** 2), (x, x), strict=True,
                   outer_jacobian_strategy="forward-mode")
