"""Module options as torch has them: forward hooks with ``always_call=True`` and
``load_state_dict(assign=True)``, each beside torch."""

from __future__ import annotations

import numpy as np
import pytest

from portagrad import nn

torch = pytest.importorskip("torch")


def _hooked(lib, fail_in):
    """A module whose forward (or first hook) raises, with three forward hooks; returns
    the module and the log of hook calls."""
    log = []

    class M(lib.Module):
        def forward(self, x):
            if fail_in == "forward":
                raise RuntimeError("forward failed")
            return x * 2

    m = M()

    def first(mod, args, out):
        log.append(("first", out is None))
        if fail_in == "hook":
            raise RuntimeError("hook failed")

    m.register_forward_hook(first, always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("plain", out is None)))
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", out is None)),
                            with_kwargs=True, always_call=True)
    return m, log


@pytest.mark.parametrize("fail_in", ["forward", "hook", "none"])
def test_always_call_hooks_run_as_torch(fail_in):
    tm, tlog = _hooked(torch.nn, fail_in)
    pm, plog = _hooked(nn, fail_in)
    if fail_in == "none":
        tm(torch.ones(2))
        pm(np.ones(2))
    else:
        with pytest.raises(RuntimeError, match="failed") as t_err:
            tm(torch.ones(2))
        with pytest.raises(RuntimeError, match="failed") as p_err:
            pm(np.ones(2))
        assert str(p_err.value) == str(t_err.value)
    assert plog == tlog


def test_an_always_call_hook_error_after_forward_failed_is_a_warning():
    class M(nn.Module):
        def forward(self, x):
            raise RuntimeError("forward failed")

    m = M()
    m.register_forward_hook(lambda mod, a, o: 1 / 0, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True"), \
            pytest.raises(RuntimeError, match="forward failed"):
        m(np.ones(1))


def test_load_state_dict_assign_keeps_the_given_arrays_as_torch():
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    pm = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    tm[0].bias.requires_grad_(False)
    pm[0].bias.requires_grad_(False)
    source = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)).double()
    tsd = source.state_dict()
    psd = {k: v.numpy() for k, v in tsd.items()}
    old = pm[0].weight
    assert tuple(tm.load_state_dict(tsd, assign=True)) == tuple(
        pm.load_state_dict(psd, assign=True)) == ([], [])
    for (n, p), (tn, t) in zip(pm.named_parameters(), tm.named_parameters()):
        assert n == tn and str(p.dtype) == str(t.dtype).removeprefix("torch.") == "float64"
        assert p.requires_grad == t.requires_grad
        assert p.array is psd[n]  # kept, not copied (torch shares the tensor)
    assert pm[0].weight is not old and pm[1].running_mean is psd["1.running_mean"]
    x = np.random.default_rng(0).normal(size=(4, 2))
    pm.eval()
    tm.eval()
    np.testing.assert_allclose(pm(x).array, tm(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_load_state_dict_assign_keeps_a_given_parameter():
    m = nn.Linear(2, 1)
    p = nn.Parameter(np.ones((1, 2)))
    m.weight.requires_grad_(False)
    result = m.load_state_dict({"weight": p}, strict=False, assign=True)
    assert result.missing_keys == ["bias"]
    assert m.weight is p and not p.requires_grad
    np.testing.assert_array_equal(m.state_dict()["weight"], np.ones((1, 2)))
