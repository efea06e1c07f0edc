"""Every scheduler against torch.optim.lr_scheduler: two parameter groups with different
learning rates, the same steps, learning rates (and cycled momenta) compared after every
step at rtol 1e-10; state_dict round trips."""

import numpy as np
import pytest

import portagrad as pg

torch = pytest.importorskip("torch")

STEPS = 30
RTOL = 1e-10


def _lam(e):
    return 0.9 ** e + 0.01 * e


def _mul(e):
    return 0.95 if e % 2 else 0.99


# name -> (optimizer, optimizer kwargs, scheduler factory taking (module, optimizer))
CASES = {
    "StepLR": ("SGD", {}, lambda L, o: L.StepLR(o, step_size=4, gamma=0.5)),
    "MultiStepLR": ("SGD", {}, lambda L, o: L.MultiStepLR(o, [3, 7, 7, 12], gamma=0.3)),
    "ExponentialLR": ("SGD", {}, lambda L, o: L.ExponentialLR(o, gamma=0.9)),
    "CosineAnnealingLR": ("SGD", {}, lambda L, o: L.CosineAnnealingLR(o, T_max=7,
                                                                       eta_min=0.001)),
    "CosineAnnealingWarmRestarts": ("SGD", {}, lambda L, o: L.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01)),
    "OneCycleLR": ("SGD", {"momentum": 0.9}, lambda L, o: L.OneCycleLR(
        o, max_lr=[1.0, 0.5], total_steps=STEPS + 1)),
    "OneCycleLR-linear-3phase-adam": ("Adam", {}, lambda L, o: L.OneCycleLR(
        o, max_lr=0.3, epochs=4, steps_per_epoch=8, anneal_strategy="linear",
        three_phase=True, pct_start=0.25)),
    "CyclicLR": ("SGD", {"momentum": 0.9}, lambda L, o: L.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=4, step_size_down=3)),
    "CyclicLR-triangular2": ("SGD", {"momentum": 0.9}, lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, mode="triangular2")),
    "CyclicLR-exp_range-adam": ("Adam", {}, lambda L, o: L.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.95)),
    "LinearLR": ("SGD", {}, lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9,
                                                     total_iters=6)),
    "ConstantLR": ("SGD", {}, lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=5)),
    "LambdaLR": ("SGD", {}, lambda L, o: L.LambdaLR(o, [_lam, lambda e: 1.0 / (1 + e)])),
    "MultiplicativeLR": ("SGD", {}, lambda L, o: L.MultiplicativeLR(o, _mul)),
    "PolynomialLR": ("SGD", {}, lambda L, o: L.PolynomialLR(o, total_iters=9, power=2.0)),
    "SequentialLR": ("SGD", {}, lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=4), L.ExponentialLR(o, gamma=0.9),
            L.CosineAnnealingLR(o, T_max=5)], milestones=[5, 12])),
    "ChainedScheduler": ("SGD", {}, lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.5, total_iters=4), L.ExponentialLR(o, gamma=0.9),
         L.StepLR(o, 3, 0.5)])),
}


def _optimizer(lib, name, kw):
    if lib is torch:
        params = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
        mod = torch.optim
    else:
        params = [pg.nn.Parameter(np.zeros(2)), pg.nn.Parameter(np.zeros(3))]
        mod = pg.optim
    return getattr(mod, name)([{"params": [params[0]], "lr": 0.1},
                               {"params": [params[1]], "lr": 0.05}], **kw)


def _record(opt, sched, metrics=None):
    out = []
    for i in range(STEPS):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        row = list(sched.get_last_lr()) + [g["lr"] for g in opt.param_groups]
        for g in opt.param_groups:
            if "momentum" in g:
                row.append(g["momentum"])
            if "betas" in g:
                row.append(g["betas"][0])
        out.append(row)
    return np.array(out, dtype=float)


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    name, kw, make = CASES[case]
    topt = _optimizer(torch, name, kw)
    tsched = make(torch.optim.lr_scheduler, topt)
    popt = _optimizer(pg, name, kw)
    psched = make(pg.optim.lr_scheduler, popt)
    np.testing.assert_allclose(psched.get_last_lr(), tsched.get_last_lr(), rtol=RTOL)
    assert [g["initial_lr"] for g in popt.param_groups] == \
        pytest.approx([g["initial_lr"] for g in topt.param_groups], rel=RTOL)
    np.testing.assert_allclose(_record(popt, psched), _record(topt, tsched), rtol=RTOL,
                               atol=1e-15)
    assert getattr(psched, "last_epoch", None) == getattr(tsched, "last_epoch", None)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.91, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.8] * 3
    for kw in ({"patience": 1, "factor": 0.5, "cooldown": 1},
               {"mode": "max", "patience": 0, "threshold_mode": "abs", "threshold": 0.01,
                "min_lr": [0.02, 0.001]}):
        topt, popt = _optimizer(torch, "SGD", {}), _optimizer(pg, "SGD", {})
        t = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw)
        p = pg.optim.lr_scheduler.ReduceLROnPlateau(popt, **kw)
        np.testing.assert_allclose(_record(popt, p, metrics), _record(topt, t, metrics),
                                   rtol=RTOL)


def test_step_with_epoch_uses_the_closed_form_as_torch():
    for make in (lambda L, o: L.StepLR(o, 3, 0.5), lambda L, o: L.CosineAnnealingLR(o, 10),
                 lambda L, o: L.PolynomialLR(o, 8, 1.5), lambda L, o: L.LinearLR(o),
                 lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=3)):
        topt, popt = _optimizer(torch, "SGD", {}), _optimizer(pg, "SGD", {})
        t, p = make(torch.optim.lr_scheduler, topt), make(pg.optim.lr_scheduler, popt)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in (4, 7, 2, 11):
                t.step(e)
                p.step(e)
                np.testing.assert_allclose(p.get_last_lr(), t.get_last_lr(), rtol=RTOL)


@pytest.mark.parametrize("case", ["StepLR", "OneCycleLR", "CyclicLR", "SequentialLR",
                                  "LambdaLR", "MultiStepLR", "ChainedScheduler"])
def test_state_dict_resumes(case, tmp_path):
    name, kw, make = CASES[case]
    ref_opt = _optimizer(pg, name, kw)
    ref = make(pg.optim.lr_scheduler, ref_opt)
    full = _record(ref_opt, ref)
    opt = _optimizer(pg, name, kw)
    sched = make(pg.optim.lr_scheduler, opt)
    for _ in range(10):
        opt.step()
        sched.step()
    pg.io.save(tmp_path / "s.safetensors", {"opt": opt.state_dict(),
                                            "sched": sched.state_dict()})
    saved = pg.io.load(tmp_path / "s.safetensors")
    opt2 = _optimizer(pg, name, kw)
    sched2 = make(pg.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved["opt"])
    sched2.load_state_dict(saved["sched"])
    rest = []
    for _ in range(STEPS - 10):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    np.testing.assert_allclose(np.array(rest), full[10:, :2], rtol=1e-12)


def test_resume_needs_initial_lr():
    opt = _optimizer(pg, "SGD", {})
    with pytest.raises(ValueError, match="initial_lr"):
        pg.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3)


def test_cycle_momentum_needs_momentum():
    opt = _optimizer(pg, "Adagrad", {})
    with pytest.raises(ValueError, match="cycle_momentum"):
        pg.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=5)
