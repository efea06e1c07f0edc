"""Third-party array-API code, differentiated unchanged.

array-api-extra's functions and SciPy's array-API-aware functions are called with
Variables; they find ``portagrad.ops`` through ``array_namespace`` and their gradients
must pass ``check_grads``. Functions that assign in place (``x[i] = v``, which
array-api-extra's ``at(...).set`` does on writeable arrays) work on constants; where the
assignment involves a Variable that requires gradients portagrad refuses it with a
GradientError rather than differentiate wrongly; the tests record which.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import portagrad as pg
from portagrad import GradientError
from portagrad.gradcheck import check_grads

xpx = pytest.importorskip("array_api_extra")
o = pg.ops


def _complex(a, b):
    return o.astype(a, o.complex128) + o.astype(b, o.complex128) * 1j


def _expand_dims(x):
    with warnings.catch_warnings():  # deprecated in favour of the 2025.12 xp.expand_dims
        warnings.simplefilter("ignore", DeprecationWarning)
        return xpx.expand_dims(x, axis=(0, 2))


def _cases(rng):
    return {
        "cov": (xpx.cov, (rng.standard_normal((3, 5)),)),
        "sinc": (xpx.sinc, (rng.uniform(0.1, 2.0, 4) * rng.choice([-1, 1], 4),)),
        "kron": (xpx.kron, (rng.standard_normal((2, 2)), rng.standard_normal((2, 3)))),
        "atleast_nd": (lambda x: xpx.atleast_nd(x, ndim=3), (rng.standard_normal(3),)),
        "expand_dims": (_expand_dims, (rng.standard_normal((2, 3)),)),
        "angle": (lambda a, b: xpx.angle(_complex(a, b)),
                  (rng.uniform(0.2, 1, 3), rng.uniform(0.2, 1, 3))),
        "deg2rad": (xpx.deg2rad, (rng.standard_normal(3),)),
        "nan_to_num": (xpx.nan_to_num, (rng.standard_normal(3),)),
        "nanmean": (lambda x: xpx.nanmean(x, axis=0), (rng.standard_normal((3, 2)),)),
        "nansum": (xpx.nansum, (rng.standard_normal(3),)),
        "nanmax": (xpx.nanmax, (rng.standard_normal(4),)),
        "partition": (lambda x: xpx.partition(x, 1), (rng.standard_normal(4),)),
    }


NAMES = sorted(_cases(np.random.default_rng(0)))


@pytest.mark.parametrize("name", NAMES)
def test_array_api_extra_is_differentiated_unchanged(name, backend):
    rng = np.random.default_rng(1)
    fn, host = _cases(rng)[name]
    args = tuple(backend.asarray(h) for h in host)
    check_grads(fn, args, order=2)


def test_array_api_extra_values_match_numpy(rng):
    x = rng.standard_normal((3, 5))
    np.testing.assert_allclose(xpx.cov(pg.Variable(x)).array, np.cov(x), atol=1e-12)
    a, b = rng.standard_normal((2, 2)), rng.standard_normal((2, 3))
    np.testing.assert_allclose(xpx.kron(pg.Variable(a), pg.Variable(b)).array, np.kron(a, b),
                               atol=1e-12)
    y = rng.uniform(0.1, 2.0, 4)
    np.testing.assert_allclose(xpx.sinc(pg.Variable(y)).array, np.sinc(y), atol=1e-12)


@pytest.mark.parametrize("call", [lambda x: xpx.pad(x, 1),
                                  lambda x: xpx.create_diagonal(x)],
                         ids=["pad", "create_diagonal"])
def test_array_api_extra_in_place_updates_are_refused(call):
    # They assign x into a new array: a gradient would be cut there, so it is refused.
    with pytest.raises(GradientError, match="__setitem__"):
        call(pg.Variable(np.ones(3)))


def test_array_api_extra_in_place_updates_of_constants_work():
    x = np.array([1.0, 2.0, np.nan])
    c = o.asarray(x)
    np.testing.assert_array_equal(xpx.pad(c, 1).array, np.pad(x, 1))
    np.testing.assert_array_equal(xpx.create_diagonal(c).array, np.diag(x))
    np.testing.assert_array_equal(xpx.isclose(c, c, equal_nan=True).array, [True] * 3)
    # Assigning into an intermediate of a Variable that requires gradients is fine when
    # nothing differentiable is assigned: isclose builds a boolean result.
    v = pg.Variable(x)
    np.testing.assert_array_equal(xpx.isclose(v, v).array, [True, True, False])
    np.testing.assert_array_equal(c.array, x)


_SCIPY_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import scipy.special as sp
    import portagrad as pg
    from portagrad.gradcheck import check_grads

    rng = np.random.default_rng(0)
    cases = {
        "softmax": (lambda x: sp.softmax(x, axis=-1), (rng.standard_normal((2, 4)),)),
        "xlogy": (sp.xlogy, (rng.uniform(0.1, 1, 4), rng.uniform(0.1, 1, 4))),
        "logsumexp": (lambda x: sp.logsumexp(x, axis=-1), (rng.standard_normal((2, 4)),)),
        "log_softmax": (lambda x: sp.log_softmax(x, axis=-1),
                        (rng.standard_normal((2, 4)),)),
    }
    out = {}
    for name, (fn, args) in cases.items():
        try:
            check_grads(fn, args, order=2)
            out[name] = "ok"
        except pg.GradientError as e:
            out[name] = "refused: " + str(e).split(":")[0]
    print(json.dumps(out))
""")


def test_scipy_special_with_the_array_api_flag():
    pytest.importorskip("scipy")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, "-c", _SCIPY_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["softmax"] == "ok"
    assert result["xlogy"] == "ok"
    # logsumexp and log_softmax mask their maximum with xpx.at(...).set, an in-place
    # update portagrad refuses rather than differentiate wrongly.
    assert result["logsumexp"] == "refused: Variable.__setitem__"
    assert result["log_softmax"] == "refused: Variable.__setitem__"
