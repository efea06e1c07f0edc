"""L-BFGS with an optional strong-Wolfe line search (``torch.optim.LBFGS``'s algorithm,
after minFunc): the parameters are handled as one flat vector."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError
from ..tape._mode import set_grad_enabled
from ._optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_min(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
               bounds: tuple[float, float] | None = None) -> float:
    """Minimiser of the cubic through two points with their slopes, clipped to
    ``bounds`` (default: the interval between the points); the midpoint when the cubic
    has no real minimiser."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3.0 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2.0 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2.0 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate: Callable, xp: Any, t: float, d: Any, f: float, g: Any, gtd: float,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Any, float, int]:
    """Step ``t`` along ``d`` meeting the strong Wolfe conditions: bracket, then zoom by
    cubic interpolation. Returns ``(f, g, t, evaluations)``."""
    d_norm = float(xp.max(xp.abs(d)))
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = float(xp.vecdot(g_new, d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    it = 0
    bracket: list[float] = []
    bf: list[float] = []
    bg: list[Any] = []
    bgtd: list[float] = []
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        # Extrapolate between 1.01 t and 10 t.
        lo, hi = t + 0.01 * (t - t_prev), t * 10.0
        t_old = t
        t = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        t_prev, f_prev, g_prev, gtd_prev = t_old, f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(xp.vecdot(g_new, d))
        it += 1
    if it == max_ls:
        bracket, bf, bg = [0.0, t], [f, f_new], [g, g_new]
    insufficient = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        # Keep away from the ends of the bracket unless progress stalled.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(xp.vecdot(g_new, d))
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = \
                    bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals


class LBFGS(Optimizer):
    """Limited-memory BFGS (``torch.optim.LBFGS``); ``step(closure)`` runs up to
    ``max_iter`` iterations, re-evaluating the loss with ``closure``.

    One parameter group only (as torch). The state (directions, steps, curvature
    history) lives in ``state[first parameter]``, as in torch.

    Parameters
    ----------
    params
        Parameters.
    lr, max_iter, max_eval, tolerance_grad, tolerance_change, history_size
        As ``torch.optim.LBFGS`` (``max_eval`` default ``max_iter * 5 // 4``).
    line_search_fn
        ``None`` (fixed step ``lr``) or ``"strong_wolfe"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.nn.Parameter(np.array([3.0, -2.0]))
    >>> opt = pg.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> x.array.round(6)
    array([1., 1.])
    """

    def __init__(self, params: Any, lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if lr < 0:
            raise PortagradValueError(f"LBFGS: invalid learning rate {lr!r}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise PortagradValueError(f"LBFGS(line_search_fn={line_search_fn!r}): expected "
                                      f"None or 'strong_wolfe'")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise PortagradValueError("LBFGS: one parameter group only (per-group options "
                                      "are not supported)")
        self._params = self.param_groups[0]["params"]

    def _xp(self) -> Any:
        return self._params[0].xp

    def _flat_grad(self) -> Any:
        xp = self._xp()
        parts = []
        for p in self._params:
            g = p.grad_var
            parts.append(xp.zeros(math.prod(p.array.shape), dtype=p.array.dtype,
                                  device=p.array.device) if g is None
                         else xp.reshape(g.array, (-1,)))
        return xp.concat(parts)

    def _add(self, step: float, d: Any) -> None:
        xp = self._xp()
        offset = 0
        for p in self._params:
            n = math.prod(p.array.shape)
            p.array = p.array + step * xp.reshape(d[offset:offset + n], p.array.shape)
            offset += n

    def _evaluate(self, closure: Callable, x: list, t: float, d: Any) -> tuple[float, Any]:
        self._add(t, d)
        with set_grad_enabled(True):
            loss = float(closure())
        g = self._flat_grad()
        for p, v in zip(self._params, x, strict=True):
            p.array = v
        return loss, g

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # noqa: C901
        """Run up to ``max_iter`` L-BFGS iterations; returns the first loss.

        Parameters
        ----------
        closure
            Required: zeroes the gradients, computes the loss, calls backward and returns
            the loss.
        """
        if closure is None:
            raise PortagradTypeError("LBFGS.step(closure): expected a closure that "
                                     "recomputes the loss (LBFGS evaluates it several times)")
        if self.hooks or self.loss_scaler is not None:
            raise PortagradValueError("LBFGS.step: gradient hooks and loss scaling are not "
                                      "applied by LBFGS; remove them")
        for h in list(self._step_pre_hooks.values()):
            h(self, (closure,), {})
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with set_grad_enabled(True):
            orig_loss = closure()
        xp = self._xp()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(xp.max(xp.abs(flat_grad))) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        with set_grad_enabled(False):
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_stps, ro = [], [], []
                    h_diag = 1.0
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = float(xp.vecdot(y, s))
                    if ys > 1e-10:
                        if len(old_dirs) == history:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / float(xp.vecdot(y, y))
                    # Two-loop recursion: d = -H g with the stored curvature pairs.
                    al = [0.0] * len(old_dirs)
                    q = -flat_grad
                    for i in range(len(old_dirs) - 1, -1, -1):
                        al[i] = float(xp.vecdot(old_stps[i], q)) * ro[i]
                        q = q - al[i] * old_dirs[i]
                    r = q * h_diag
                    for i in range(len(old_dirs)):
                        be_i = float(xp.vecdot(old_dirs[i], r)) * ro[i]
                        r = r + (al[i] - be_i) * old_stps[i]
                    d = r
                prev_flat_grad = xp.asarray(flat_grad, copy=True)
                prev_loss = loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / float(xp.sum(xp.abs(flat_grad)))) * lr
                else:
                    t = lr
                gtd = float(xp.vecdot(flat_grad, d))
                if gtd > -tol_change:
                    break
                ls_evals = 0
                if group["line_search_fn"] == "strong_wolfe":
                    x0 = [xp.asarray(p.array, copy=True) for p in self._params]
                    loss, flat_grad, t, ls_evals = _strong_wolfe(
                        lambda step, x0=x0, d=d: self._evaluate(closure, x0, step, d), xp, t, d,
                        loss, flat_grad, gtd, max_ls=max_eval - evals)
                    self._add(t, d)
                    opt_cond = float(xp.max(xp.abs(flat_grad))) <= tol_grad
                else:
                    self._add(t, d)
                    opt_cond = False
                    if n_iter != max_iter:
                        with set_grad_enabled(True):
                            loss = float(closure())
                        flat_grad = self._flat_grad()
                        opt_cond = float(xp.max(xp.abs(flat_grad))) <= tol_grad
                        ls_evals = 1
                evals += ls_evals
                state["func_evals"] += ls_evals
                if n_iter == max_iter or evals >= max_eval or opt_cond:
                    break
                if float(xp.max(xp.abs(d * t))) <= tol_change:
                    break
                if abs(loss - prev_loss) < tol_change:
                    break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        self._steps_taken += 1
        for h in list(self._step_post_hooks.values()):
            h(self, (closure,), {})
        return orig_loss
