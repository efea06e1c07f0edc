"""Collectives, dataset scattering, metrics, multi-node batch norm, gradient accumulation
and checkpoints on two ranks, against single-process references."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import portagrad as pg

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def features(mpirun, tmp_path_factory):
    out = tmp_path_factory.mktemp("features")
    job = mpirun("features.py", 2, str(out), timeout=90)
    assert job.returncode == 0, job.output
    return dict(np.load(out / "features.npz"))


SPACES = ["numpy", "array_api_strict"] + (["torch"] if importlib.util.find_spec("torch") else [])


@pytest.mark.parametrize("space", SPACES)
def test_collectives_on_every_namespace(features, space):
    base = np.arange(6.0).reshape(2, 3)
    per_rank = [base * 1, base * 2]
    for rank in range(2):  # [rank] = what that rank received
        np.testing.assert_array_equal(features[f"{space}/sum"][rank], base * 3)
        np.testing.assert_array_equal(features[f"{space}/mean"][rank], base * 1.5)
        np.testing.assert_array_equal(features[f"{space}/max"][rank], [1, 0])
        np.testing.assert_array_equal(features[f"{space}/bcast"][rank], per_rank[1])
        np.testing.assert_array_equal(features[f"{space}/allgather"][rank], per_rank)
        np.testing.assert_array_equal(features[f"{space}/scatter"][rank],
                                      [2.0 * rank, 2.0 * rank + 1])
    np.testing.assert_array_equal(features["bcast_none"], [base * 7, base * 7])
    np.testing.assert_array_equal(features["scatter_none"], [0, 1])


def test_scatter_dataset_splits_indices_of_the_root_order(features):
    order = np.random.default_rng(3).permutation(11)
    padded = np.concatenate([order, order[:1]])  # 6 per rank
    np.testing.assert_array_equal(features["scatter_dataset"], padded.reshape(2, 6) * 10)
    np.testing.assert_array_equal(features["scatter_uneven_len"].ravel(), [5, 6])


def test_metrics_are_weighted_means_over_ranks(features):
    assert features["metrics"] == pytest.approx((1 * 1 + 2 * 2) / 3)
    assert features["evaluator"] == pytest.approx(0.5)


def test_multi_node_batch_norm_equals_batch_norm_of_the_whole_batch(features):
    g = np.random.default_rng(0)
    X, W = g.normal(size=(8, 3, 2)), g.normal(size=(8, 3, 2))
    gamma0, beta0 = g.normal(size=3), g.normal(size=3)
    # One process, the whole batch, the textbook formula (no parallel code).
    x, gamma, beta = pg.Variable(X), pg.Variable(gamma0), pg.Variable(beta0)
    mean = pg.ops.mean(x, axis=(0, 2), keepdims=True)
    var = pg.ops.mean((x - mean) ** 2, axis=(0, 2), keepdims=True)
    y = (x - mean) / pg.ops.sqrt(var + 2e-5) * gamma[:, None] + beta[:, None]
    (y * W).sum().backward()
    np.testing.assert_allclose(features["bn/y"].reshape(8, 3, 2), y.array, rtol=1e-12)
    np.testing.assert_allclose(features["bn/gx"].reshape(8, 3, 2), x.grad, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(features["bn/ggamma"], gamma.grad, rtol=1e-12)
    np.testing.assert_allclose(features["bn/gbeta"], beta.grad, rtol=1e-12)


def test_no_sync_accumulates_locally_and_unused_parameters_still_agree(features):
    # Rank r: (r + 1) * sum(w) inside no_sync, then sum(w * w) (+ 3 * sum(u) on rank 0).
    w = np.array([1.0, 2.0])
    np.testing.assert_allclose(features["no_sync/w"], 1.5 + 2 * w)
    np.testing.assert_allclose(features["no_sync/u"], [1.5])
    if "torch/grad" in features:
        np.testing.assert_allclose(features["torch/grad"], [1.5, 1.5])


def test_checkpoints_resume_every_rank_from_the_same_intact_step(features):
    assert int(features["ckpt/step"]) == 3  # step 5's file was damaged on purpose
    np.testing.assert_array_equal(features["ckpt/W_equal"], [0.0, 0.0])
    np.testing.assert_array_equal(features["ckpt/v_equal"], [0.0, 0.0])
    np.testing.assert_array_equal(features["ckpt/t"], [3, 3])
    np.testing.assert_array_equal(features["ckpt/kept"], [3, 5])  # keep=2


@pytest.mark.parametrize("case", ["mixed", "transposed"])
def test_gradients_in_any_memory_layout_are_averaged_exactly(features, case):
    base = np.arange(12.0).reshape(3, 4)
    expected = [base * 1.5 + step for step in range(3)]
    np.testing.assert_array_equal(features[f"layout/{case}"], expected)
    # Stored transposed only where every rank's gradient arrived transposed.
    assert bool(features[f"layout/{case}/stored_transposed"]) == (case == "transposed")


def test_multi_node_batch_norm_module_equals_batch_norm_of_the_whole_batch(features):
    g = np.random.default_rng(0)
    X, W = g.normal(size=(8, 3, 2)), g.normal(size=(8, 3, 2))
    bn = pg.nn.BatchNorm1d(3, dtype=np.float64)
    for step in range(2):
        x = pg.Variable(X + step)
        y = bn(x)
        (y * W).sum().backward()
        np.testing.assert_allclose(features[f"bnmod/y{step}"].reshape(8, 3, 2), y.array,
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(features[f"bnmod/gx{step}"].reshape(8, 3, 2), x.grad,
                                   rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(features["bnmod/ggamma"], bn.weight.grad, rtol=1e-10)
    np.testing.assert_allclose(features["bnmod/running"],
                               np.stack([bn.running_mean, bn.running_var]), rtol=1e-12)
    bn.eval()
    np.testing.assert_allclose(features["bnmod/eval"], bn(X[:2]).array, rtol=1e-12)
