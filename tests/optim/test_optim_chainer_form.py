"""Chainer's way of building an optimizer: rule first, parameters through setup()."""

import numpy as np
import pytest

import portagrad as pg


@pytest.mark.parametrize("rule", [pg.optim.SGD, pg.optim.MomentumSGD, pg.optim.Adam,
                                  pg.optim.AdamW, pg.optim.RMSprop, pg.optim.AdaGrad,
                                  pg.optim.AdaDelta, pg.optim.Lion, pg.optim.Nesterov])
def test_setup_later_equals_params_first(rule):
    results = []
    for chainer_form in (False, True):
        pg.random.seed(0)
        model = pg.nn.Linear(3, 2)
        opt = rule(lr=0.05).setup(model) if chainer_form else rule(model, lr=0.05)
        x = np.linspace(-1, 1, 12).reshape(4, 3)
        for _ in range(3):
            model.cleargrads()
            pg.ops.sum(model(x) ** 2).backward()
            opt.step()
        results.append([p.array.copy() for p in model.parameters()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_step_without_parameters_and_a_number_for_params_are_explained():
    with pytest.raises(ValueError, match=r"SGD.step\(\): expected parameters, got none"):
        pg.optim.SGD(lr=0.1).step()
    with pytest.raises(TypeError, match=r"SGD\(lr=0.1\).setup\(model\)"):
        pg.optim.SGD(0.1)
