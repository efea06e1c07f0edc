import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy


def test_shared_subexpression_sums_every_path(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    h = x * x
    y = (h + h * 3 + pg.ops.exp(h)).sum()
    y.backward()
    xh = np.array([1.0, 2.0])
    np.testing.assert_allclose(to_numpy(x.grad), 2 * xh * (4 + np.exp(xh * xh)))


def test_chain_of_100000_ops_backpropagates_without_recursion():
    # Depth is independent of the library; NumPy keeps the test quick.
    x = pg.Variable(np.array([1.0]))
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [1.0])


def test_memory_is_released_after_backward():
    x = pg.Variable(np.ones(1000))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    y = x
    for _ in range(200):
        y = pg.ops.tanh(y * 1.01)
    held = tracemalloc.get_traced_memory()[0] - base
    loss = y.sum()
    del y
    loss.backward()
    del loss
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert held > 200 * 8000  # the graph held one array per tanh output at least
    assert after < 3 * 8000 + 20_000, after  # x.grad and small bookkeeping only


def test_graph_is_freed_unless_retained():
    x = pg.Variable(np.array([1.0, 2.0]))
    y = (pg.ops.exp(x)).sum()
    y.backward()
    with pytest.raises(pg.GradientError, match="retain_graph"):
        y.backward()
    z = (pg.ops.exp(x)).sum()
    z.backward(retain_graph=True)
    z.backward()


def test_grad_through_a_freed_graph_raises():
    # Not a silent None with allow_unused: the freed part may have led to the input.
    x = pg.Variable(np.array([1.0, 2.0]))
    h = pg.ops.exp(x)
    pg.grad(pg.ops.sum(h), [x])
    for allow_unused in (False, True):
        with pytest.raises(pg.GradientError, match="retain_graph"):
            pg.grad(pg.ops.sum(h * 2.0), [x], allow_unused=allow_unused)


def test_intermediate_outputs_are_weakly_held():
    x = pg.Variable(np.ones(3))
    h = pg.ops.exp(x)
    ref = weakref.ref(h)
    y = (h + 2.0).sum()  # add saves nothing
    del h
    gc.collect()
    assert ref() is None  # exp keeps its output array, not the Variable
    y.backward()
    np.testing.assert_allclose(x.grad, np.e * np.ones(3))


def test_grad_returns_without_touching_dot_grad(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    w = pg.Variable(backend.asarray([3.0, 4.0]))
    (gx,) = pg.grad((x * w).sum(), x)
    np.testing.assert_allclose(to_numpy(gx.array), [3.0, 4.0])
    assert x.grad is None and w.grad is None
    assert gx.creator is None


def test_grad_with_respect_to_an_intermediate(backend):
    x = pg.Variable(backend.asarray([1.0, 2.0]))
    h = x * 2
    y = (h * h).sum()
    gh, gx = pg.grad(y, [h, x])
    np.testing.assert_allclose(to_numpy(gh.array), [4.0, 8.0])
    np.testing.assert_allclose(to_numpy(gx.array), [8.0, 16.0])


def test_grad_is_pruned_to_the_paths_that_matter():
    calls = []
    from portagrad.tape import primitive

    @primitive(saves="none", elementwise=True)
    def spy(xp, x):
        return x * 1

    @spy.defvjp
    def _(ctx, gy):
        calls.append(1)
        return (gy,)

    x = pg.Variable(np.ones(2))
    w = pg.Variable(np.ones(2))
    y = (x * 2 + spy(w)).sum()
    pg.grad(y, x)
    assert calls == []


def test_grad_of_an_input_not_in_the_graph_is_an_error():
    x = pg.Variable(np.ones(2))
    z = pg.Variable(np.ones(2))
    y = (x * 2).sum()
    with pytest.raises(pg.GradientError, match="not in their graph"):
        pg.grad(y, z)
    assert pg.grad((x * 2).sum(), [x, z], allow_unused=True)[1] is None


def test_backward_on_non_scalar_needs_a_seed():
    x = pg.Variable(np.ones(3))
    y = x * 2
    with pytest.raises(pg.GradientError, match="seed"):
        y.backward()
    y.backward(grad=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x.grad, [2.0, 4.0, 6.0])


def test_no_grad_and_enable_grad_are_thread_local_and_nest():
    import threading

    x = pg.Variable(np.ones(2))
    seen = {}
    with pg.no_grad():
        assert (x * 2).creator is None
        with pg.enable_grad():
            assert (x * 2).creator is not None

        def other():
            seen["other"] = pg.is_grad_enabled()

        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["other"] is True
    assert pg.is_grad_enabled()


def test_no_grad_as_decorator():
    @pg.no_grad()
    def f(x):
        return x * 2

    assert f(pg.Variable(np.ones(2))).creator is None


def test_higher_order_x_cubed():
    x = pg.Variable(np.array(2.0))
    (g1,) = pg.grad(x**3, x, create_graph=True)
    (g2,) = pg.grad(g1, x, create_graph=True)
    (g3,) = pg.grad(g2, x)
    assert (float(g1), float(g2), float(g3)) == (12.0, 12.0, 6.0)


def test_backward_create_graph_gives_differentiable_grads():
    x = pg.Variable(np.array([1.0, 2.0]))
    (x**3).sum().backward(create_graph=True)
    gx = x.grad_var
    x.cleargrad()
    gx.sum().backward()
    np.testing.assert_allclose(x.grad, 6 * np.array([1.0, 2.0]))


def test_debug_mode_names_the_op_and_the_line():
    x = pg.Variable(np.array([1.0, 0.0]))
    with pg.debug(), np.errstate(all="ignore"):
        with pytest.raises(pg.NonFiniteError, match="log: forward"):
            pg.ops.log(x)
        y = pg.ops.sqrt(x)  # finite forward, infinite gradient at 0
        with pytest.raises(pg.NonFiniteError, match="sqrt: backward") as info:
            y.sum().backward()
    assert "test_engine.py" in str(info.value)
    with np.errstate(all="ignore"):
        pg.ops.log(x)  # outside debug mode no check


def test_debug_mode_names_the_line_of_an_operator():
    x = pg.Variable(np.array([1.0, 0.0]))
    with pg.debug(), np.errstate(all="ignore"):
        y = x**0.5 * 2.0  # the operators' own path: finite forward, infinite gradient
        with pytest.raises(pg.NonFiniteError, match="backward") as info:
            y.sum().backward()
    assert "y = x**0.5 * 2.0" in str(info.value)


def test_state_mode_follows_every_switch_in_each_thread():
    import threading

    from portagrad.autograd import forward_ad as fwAD
    from portagrad.tape._mode import DEBUG, FORWARD, RECORD, state

    assert state.mode == RECORD
    with pg.no_grad():
        assert state.mode == 0
        with pg.debug():
            assert state.mode == DEBUG
            with fwAD.dual_level():
                assert state.mode == DEBUG | FORWARD
                with pg.enable_grad():
                    assert state.mode == RECORD | DEBUG | FORWARD
                seen = []
                t = threading.Thread(target=lambda: seen.append(state.mode))
                t.start()
                t.join()
                assert seen == [RECORD]
            assert state.mode == DEBUG
    assert state.mode == RECORD


def test_post_accumulate_hooks_fire_once_when_each_gradient_is_complete():
    order = []
    w1 = pg.Variable(np.ones(2))
    w2 = pg.Variable(np.ones(2))
    x = pg.Variable(np.array([1.0, 2.0]), requires_grad=False)
    h1 = w1.register_post_accumulate_grad_hook(lambda v: order.append(("w1", v.grad.copy())))
    w2.register_post_accumulate_grad_hook(lambda v: order.append(("w2", v.grad.copy())))
    h = pg.ops.tanh(x * w1)       # w1 is used early (first layer)
    y = (h * w2).sum() + (w2 * w2).sum()  # w2 used twice, late
    y.backward()
    assert [name for name, _ in order] == ["w2", "w1"]  # w2 is complete first
    np.testing.assert_allclose(order[0][1], np.tanh([1.0, 2.0]) + 2.0)
    h1.remove()
    order.clear()
    (w1 * w2).sum().backward()
    assert [name for name, _ in order] == ["w2"]


def test_hooks_do_not_fire_for_grad():
    fired = []
    w = pg.Variable(np.ones(2))
    w.register_post_accumulate_grad_hook(lambda v: fired.append(1))
    pg.grad((w * 2).sum(), w)
    assert fired == []


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    x = pg.Variable(np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]]))
    (g,) = pg.grad(pg.ops.prod(x, axis=1).sum(), x)
    np.testing.assert_allclose(g.array, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]])
    pg.gradcheck.check_grads(lambda v: pg.ops.prod(v * v, axis=0),
                             (np.array([[0.5, 1.5], [2.0, -1.0]]),), order=3)


def _mlp_grads(x, ws, shared):
    """Loss of a small network whose weights and activations each take several gradients:
    matrix products (fresh gradients, summed in place), an addition that hands one
    gradient to both its inputs (shared, never summed into) and a ReLU."""
    a = pg.ops.matmul(x, ws[0])
    h = pg.ops.relu(a + shared)            # the gradient of a and of shared is one object
    y = pg.ops.linear(h, ws[1]) + pg.ops.matmul(h, ws[1].mT)  # h, ws[1]: two products
    z = pg.ops.matmul(a, ws[2])            # a: a product and the addition's gradient
    return (y * y).sum() + (z * a.sum()).sum() + (shared * shared).sum()


def _mlp_grads_numpy(x, w0, w1, w2, s):
    a = x @ w0
    pre = a + s
    h = np.maximum(pre, 0)
    gy = 2 * (2 * h @ w1.T)
    gpre = (2 * gy @ w1) * (pre > 0)
    dz = a.sum() * np.ones((a.shape[0], w2.shape[1]))
    ga = gpre + dz @ w2.T + (a @ w2).sum()
    return x.T @ ga, 2 * gy.T @ h, a.T @ dz, gpre + 2 * s


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_gradients_summed_in_place_never_touch_shared_or_returned_ones(rng, how):
    x = rng.standard_normal((5, 4))
    w0, w1, w2 = rng.standard_normal((4, 6)), rng.standard_normal((3, 6)), rng.standard_normal(
        (6, 2))
    s = rng.standard_normal((5, 6))
    ws = [pg.Variable(w) for w in (w0, w1, w2)]
    shared = pg.Variable(s)
    expected = _mlp_grads_numpy(x, w0, w1, w2, s)
    params = [*ws, shared]
    if how == "backward":
        _mlp_grads(x, ws, shared).backward()
        got = [p.grad_var for p in params]
    else:
        got = list(pg.grad(_mlp_grads(x, ws, shared), params))
    for g, e in zip(got, expected):
        assert type(g) is pg.Variable  # backward's own gradient types never reach the user
        np.testing.assert_allclose(g.array, e, rtol=1e-10, atol=1e-10)
    # A second run sums into new arrays: what the first one handed out stays as it was.
    kept = [g.array.copy() for g in got]
    if how == "backward":
        _mlp_grads(x, ws, shared).backward()
        for g, k, p in zip(got, kept, params):
            np.testing.assert_array_equal(g.array, k)
            np.testing.assert_allclose(p.grad_var.array, 2 * k, rtol=1e-12)
    else:
        pg.grad(_mlp_grads(x, ws, shared), params)
        for g, k in zip(got, kept):
            np.testing.assert_array_equal(g.array, k)


def test_an_intermediate_gradient_is_not_summed_into_afterwards(rng):
    x = pg.Variable(rng.standard_normal((3, 4)))
    w = pg.Variable(rng.standard_normal((4, 4)))
    h = pg.ops.matmul(x, w)
    y = (pg.ops.matmul(h, w) + h * 2.0).sum()
    gh, gx = pg.grad(y, [h, x])
    expected = np.ones((3, 4)) @ w.array.T + 2.0
    np.testing.assert_allclose(gh.array, expected, rtol=1e-12)
    np.testing.assert_allclose(gx.array, expected @ w.array.T, rtol=1e-12)


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_gradient_that_reaches_a_variable_twice_counts_twice(how):
    # add hands one gradient object to both of its inputs: when both are the same
    # variable, or both lead to it, it is summed with itself.
    cases = [
        lambda x, y: x + x,
        lambda x, y: x + (x + y),
        lambda x, y: (x * 1.0) + (x * 1.0),
        lambda x, y: pg.ops.linear(x, np.eye(3), x) + x,
    ]
    expected_x = [2.0, 2.0, 2.0, 3.0]
    for f, ex in zip(cases, expected_x):
        x, y = pg.Variable(np.ones(3)), pg.Variable(np.ones(3))
        out = f(x, y).sum()
        if how == "backward":
            out.backward()
            gx = x.grad_var
        else:
            (gx,) = pg.grad(out, [x])
        np.testing.assert_array_equal(gx.array, np.full(3, ex))


def test_a_tangent_computed_by_a_vjp_is_left_alone_as_a_seed():
    from portagrad.autograd import forward_ad as fwAD

    x = pg.Variable(np.array([1.0, -2.0, 3.0]))
    with pg.no_grad(), fwAD.dual_level():
        y = pg.ops.relu(fwAD.make_dual(x, np.ones(3)))  # its tangent comes from the vjp
        tangent = y._tangents[max(y._tangents)]
    assert type(tangent) is pg.Variable
    kept = tangent.array.copy()
    a, q = pg.Variable(np.zeros(3)), pg.Variable(np.zeros(3))
    h = a * 1.0
    pg.backward([h + q, h * 3.0], [tangent, np.ones(3)])
    np.testing.assert_array_equal(tangent.array, kept)
    np.testing.assert_array_equal(q.grad, kept)
    np.testing.assert_array_equal(a.grad, kept + 3.0)


@pytest.mark.parametrize("order", [0, 1])
def test_gradients_of_two_dtypes_promote_in_either_order(order):
    x = pg.Variable(np.ones((2, 2), np.float32))
    w = pg.Variable(np.full((2, 2), 0.5, np.float32))
    roots = [x * 3.0, x @ w]
    seeds = [np.ones((2, 2), np.float32), np.full((2, 2), 0.1, np.float64)]
    if order:
        roots, seeds = roots[::-1], seeds[::-1]
    pg.backward(roots, seeds)
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, 3.0 + 0.1, rtol=1e-7)


def test_a_hook_that_replaces_the_gradient_leaves_later_sums_right():
    def replace(v):
        v.grad_var = pg.Variable(v.grad.copy())

    for _ in range(50):
        a = pg.Variable(np.ones(3))
        b = pg.Variable(np.ones((1, 3)))
        w = pg.Variable(np.ones((3, 3)))
        w.register_post_accumulate_grad_hook(replace)
        loss = ((pg.ops.reshape(a, (1, 3)) + b).sum() + (a @ w).sum() * 1.0
                + (w @ np.eye(3)).sum() * 1.0)
        loss.backward()
        np.testing.assert_array_equal(a.grad, np.full(3, 4.0))
        np.testing.assert_array_equal(b.grad, np.ones((1, 3)))
        np.testing.assert_array_equal(w.grad, np.full((3, 3), 2.0))


def test_a_sum_replaced_for_another_dtype_is_no_longer_summed_into():
    # x's float32 gradient (a vjp's fresh product) is replaced by a float64 sum; a Variable
    # made later in the same backward (often at the same address) must not be taken for
    # it: here the broadcast views sum's vjp returns, which are read-only.
    for _ in range(20):
        x = pg.Variable(np.ones(3, np.float32))
        ds = [pg.Variable(np.ones((3, 3))) for _ in range(6)]
        roots = [x * 3.0, x * 1.0] + [pg.ops.sum(d, axis=0) for d in ds] + [d * 1.0 for d in ds]
        seeds = [np.ones(3, np.float32), np.ones(3)] + [np.ones(3)] * 6 + [np.ones((3, 3))] * 6
        pg.backward(roots, seeds)
        np.testing.assert_array_equal(x.grad, np.full(3, 4.0))
        for d in ds:
            np.testing.assert_array_equal(d.grad, np.full((3, 3), 2.0))


def test_a_small_op_adds_few_objects_for_the_garbage_collector():
    # A recorded op is its output Variable, its Node and the tuples and weak reference
    # backward needs; each object more is traversed by every collection while the graph
    # is alive, a measurable share of the time of a long chain of small ops.
    w = pg.Variable(np.ones(4, dtype=np.float32))
    b = pg.Variable(np.ones(4, dtype=np.float32))
    x = pg.Variable(np.ones(4, dtype=np.float32), requires_grad=False)
    y = x * w + b  # the shapes of this chain's nodes are stored once, here
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(500):
            y = y * w + b
        per_op = (len(gc.get_objects()) - before) / 1000
    finally:
        gc.enable()
    assert per_op <= 6, per_op
    y.sum().backward()
    np.testing.assert_allclose(b.grad, np.full(4, 501.0))  # one per y * w + b


def test_an_output_dropped_before_backward_is_recreated_once():
    x = pg.Variable(np.array([0.5, -1.0]))
    y = pg.ops.tanh(x)
    node = y.creator
    del y
    first = node.outputs[0]
    assert first.creator is node and node.outputs[0] is first
    np.testing.assert_allclose(first.array, np.tanh([0.5, -1.0]))
    (gx,) = pg.grad(first.sum(), x)
    np.testing.assert_allclose(gx.array, 1 - np.tanh([0.5, -1.0]) ** 2)
