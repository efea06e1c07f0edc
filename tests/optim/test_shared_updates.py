"""One implementation per update rule: the gradient methods that PyTorch's and Chainer's
faces both have run the one update of ``portagrad.optim._updates``, and neither face's
rule computes that update itself."""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np
import pytest

import portagrad as pg
from portagrad.chainer import optimizers as C
from portagrad.chainer.variable import Parameter
from portagrad.optim import _rules as torch_rules
from portagrad.optim import _updates

# (face, optimizer, constructor options) -> the shared update it must run.
SHARED = [
    ("torch", "SGD", {"lr": 0.1, "momentum": 0.9}, "momentum_step"),
    ("torch", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}, "momentum_step"),
    ("torch", "Adam", {}, "adam"),
    ("torch", "AdamW", {}, "adam"),
    ("torch", "Adam", {"amsgrad": True}, "adam"),
    ("torch", "SparseAdam", {}, "adam"),
    ("torch", "Adagrad", {"lr_decay": 0.1}, "adagrad"),
    ("torch", "Adadelta", {}, "adadelta"),
    ("torch", "RMSprop", {}, "rmsprop"),
    ("torch", "RMSprop", {"centered": True, "momentum": 0.5}, "rmsprop"),
    ("chainer", "MomentumSGD", {}, "momentum_step"),
    ("chainer", "CorrectedMomentumSGD", {}, "momentum_step"),
    ("chainer", "NesterovAG", {}, "momentum_step"),
    ("chainer", "AdaGrad", {}, "adagrad"),
    ("chainer", "AdaDelta", {}, "adadelta"),
    ("chainer", "RMSprop", {}, "rmsprop"),
    ("chainer", "RMSpropGraves", {}, "rmsprop"),
    ("chainer", "Adam", {}, "adam"),
    ("chainer", "AdamW", {"weight_decay_rate": 0.1}, "adam"),
    ("chainer", "AMSGrad", {}, "adam"),
    ("chainer", "AdaBound", {}, "adam"),
    ("chainer", "AMSBound", {}, "adam"),
]

# Methods one library has and the other has not: their maths lives in their face.
FACE_ONLY = {
    "torch": {"Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor", "Muon", "Lion"},
    "chainer": {"SMORMS3", "MSVAG"},
}
# Plain SGD is the xp kernel ``sgd_update`` in both faces.
KERNEL_ONLY = {"torch": {"SGD"}, "chainer": {"SGD"}}


def _step(face: str, name: str, opts: dict) -> None:
    w = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = np.cos(np.arange(6.0)).reshape(2, 3)
    if face == "torch":
        p = pg.nn.Parameter(w.copy())
        opt = getattr(pg.optim, name)([p], **opts)
        p.grad = g
        opt.step()
        return

    class Holder:
        def __init__(self) -> None:
            self.W = Parameter(w.copy(), name="W")

        def params(self, include_uninit: bool = True):
            yield self.W

        def namedparams(self, include_uninit: bool = True):
            yield "/W", self.W

    model = Holder()
    opt = getattr(C, name)(**opts).setup(model)
    model.W.grad = g
    opt.update()


@pytest.mark.parametrize(("face", "name", "opts", "update"), SHARED,
                         ids=[f"{c[0]}.{c[1]}-{c[3]}-{i}" for i, c in enumerate(SHARED)])
def test_the_shared_update_runs(monkeypatch, face, name, opts, update):
    calls = []
    real = getattr(_updates, update)

    def counting(*args, **kwargs):
        calls.append(update)
        return real(*args, **kwargs)

    monkeypatch.setattr(_updates, update, counting)
    _step(face, name, opts)
    assert calls, f"{face} {name}({opts}) did not run portagrad.optim._updates.{update}"


def _methods(face: str) -> dict[str, type]:
    """Each public optimizer of a face -> the class whose method runs its update."""
    if face == "torch":
        return {n: next(c for c in getattr(torch_rules, n).__mro__ if "_update" in vars(c))
                for n in torch_rules.__all__
                if issubclass(getattr(torch_rules, n), pg.optim.Optimizer)}
    return {n: type(getattr(C, n)().create_update_rule()) for n in C.__all__}


def test_every_method_is_declared_shared_or_face_only():
    for face in ("torch", "chainer"):
        declared = ({c[1] for c in SHARED if c[0] == face} | FACE_ONLY[face]
                    | KERNEL_ONLY[face])
        names = set(_methods(face))
        assert names == declared, (
            f"{face}: methods not declared shared or face-only: {sorted(names - declared)}; "
            f"declared but absent: {sorted(declared - names)}")


_MATHS = {"sqrt", "maximum", "minimum", "clip", "sign", "abs", "exp", "where"}


def _update_method(cls: type) -> str:
    fn = vars(cls).get("update_core") or vars(cls)["_update"]
    return textwrap.dedent(inspect.getsource(fn))


@pytest.mark.parametrize("face", ["torch", "chainer"])
def test_shared_rules_do_not_compute_the_update_themselves(face):
    """The rules of the shared methods hand their arrays to ``_updates``: no element-wise
    maths of their own (a second copy of an update would need some)."""
    shared = {c[1] for c in SHARED if c[0] == face} | KERNEL_ONLY[face]
    bad = []
    for name, cls in _methods(face).items():
        if name not in shared:
            continue
        for node in ast.walk(ast.parse(_update_method(cls))):
            if isinstance(node, ast.Attribute) and node.attr in _MATHS:
                bad.append(f"{name}: {node.attr}")
            if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(
                    node.op, ast.Mult | ast.Div | ast.Pow) and _touches_state(node):
                bad.append(f"{name}: {ast.unparse(node)}")
    assert not bad, f"{face} rules computing their own update: {bad}"


def _touches_state(node: ast.AST) -> bool:
    """An arithmetic node that reads an array (a gradient, a parameter or a state entry),
    not only hyperparameters."""
    arrays = {"g", "grad", "st", "state", "p", "param", "a", "buf", "m", "v", "sq"}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in arrays:
            return True
        if isinstance(sub, ast.Subscript):
            return True
    return False
