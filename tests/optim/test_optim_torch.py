"""Every optimizer against torch.optim: the same initial parameters and the same gradients
(a fixed random sequence plus a term in the current parameter, so the trajectories
interact with the updates), two parameter groups with different options, float64,
parameters compared after every step at rtol 1e-10."""

import math

import numpy as np
import pytest

import portagrad as pg

torch = pytest.importorskip("torch")

STEPS = 12
RTOL = 1e-10


@pytest.fixture(autouse=True)
def _torch_float64_scalars():
    # torch keeps scalar state (ASGD's eta, NAdam's mu_product, step counts) in its
    # default dtype; float64 makes the reference float64 throughout.
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)

# name -> (constructor defaults, options of group 0, options of group 1)
CASES = {
    "SGD-plain": ("SGD", {"lr": 0.1}, {}, {"lr": 0.05}),
    "SGD": ("SGD", {"lr": 0.1}, {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01},
            {"momentum": 0.8, "nesterov": True, "lr": 0.05, "maximize": True}),
    "Adam": ("Adam", {"lr": 0.05}, {"amsgrad": True, "weight_decay": 0.1},
             {"lr": 0.01, "betas": (0.8, 0.99), "maximize": True}),
    "Adam-decoupled": ("Adam", {"lr": 0.05, "decoupled_weight_decay": True},
                       {"weight_decay": 0.1}, {"weight_decay": 0.3, "eps": 1e-3}),
    "AdamW": ("AdamW", {"lr": 0.05}, {"amsgrad": True}, {"weight_decay": 0.1, "lr": 0.02}),
    "Adamax": ("Adamax", {"lr": 0.05}, {"weight_decay": 0.1},
               {"betas": (0.7, 0.9), "eps": 1e-3, "maximize": True}),
    "NAdam": ("NAdam", {"lr": 0.05}, {"decoupled_weight_decay": True, "weight_decay": 0.1},
              {"momentum_decay": 0.01, "weight_decay": 0.05, "betas": (0.8, 0.95)}),
    "RAdam": ("RAdam", {"lr": 0.05}, {"decoupled_weight_decay": True, "weight_decay": 0.1},
              {"betas": (0.9, 0.9), "weight_decay": 0.05}),
    "Adagrad": ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5}, {"lr_decay": 0.1},
                {"weight_decay": 0.1, "eps": 1e-5, "maximize": True}),
    "Adadelta": ("Adadelta", {}, {"rho": 0.8, "weight_decay": 0.1},
                 {"lr": 0.5, "maximize": True, "eps": 1e-4}),
    "RMSprop": ("RMSprop", {"lr": 0.01}, {"centered": True, "momentum": 0.9},
                {"momentum": 0.5, "weight_decay": 0.1, "alpha": 0.9}),
    "RMSprop-centered": ("RMSprop", {"lr": 0.01}, {"centered": True}, {"maximize": True}),
    "Rprop": ("Rprop", {"lr": 0.02}, {"etas": (0.3, 1.5)},
              {"step_sizes": (1e-3, 0.05), "lr": 0.01, "maximize": True}),
    "ASGD": ("ASGD", {"lr": 0.05}, {"t0": 3.0, "lambd": 1e-2},
             {"weight_decay": 0.1, "alpha": 0.5, "t0": 5.0}),
    "Adafactor": ("Adafactor", {"lr": 0.05}, {"weight_decay": 0.1},
                  {"beta2_decay": -0.5, "d": 2.0, "eps": (1e-4, 1e-3), "maximize": True}),
}

SHAPES = [(3, 4), (5,)]


def _grads(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in shapes] for _ in range(STEPS)]


def _init(shapes, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _run_torch(cls_name, defaults, groups_opts, init, grads, sparse=False):
    params = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in init]
    groups = [dict(o, params=[p]) for o, p in zip(groups_opts, params)]
    opt = getattr(torch.optim, cls_name)(groups, **defaults)
    traj = []
    for gs in grads:
        for p, g in zip(params, gs):
            dense = torch.tensor(g) + 0.3 * p.detach()
            p.grad = dense.to_sparse() if sparse else dense
        opt.step()
        traj.append(([p.detach().numpy().copy() for p in params],
                     [grp["lr"] for grp in opt.param_groups]))
    return traj, opt


def _run_pg(cls_name, defaults, groups_opts, init, grads):
    params = [pg.nn.Parameter(a.copy()) for a in init]
    groups = [dict(o, params=[p]) for o, p in zip(groups_opts, params)]
    opt = getattr(pg.optim, cls_name)(groups, **defaults)
    traj = []
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = g + 0.3 * p.array
        opt.step()
        traj.append(([p.array.copy() for p in params], [grp["lr"] for grp in opt.param_groups]))
    return traj, opt, params


def _compare(a, b):
    for (pa, la), (pb, lb) in zip(a, b):
        for x, y in zip(pa, pb):
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=1e-13)
        np.testing.assert_allclose(la, lb, rtol=RTOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    cls_name, defaults, g0, g1 = CASES[case]
    init, grads = _init(SHAPES), _grads(SHAPES)
    ref, topt = _run_torch(cls_name, defaults, [g0, g1], init, grads)
    got, popt, _ = _run_pg(cls_name, defaults, [g0, g1], init, grads)
    _compare(ref, got)
    # Same state entries as torch, same values.
    tsd, psd = topt.state_dict(), popt.state_dict()
    assert sorted(tsd["state"]) == sorted(psd["state"])
    for k in tsd["state"]:
        for name, v in tsd["state"][k].items():
            if v is None:
                assert psd["state"][k].get(name) is None
                continue
            np.testing.assert_allclose(np.asarray(psd["state"][k][name], dtype=float),
                                       v.numpy(), rtol=RTOL, atol=1e-13, err_msg=name)
    assert [g["params"] for g in tsd["param_groups"]] == \
        [g["params"] for g in psd["param_groups"]]


def test_sparse_adam_matches_torch_with_full_sparse_gradients():
    shapes = [(4, 3), (6,)]
    init, grads = _init(shapes), _grads(shapes)
    opts = [{"lr": 0.05}, {"betas": (0.8, 0.9), "eps": 1e-3, "maximize": True}]
    ref, _ = _run_torch("SparseAdam", {"lr": 0.1}, opts, init, grads, sparse=True)
    got, _, _ = _run_pg("SparseAdam", {"lr": 0.1}, opts, init, grads)
    _compare(ref, got)


def _ns_float64(grad, ns_coefficients, ns_steps, eps):
    # Newton-Schulz quintic iteration written from Muon's definition, in the input's dtype.
    a, b, c = ns_coefficients
    x = grad.T if grad.shape[0] > grad.shape[1] else grad
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if grad.shape[0] > grad.shape[1] else x


@pytest.mark.parametrize("adjust", [None, "match_rms_adamw"])
def test_muon_matches_torch_with_the_iteration_in_float64(monkeypatch, adjust):
    import torch.optim._muon as tm

    monkeypatch.setattr(tm, "_zeropower_via_newtonschulz", _ns_float64)
    shapes = [(3, 5), (6, 2)]
    init, grads = _init(shapes), _grads(shapes)
    opts = [{"nesterov": False}, {"lr": 0.02, "weight_decay": 0.0, "momentum": 0.9}]
    ref, _ = _run_torch("Muon", {"lr": 0.05, "adjust_lr_fn": adjust}, opts, init, grads)
    got, _, _ = _run_pg("Muon", {"lr": 0.05, "adjust_lr_fn": adjust}, opts, init, grads)
    _compare(ref, got)


def test_muon_close_to_torch_bfloat16():
    shapes = [(4, 4)]
    init, grads = _init(shapes), _grads(shapes)
    ref, _ = _run_torch("Muon", {"lr": 0.05}, [{}], init, grads[:3])
    got, _, _ = _run_pg("Muon", {"lr": 0.05}, [{}], init, grads[:3])
    np.testing.assert_allclose(got[-1][0][0], ref[-1][0][0], rtol=0.05, atol=0.01)


def _rosenbrock_closure_torch(opt, x):
    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2] - 0.5) ** 2
        loss.backward()
        return loss
    return closure


def _rosenbrock_closure_pg(opt, x):
    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2] - 0.5) ** 2
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("kw", [{"line_search_fn": "strong_wolfe", "max_iter": 10},
                                {"lr": 0.5, "max_iter": 5, "history_size": 3},
                                {"line_search_fn": "strong_wolfe", "history_size": 2,
                                 "max_iter": 7}])
def test_lbfgs_matches_torch_on_rosenbrock(kw):
    # Rosenbrock's valley amplifies rounding over many iterations: a few steps only.
    x0 = np.array([-1.2, 1.0, 2.0])
    tx = torch.tensor(x0, requires_grad=True)
    topt = torch.optim.LBFGS([tx], **kw)
    px = pg.nn.Parameter(x0.copy())
    popt = pg.optim.LBFGS([px], **kw)
    tc, pc = _rosenbrock_closure(topt, tx), _rosenbrock_closure(popt, px)
    for _ in range(2):
        tl = topt.step(tc).item()
        pl = float(popt.step(pc))
        assert math.isclose(tl, pl, rel_tol=RTOL)
        np.testing.assert_allclose(px.array, tx.detach().numpy(), rtol=RTOL, atol=1e-13)
    ts, ps = topt.state[tx], popt.state[px]
    assert ts["func_evals"] == ps["func_evals"] and ts["n_iter"] == ps["n_iter"]


def _rosenbrock_closure(opt, x):
    def closure():
        opt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2] - 0.5) ** 2
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_solves_a_quadratic_as_torch(line_search):
    rng = np.random.default_rng(3)
    m = rng.standard_normal((6, 6))
    a = m @ m.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    kw = dict(line_search_fn=line_search, max_iter=40, tolerance_change=1e-14,
              tolerance_grad=1e-12, lr=1.0 if line_search else 0.05)
    x = pg.nn.Parameter(np.zeros(6))
    opt = pg.optim.LBFGS([x], **kw)
    tx = torch.zeros(6, requires_grad=True)
    topt = torch.optim.LBFGS([tx], **kw)
    ta, tb = torch.tensor(a), torch.tensor(b)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * pg.ops.matmul(a, x)).sum() - (x * b).sum()
        loss.backward()
        return loss

    def tclosure():
        topt.zero_grad()
        loss = 0.5 * (tx * (ta @ tx)).sum() - (tx * tb).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
        topt.step(tclosure)
        np.testing.assert_allclose(x.array, tx.detach().numpy(), rtol=1e-9, atol=1e-12)
    if line_search:
        np.testing.assert_allclose(x.array, np.linalg.solve(a, b), rtol=1e-6, atol=1e-8)


def test_lion_against_its_definition():
    rng = np.random.default_rng(0)
    p0, gs = rng.standard_normal(4), [rng.standard_normal(4) for _ in range(5)]
    p = pg.nn.Parameter(p0.copy())
    opt = pg.optim.Lion([p], lr=0.1, betas=(0.8, 0.9), weight_decay=0.5)
    ref, m = p0.copy(), np.zeros(4)
    for g in gs:
        p.grad = g
        opt.step()
        ref = ref * (1 - 0.1 * 0.5) - 0.1 * np.sign(0.8 * m + 0.2 * g)
        m = 0.9 * m + 0.1 * g
        np.testing.assert_allclose(p.array, ref, rtol=1e-12)


@pytest.mark.parametrize("case", ["Adam", "SGD", "Adagrad", "Rprop", "ASGD", "NAdam",
                                  "RMSprop", "Adadelta", "Adamax", "Adafactor"])
def test_state_dict_round_trip_continues_identically(case, tmp_path):
    cls_name, defaults, g0, g1 = CASES[case]
    init, grads = _init(SHAPES), _grads(SHAPES)
    full, _, _ = _run_pg(cls_name, defaults, [g0, g1], init, grads)
    half, opt, params = _run_pg(cls_name, defaults, [g0, g1], init, grads[:5])
    pg.io.save(tmp_path / "o.safetensors", opt)
    fresh = [pg.nn.Parameter(p.array.copy()) for p in params]
    opt2 = getattr(pg.optim, cls_name)([dict(o, params=[p]) for o, p in
                                        zip([g0, g1], fresh)], **defaults)
    for g in opt2.param_groups:
        g["lr"] = 123.0  # replaced by the saved value
    pg.io.load(tmp_path / "o.safetensors", opt2)
    assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]
    for gs in grads[5:]:
        for p, g in zip(fresh, gs):
            p.grad = g + 0.3 * p.array
        opt2.step()
    for a, b in zip(fresh, full[-1][0]):
        np.testing.assert_allclose(a.array, b, rtol=1e-12)


def test_loads_a_torch_state_dict():
    init, grads = _init(SHAPES), _grads(SHAPES)
    opts = [{"amsgrad": True}, {"lr": 0.01}]
    _, topt = _run_torch("Adam", {"lr": 0.05}, opts, init, grads[:4])
    sd = topt.state_dict()
    as_numpy = {"state": {k: {n: v.numpy() for n, v in st.items()} for k, st in
                          sd["state"].items()}, "param_groups": sd["param_groups"]}
    ref, _ = _run_torch("Adam", {"lr": 0.05}, opts, init, grads)
    params = [pg.nn.Parameter(a) for a in ref[3][0]]
    opt = pg.optim.Adam([dict(o, params=[p]) for o, p in zip([{}, {}], params)], lr=0.05)
    opt.load_state_dict(as_numpy)
    for gs in grads[4:]:
        for p, g in zip(params, gs):
            p.grad = g + 0.3 * p.array
        opt.step()
    for a, b in zip(params, ref[-1][0]):
        np.testing.assert_allclose(a.array, b, rtol=RTOL)


def test_param_groups_and_options():
    a, b = pg.nn.Parameter(np.ones(2)), pg.nn.Parameter(np.ones(3))
    opt = pg.optim.SGD([{"params": [a]}, {"params": b, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[0]["momentum"] == 0
    c = pg.nn.Parameter(np.ones(1))
    opt.add_param_group({"params": [c], "lr": 1.0})
    assert opt.param_groups[2]["lr"] == 1.0
    with pytest.raises(ValueError, match="more than one group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="unknown options"):
        pg.optim.SGD([{"params": [c], "momentun": 0.9}], lr=0.1)
    named = pg.optim.Adam([("w", a), ("v", b)])
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "v"]


def test_implementation_options_accepted_only_at_default():
    p = pg.nn.Parameter(np.ones(2))
    pg.optim.Adam([p], foreach=None, fused=False, capturable=False, differentiable=False)
    for kw in ({"foreach": True}, {"fused": True}, {"capturable": True},
               {"differentiable": True}):
        with pytest.raises(pg.PortagradError, match=next(iter(kw))):
            pg.optim.Adam([p], **kw)


def test_zero_grad_set_to_none():
    p = pg.nn.Parameter(np.ones(2))
    opt = pg.optim.SGD([p], lr=0.1)
    p.grad = np.ones(2)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad, np.zeros(2))
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure_returns_the_loss():
    p = pg.nn.Parameter(np.array([2.0]))
    opt = pg.optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 4.0
    np.testing.assert_allclose(p.array, [1.0])


def test_bad_params():
    with pytest.raises(TypeError, match="learning rate by keyword"):
        pg.optim.SGD(0.1)
    with pytest.raises(ValueError, match="empty"):
        pg.optim.SGD([], lr=0.1)
    with pytest.raises(pg.PortagradError, match="nesterov"):
        pg.optim.SGD([pg.nn.Parameter(np.ones(1))], nesterov=True)


def test_swap_in_params_and_state_as_torch():
    init, grads = _init(SHAPES), _grads(SHAPES)
    opts = [{}, {"lr": 0.01}]
    _, topt = _run_torch("Adam", {"lr": 0.05}, opts, init, grads[:3])
    _, popt, params = _run_pg("Adam", {"lr": 0.05}, opts, init, grads[:3])
    live = [p.array.copy() for p in params]
    swapped = [pg.nn.Parameter(p.array.copy()) for p in params]
    tswapped = {str(i): torch.tensor(p.array.copy(), requires_grad=True)
                for i, p in enumerate(params)}
    psd = popt.state_dict()
    psd = {"state": {k: {n: (v.copy() if hasattr(v, "copy") else v) for n, v in st.items()}
                     for k, st in psd["state"].items()}, "param_groups": psd["param_groups"]}
    tsd = topt.state_dict()
    with torch.optim.swap_in_optimizer_params_and_state(topt, tswapped, tsd):
        for t, g in zip(tswapped.values(), grads[3]):
            t.grad = torch.tensor(g)
        topt.step()
    with pg.optim.swap_in_optimizer_params_and_state(popt, {str(i): p for i, p in
                                                            enumerate(swapped)}, psd):
        for p, g in zip(swapped, grads[3]):
            p.grad = g
        popt.step()
    for p, t in zip(swapped, tswapped.values()):
        np.testing.assert_allclose(p.array, t.detach().numpy(), rtol=RTOL)
    for p, a in zip(params, live):
        np.testing.assert_array_equal(p.array, a)
    assert popt.param_groups[0]["params"][0] is params[0]
