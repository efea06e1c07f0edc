"""Make the reference outputs of ``chainer.utils.type_check`` (and of the ``chainer.utils``
helpers) by running Chainer 7.8.1 itself.

Run it with the interpreter of the Chainer 7.8.1 environment described in
``make_chainer_fixtures_distributions.py`` (it imports nothing of portagrad)::

    v/bin/python scripts/make_chainer_fixtures_type_check.py

It writes ``tests/chainer/fixtures/core/type_check.json``: the shared ``prelude`` (the
user functions whose ``check_type_forward`` the cases call) and, for each case, its code
(one expression) and what Chainer gives for it: ``repr`` of the value, or the exception's
type and message. The test runs the same prelude and code under ``portagrad.chainer``
and compares.
"""

import json
import os

import chainer
import numpy
from chainer.utils import argument, type_check

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "chainer",
                   "fixtures", "core", "type_check.json")

PRELUDE = '''
f32 = numpy.float32


class Linearish(chainer.FunctionNode):
    def check_type_forward(self, in_types):
        type_check._argname(in_types, ('x', 'w'))
        x_type, w_type = in_types
        type_check.expect(in_types.size() == 2, x_type.dtype == numpy.float32,
                          x_type.ndim >= 2, x_type.shape[1] == w_type.shape[1])

    def forward(self, inputs):
        return inputs[0] + 0,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0], None


class OldStyle(chainer.Function):
    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 1)
        x_type, = in_types
        type_check.expect(x_type.dtype.kind == 'f',
                          x_type.shape[0] * 2 + 1 > 7 - x_type.ndim)

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * 2,


class Shaped(chainer.FunctionNode):
    def check_type_forward(self, in_types):
        x_type, = in_types
        type_check.expect(x_type.shape == (2, 3),
                          type_check.prod(x_type.shape[1:]) == 3,
                          x_type.size < type_check.eval(x_type.shape[0]) * 4)

    def forward(self, inputs):
        return inputs[0] * 1,


class Labelled(chainer.FunctionNode):
    @property
    def label(self):
        return 'MyLabel'

    def check_type_forward(self, in_types):
        type_check.expect(in_types[0].ndim == 1)

    def forward(self, inputs):
        return inputs[0] * 1,


def call(f):
    """The output shape of ``f()`` (a tuple of Variables or one Variable)."""
    out = f()
    out = out if isinstance(out, tuple) else (out,)
    return [tuple(y.shape) for y in out]


def parsed(**kwargs):
    return argument.parse_kwargs(kwargs, ('a', 1), ('b', None), train='train was removed')


x = type_check.Variable(1, 'x')
y = type_check.Variable(2, 'y')
'''

CASES = [
    # check_type_forward of a FunctionNode: passing, each condition failing, a light
    # check that raises outside type_check (an IndexError), and _argname's count.
    "call(lambda: Linearish().apply((numpy.ones((2, 3), f32), numpy.ones((4, 3), f32))))",
    "call(lambda: Linearish().apply((numpy.ones((2, 3)), numpy.ones((4, 3), f32))))",
    "call(lambda: Linearish().apply((numpy.ones((2, 3), f32), numpy.ones((3, 4), f32))))",
    "call(lambda: Linearish().apply((numpy.ones((2, 3, 2), f32), numpy.ones((4, 3), f32))))",
    "call(lambda: Linearish().apply((numpy.ones((3,), f32), numpy.ones((3, 4), f32))))",
    "call(lambda: Linearish().apply((numpy.ones((3, 3), f32),)))",
    "call(lambda: Linearish().apply((numpy.ones((2,), f32), numpy.ones((3,), f32), "
    "numpy.ones(1))))",
    # An old-style Function: its own class name in the message, in_types[i] names.
    "call(lambda: OldStyle()(numpy.ones((4,), f32)))",
    "call(lambda: OldStyle()(numpy.ones((4,), numpy.int32)))",
    "call(lambda: OldStyle()(numpy.ones((2,), f32)))",
    "call(lambda: OldStyle()(numpy.ones((4,), f32), numpy.ones((4,), f32)))",
    # Tuples, prod, eval inside a check; a label property.
    "call(lambda: Shaped().apply((numpy.ones((2, 3), f32),)))",
    "call(lambda: Shaped().apply((numpy.ones((2, 4), f32),)))",
    "call(lambda: Labelled().apply((numpy.ones((2, 4), f32),)))",
    # config.type_check = False skips the check.
    "chainer.config.__setattr__('type_check', False) or call(lambda: "
    "Shaped().apply((numpy.ones((5,), f32),)))",
    "chainer.config.__delattr__('type_check') or chainer.config.type_check",
    # The text of expressions: parentheses by priority and associativity.
    "[str(e) for e in (x + y * 3, (x + y) * 3, x - (y - 1), x - y - 1, -x, -(x + y), "
    "+x, ~(x | y), x ** y ** 2, (x ** y) ** 2, x << y << 1, x << (y << 1), x | y & 1, "
    "(x | y) & 1, x // y % 3, x / (y * 2), 3 - x, 2 * x, 1 + x, 1 / x)]",
    "[str(e) for e in (x.shape[1:3], x.shape[::2], x.shape[:-1], x.shape[..., 0], "
    "x.foo(1, 'a'), x[(1,)], x[()], x[1, 2:], getattr(x, 'dtype'), x.shape == (2,), "
    "type_check.prod(x.shape), type_check.Constant((1,)), type_check.Constant([1, 'a']), "
    "x != y, x <= y, x > 0, x >= y - 1)]",
    "[e.eval() for e in (x + y * 3, x - y - 1, x // y, x % y, -y, x << y, y >> x, "
    "x | y, x & y, x ^ y, x < y, x == 1, 3 - y, 6 / y, type_check.prod([y, y, 3]))]",
    "bool(x == y)",
    "type_check.expect(x + 1 > y * 3)",
    "type_check.expect(x == 1, y == 2, x - y < 0)",
    "type_check.expect(x.real == y)",
    "type_check.eval(x * y + 1)",
    "type_check.make_variable(3, 'n').name",
    # The exception itself.
    "str(type_check.InvalidType('a == b', '1 != 2'))",
    "[type_check.InvalidType('a', 'b').expect, type_check.InvalidType('a', 'b').actual]",
    "str(pickle.loads(pickle.dumps(type_check.InvalidType('a', 'b'))))",
    "str(type_check.InvalidType('a', 'b', 'custom'))",
    "type_check._argname((1, 2), ('a',))",
    "type_check.expect_broadcast_shapes(type_check.Variable((2, 3), 'a'), "
    "type_check.Variable((1, 3), 'b'))",
    "type_check.expect_broadcast_shapes(type_check.Variable((2, 3), 'a'), "
    "type_check.Variable((4,), 'b'))",
    "[type_check.same_types(numpy.ones(1), numpy.ones(2)), type_check.same_types()]",
    # chainer.utils helpers.
    "[repr(chainer.utils.force_array(numpy.float32(3))), "
    "repr(chainer.utils.force_array(3.0, numpy.float32)), "
    "repr(chainer.utils.force_array(numpy.ones(2, numpy.int32), numpy.float64))]",
    "[type(chainer.utils.force_type(numpy.dtype('float32'), 3.0)).__name__, "
    "repr(chainer.utils.force_type(numpy.dtype('float32'), numpy.ones(2)))]",
    "[chainer.utils.get_conv_outsize(s, k, st, p, c, d) for s in (7, 10) for k in (1, 3) "
    "for st in (1, 2) for p in (0, 1) for c in (False, True) for d in (1, 2)]",
    "[chainer.utils.get_deconv_outsize(s, k, st, p, c, d) for s in (3, 5) for k in (1, 3) "
    "for st in (1, 2) for p in (0, 1) for c in (False, True) for d in (1, 2)]",
    "[chainer.utils.size_of_shape((2, 3)), chainer.utils.size_of_shape(())]",
    "chainer.utils.sum_to(numpy.arange(24.0).reshape(2, 3, 4), (3, 1)).tolist()",
    "chainer.utils.sum_to(chainer.Variable(numpy.ones((2, 3))), (3,))",
    "[parsed(), parsed(a=3), parsed(b=4, a=5)]",
    "parsed(c=1, d=2)",
    "parsed(train=True)",
    "argument.check_unexpected_kwargs({'train': 1}, train='no train')",
    "sorted(collections.Counter(chainer.utils.WalkerAlias([0.1, 0.0, 0.9])"
    ".sample((400,)).tolist()))",
]


def outcome(code, env):
    try:
        return {"value": repr(eval(code, env))}
    except Exception as e:  # noqa: BLE001 - recording what Chainer raises
        return {"error": type(e).__name__, "message": str(e)}


def main():
    env = {"chainer": chainer, "numpy": numpy, "type_check": type_check,
           "argument": argument, "pickle": __import__("pickle"),
           "collections": __import__("collections")}
    exec(PRELUDE, env)
    cases = [{"code": code, **outcome(code, env)} for code in CASES]
    with open(OUT, "w") as f:
        json.dump({"chainer": chainer.__version__, "prelude": PRELUDE, "cases": cases}, f,
                  indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
