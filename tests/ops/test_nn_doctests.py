"""The examples in the docstrings of the neural-network functions run and are right."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["portagrad.ops._nn_activation", "portagrad.ops._nn_config",
           "portagrad.ops._nn_connection", "portagrad.ops._nn_conv", "portagrad.ops._nn_loss",
           "portagrad.ops._nn_noise", "portagrad.ops._nn_norm", "portagrad.ops._nn_pool",
           "portagrad.ops._nn_rnn", "portagrad.random", "portagrad.xp._conv", "portagrad.xp._loss",
           "portagrad.xp._special"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
