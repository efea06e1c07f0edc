"""The recursive-network example: labels are right, and a short run beats chance."""

import numpy as np


def test_tree_values_and_shapes(load_example):
    ex = load_example("tree_rnn")
    T = ex.Tree
    tree = T("+", left=T("-", left=T("*", left=T(digit=3), right=T(digit=7)),
                         right=T("+", left=T(digit=4), right=T(digit=9))), right=T(digit=8))
    assert str(tree) == "(((3 * 7) - (4 + 9)) + 8)"
    assert tree.value == (3 * 7 - (4 + 9) + 8) % 10 and tree.depth == 3
    rng = np.random.default_rng(0)
    trees = ex.random_trees(rng, 50, (1, 4))
    assert {t.depth for t in trees} == {1, 2, 3, 4}
    # Every tree gives one node state per node: graphs of different sizes in one batch.
    model = ex.TreeNet(8, 8)
    digits = np.arange(10)
    logits, labels, roots = model(trees[:5], digits)
    sizes = np.diff([-1] + roots)
    assert len(set(sizes.tolist())) > 1 and logits.shape == (sum(sizes), 10)
    assert [labels[r] for r in roots] == [t.value for t in trees[:5]]


def test_tree_rnn_learns(load_example, backend):
    ex = load_example("tree_rnn")
    strict = backend[0] == "array_api_strict"
    size = dict(steps=40, batch_size=16, dim=32, hidden=64, lr=1e-2) if strict else dict(
        steps=80, batch_size=32, dim=64, hidden=128, lr=5e-3)
    r = ex.train(depths=(1, 3), n_test=200, backend_name=backend[0], device=backend[1],
                 log_every=0, **size)
    # Chance is 0.1 (ten values); 200 test trees.
    assert r["initial_accuracy"] < 0.15
    assert r["accuracy"] > (0.2 if strict else 0.45)
    assert np.mean(r["losses"][-5:]) < 0.7 * np.mean(r["losses"][:5])
