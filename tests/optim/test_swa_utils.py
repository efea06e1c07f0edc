"""swa_utils against torch.optim.swa_utils: SWALR's learning rates at rtol 1e-10, the
averaged parameters, update_bn's statistics."""

import warnings

import numpy as np
import pytest

import portagrad as pg
from portagrad.optim import swa_utils as S

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("strategy, epochs", [("cos", 3), ("linear", 0), ("linear", 5)])
def test_swalr_matches_torch(strategy, epochs):
    tp = [torch.zeros(1, requires_grad=True) for _ in range(2)]
    topt = torch.optim.SGD([{"params": [tp[0]], "lr": 0.5}, {"params": [tp[1]], "lr": 0.2}])
    tsched = torch.optim.swa_utils.SWALR(topt, swa_lr=[0.05, 0.01], anneal_epochs=epochs,
                                         anneal_strategy=strategy)
    pp = [pg.nn.Parameter(np.zeros(1)) for _ in range(2)]
    popt = pg.optim.SGD([{"params": [pp[0]], "lr": 0.5}, {"params": [pp[1]], "lr": 0.2}])
    psched = S.SWALR(popt, swa_lr=[0.05, 0.01], anneal_epochs=epochs,
                     anneal_strategy=strategy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(8):
            topt.step()
            tsched.step()
            popt.step()
            psched.step()
            np.testing.assert_allclose(psched.get_last_lr(), tsched.get_last_lr(), rtol=1e-10)


def test_averaged_model_matches_torch():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    pm = pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.BatchNorm1d(4))
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    ta = torch.optim.swa_utils.AveragedModel(tm)
    pa = S.AveragedModel(pm)
    rng = np.random.default_rng(0)
    for _ in range(4):
        d = rng.standard_normal((4, 3)).astype(np.float32)
        with torch.no_grad():
            tm[0].weight += torch.tensor(d)
        pm[0].weight.array = pm[0].weight.array + d
        ta.update_parameters(tm)
        pa.update_parameters(pm)
    assert int(pa.n_averaged) == int(ta.n_averaged) == 4
    np.testing.assert_allclose(pa.module[0].weight.array, ta.module[0].weight.detach().numpy(),
                               rtol=1e-6)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    batches = [x[:8], x[8:]]
    torch.optim.swa_utils.update_bn([torch.tensor(b) for b in batches], ta)
    S.update_bn(batches, pa)
    np.testing.assert_allclose(pa.module[1].running_mean,
                               ta.module[1].running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pa.module[1].running_var,
                               ta.module[1].running_var.numpy(), rtol=1e-5, atol=1e-6)
    assert pa.module[1].momentum == 0.1


def test_ema_avg_fn_matches_torch():
    tm, pm = torch.nn.Linear(2, 2), pg.nn.Linear(2, 2)
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    ta = torch.optim.swa_utils.AveragedModel(
        tm, avg_fn=torch.optim.swa_utils.get_ema_avg_fn(0.9))
    pa = S.AveragedModel(pm, avg_fn=S.get_ema_avg_fn(0.9))
    for _ in range(3):
        with torch.no_grad():
            tm.weight *= 1.5
        pm.weight.array = pm.weight.array * np.float32(1.5)
        ta.update_parameters(tm)
        pa.update_parameters(pm)
    np.testing.assert_allclose(pa.module.weight.array, ta.module.weight.detach().numpy(),
                               rtol=1e-6)
    assert S.get_swa_avg_fn()(2.0, 5.0, 2) == torch.optim.swa_utils.get_swa_avg_fn()(
        torch.tensor(2.0), torch.tensor(5.0), torch.tensor(2)).item()


@pytest.mark.parametrize("kind", ["swa", "ema", "default", "inplace"])
def test_multi_avg_fns_match_torch(kind):
    tsu = torch.optim.swa_utils
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    pm = pg.nn.Sequential(pg.nn.Linear(3, 4), pg.nn.BatchNorm1d(4)).double()
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})

    def inplace(avg, cur, n):  # torch's form: writes the averages, returns None
        for a, c in zip(avg, cur):
            a[...] = a * 0.5 + c * 0.5

    def t_inplace(avg, cur, n):
        for a, c in zip(avg, cur):
            a.copy_(a * 0.5 + c * 0.5)

    fns = {"swa": (tsu.get_swa_multi_avg_fn(), S.get_swa_multi_avg_fn()),
           "ema": (tsu.get_ema_multi_avg_fn(0.7), S.get_ema_multi_avg_fn(0.7)),
           "default": (None, None), "inplace": (t_inplace, inplace)}[kind]
    use_buffers = kind == "ema"
    ta = tsu.AveragedModel(tm, multi_avg_fn=fns[0], use_buffers=use_buffers)
    pa = S.AveragedModel(pm, multi_avg_fn=fns[1], use_buffers=use_buffers)
    rng = np.random.default_rng(1)
    for _ in range(4):
        d = rng.standard_normal((4, 3))
        x = rng.standard_normal((5, 3))
        with torch.no_grad():
            tm[0].weight += torch.tensor(d)
            tm(torch.tensor(x))
        pm[0].weight.array = pm[0].weight.array + d
        with pg.no_grad():
            pm(x)
        ta.update_parameters(tm)
        pa.update_parameters(pm)
    tsd = ta.module.state_dict()
    for k, v in pa.module.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        np.testing.assert_allclose(pg.xp.to_numpy(getattr(v, "array", v)), tsd[k].numpy(),
                                   rtol=1e-10, atol=1e-14, err_msg=k)


def test_ema_multi_avg_fn_refuses_a_decay_outside_0_1():
    with pytest.raises(ValueError, match=r"get_ema_multi_avg_fn\(decay\)"):
        S.get_ema_multi_avg_fn(1.5)
