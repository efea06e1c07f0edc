"""Every library's fast path, in one table.

A kernel's default is pure standard and runs on any namespace; a fast path is a faster
implementation of the same kernel for one library, which may decline inputs it does not
suit (it returns ``NotImplemented`` and the default runs). The implementations live next
to their kernels; this table is the only place that attaches them, and
``portagrad.xp`` calls :func:`install` once, on import. A library is imported only when one
of its arrays reaches its fast path, so listing CuPy, torch and JAX here costs nothing
where they are not installed.

The NumPy paths that call NumPy's bundled OpenBLAS (``matmul``, ``matmul_into``, the
optimizer updates) reach it through :mod:`portagrad.xp._openblas`, which checks itself
before first use and otherwise leaves them on NumPy's plain path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import (
    _accumulate,
    _activation,
    _attention,
    _batchnorm,
    _complex_special,
    _conv,
    _conv_fast,
    _layernorm,
    _loss,
    _matmul,
    _optim,
    _pool,
    _recurrent,
    _scatter,
    _special,
)
from ._kernels import Kernel

__all__ = ["FAST_PATHS", "install"]

FAST_PATHS: tuple[tuple[Kernel, str, Callable[..., Any]], ...] = (
    # kernel                             library  implementation
    (_accumulate.accumulate,              "numpy", _accumulate._accumulate_numpy),
    (_activation.relu,                    "numpy", _activation._relu_numpy),
    (_activation.relu_grad,               "numpy", _activation._relu_grad_numpy),
    (_activation.relu_grad,               "cupy",  _activation._relu_grad_cupy),
    (_activation.gelu,                    "numpy", _activation._gelu_numpy),
    (_activation.gelu_slope,              "numpy", _activation._gelu_slope_numpy),
    (_activation.sigmoid,                 "numpy", _activation._sigmoid_numpy),
    (_complex_special.expm1,              "numpy", _complex_special._expm1_numpy_like),
    (_complex_special.expm1,              "cupy",  _complex_special._expm1_numpy_like),
    (_complex_special.tanh,               "numpy", _complex_special._tanh_numpy_like),
    (_complex_special.tanh,               "cupy",  _complex_special._tanh_numpy_like),
    (_attention.sdpa_forward,             "numpy", _attention._sdpa_forward_numpy),
    (_attention.sdpa_backward,            "numpy", _attention._sdpa_backward_numpy),
    (_batchnorm.bn_forward,               "numpy", _batchnorm._bn_forward_numpy),
    (_batchnorm.bn_backward,              "numpy", _batchnorm._bn_backward_numpy),
    (_conv.conv_forward,                  "numpy", _conv_fast._conv_forward_fast),
    (_conv.conv_forward,                  "cupy",  _conv_fast._conv_forward_fast),
    (_conv.conv_forward,                  "torch", _conv._conv_forward_torch),
    (_conv.conv_input_grad,               "numpy", _conv_fast._conv_input_grad_fast),
    (_conv.conv_input_grad,               "cupy",  _conv_fast._conv_input_grad_fast),
    (_conv.conv_input_grad,               "torch", _conv._conv_input_grad_torch),
    (_conv.conv_weight_grad,              "numpy", _conv_fast._conv_weight_grad_fast),
    (_conv.conv_weight_grad,              "cupy",  _conv_fast._conv_weight_grad_fast),
    (_conv.conv_weight_grad,              "torch", _conv._conv_weight_grad_torch),
    (_layernorm.ln_forward,               "numpy", _layernorm._ln_forward_numpy),
    (_layernorm.ln_backward,              "numpy", _layernorm._ln_backward_numpy),
    (_loss.softmax_xent,                  "numpy", _loss._softmax_xent_fast),
    (_loss.softmax_xent,                  "cupy",  _loss._softmax_xent_fast),
    (_loss.softmax_xent_grad,             "numpy", _loss._softmax_xent_grad_fast),
    (_loss.softmax_xent_grad,             "cupy",  _loss._softmax_xent_grad_fast),
    (_matmul.matmul,                      "numpy", _matmul._matmul_numpy),
    (_matmul.matmul_bias,                 "numpy", _matmul._matmul_bias_numpy),
    (_matmul.matmul_like,                 "numpy", _matmul._matmul_like_numpy),
    (_matmul.matmul_into,                 "numpy", _matmul._matmul_into_numpy),
    (_recurrent.lstm_recurrence,          "numpy", _recurrent._lstm_recurrence_numpy),
    (_recurrent.lstm_recurrence_grad,     "numpy", _recurrent._lstm_recurrence_grad_numpy),
    (_optim.sgd_update,                   "numpy", _optim._sgd_numpy),
    (_optim.sgd_update,                   "torch", _optim._sgd_torch),
    (_optim.momentum_update,              "numpy", _optim._momentum_numpy),
    (_optim.momentum_update,              "torch", _optim._momentum_torch),
    (_optim.adam_update,                  "numpy", _optim._adam_numpy),
    (_optim.adam_update,                  "torch", _optim._adam_torch),
    (_pool.max_pool_forward,              "numpy", _pool._max_pool_forward_fast),
    (_pool.max_pool_forward,              "cupy",  _pool._max_pool_forward_fast),
    (_pool.max_pool_grad,                 "numpy", _pool._max_pool_grad_fast),
    (_pool.max_pool_grad,                 "cupy",  _pool._max_pool_grad_fast),
    (_scatter.index_add,                  "numpy", _scatter._index_add_numpy),
    (_scatter.index_add,                  "cupy",  _scatter._index_add_cupy),
    (_scatter.index_add,                  "torch", _scatter._index_add_torch),
    (_scatter.index_add,                  "jax",   _scatter._index_add_jax),
    (_special.erf,                        "numpy", _special._erf_numpy),
    (_special.erf,                        "cupy",  _special._erf_cupy),
    (_special.erf,                        "torch", _special._erf_torch),
)


def install() -> None:
    """Attach every fast path of :data:`FAST_PATHS` to its kernel (again: a no-op).

    Examples
    --------
    >>> from portagrad.xp._fastpaths import FAST_PATHS, install
    >>> install()
    >>> all(k.overrides[lib] is fn for k, lib, fn in FAST_PATHS)
    True
    """
    for k, library, fn in FAST_PATHS:
        k.override(library)(fn)
