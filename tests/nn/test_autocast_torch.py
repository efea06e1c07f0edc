"""pg.amp.autocast against torch.autocast on CPU: for the ops both have, the dtype of the
result from float32 and from float16 inputs is torch's (its lower-precision list, its
float32 list, and the ops on neither that keep their input's dtype), and float32
parameters still get float32 gradients."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
import portagrad.nn.functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional

_T = np.array([0, 1, 2, 3])
_ONES = np.ones((4, 6), np.float32)  # torch.ones' dtype

# name: (torch call, portagrad call), both given x of shape (4, 6)
CASES = {
    "matmul": (lambda x: x @ x.T, lambda x: pg.ops.matmul(x, pg.ops.matrix_transpose(x))),
    "linear": (lambda x: tF.linear(x, x[:3]), lambda x: F.linear(x, x[:3])),
    "conv1d": (lambda x: tF.conv1d(x.reshape(1, 4, 6), x[:2, :3].reshape(2, 1, 3).repeat(
        1, 4, 1)), lambda x: F.conv1d(pg.ops.reshape(x, (1, 4, 6)), pg.ops.concat(
            [pg.ops.reshape(x[:2, :3], (2, 1, 3))] * 4, axis=1))),
    "prelu": (lambda x: tF.prelu(x, x[0, :1]), lambda x: F.prelu(x, x[0, :1])),
    "sdpa": (lambda x: tF.scaled_dot_product_attention(x[None], x[None], x[None]),
             lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None])),
    "einsum": (lambda x: torch.einsum("ij,kj->ik", x, x),
               lambda x: pg.ops.einsum("ij,kj->ik", x, x)),
    "cross_entropy": (lambda x: tF.cross_entropy(x, torch.tensor(_T)),
                      lambda x: F.cross_entropy(x, _T)),
    "nll_loss": (lambda x: tF.nll_loss(x, torch.tensor(_T)), lambda x: F.nll_loss(x, _T)),
    "mse_loss": (lambda x: tF.mse_loss(x, x * 0.5), lambda x: F.mse_loss(x, x * 0.5)),
    "l1_loss": (lambda x: tF.l1_loss(x, x * 0.5), lambda x: F.l1_loss(x, x * 0.5)),
    "smooth_l1_loss": (lambda x: tF.smooth_l1_loss(x, x * 0.5),
                       lambda x: F.smooth_l1_loss(x, x * 0.5)),
    "huber_loss": (lambda x: tF.huber_loss(x, x * 0.5), lambda x: F.huber_loss(x, x * 0.5)),
    "binary_cross_entropy_with_logits": (
        lambda x: tF.binary_cross_entropy_with_logits(x, torch.sigmoid(x)),
        lambda x: F.binary_cross_entropy_with_logits(x, pg.ops.sigmoid(x))),
    "kl_div": (lambda x: tF.kl_div(x, x * 0.5, reduction="batchmean"),
               lambda x: F.kl_div(x, x * 0.5, reduction="batchmean")),
    "margin_ranking_loss": (lambda x: tF.margin_ranking_loss(x, x * 0.5, torch.ones(4, 6)),
                            lambda x: F.margin_ranking_loss(x, x * 0.5, _ONES)),
    "soft_margin_loss": (lambda x: tF.soft_margin_loss(x, torch.ones(4, 6)),
                         lambda x: F.soft_margin_loss(x, _ONES)),
    "multi_margin_loss": (lambda x: tF.multi_margin_loss(x, torch.tensor(_T)),
                          lambda x: F.multi_margin_loss(x, _T)),
    "hinge_embedding_loss": (lambda x: tF.hinge_embedding_loss(x, torch.ones(4, 6)),
                             lambda x: F.hinge_embedding_loss(x, _ONES)),
    "cosine_embedding_loss": (lambda x: tF.cosine_embedding_loss(x, x * 0.5, torch.ones(4)),
                              lambda x: F.cosine_embedding_loss(x, x * 0.5, _ONES[:, 0])),
    "triplet_margin_loss": (lambda x: tF.triplet_margin_loss(x, x * 0.5, x * 0.2),
                            lambda x: F.triplet_margin_loss(x, x * 0.5, x * 0.2)),
    "poisson_nll_loss": (lambda x: tF.poisson_nll_loss(x, x * 0.5),
                         lambda x: F.poisson_nll_loss(x, x * 0.5)),
    "prod": (lambda x: x.prod(), lambda x: pg.ops.prod(x)),
    "max_pool3d": (lambda x: tF.max_pool3d(x.reshape(1, 1, 2, 3, 4), 1),
                   lambda x: F.max_pool3d(pg.ops.reshape(x, (1, 1, 2, 3, 4)), 1)),
    "avg_pool3d": (lambda x: tF.avg_pool3d(x.reshape(1, 1, 2, 3, 4), 1),
                   lambda x: F.avg_pool3d(pg.ops.reshape(x, (1, 1, 2, 3, 4)), 1)),
    "fractional_max_pool2d": (
        lambda x: tF.fractional_max_pool2d(x.reshape(1, 1, 4, 6), 2, output_size=2),
        lambda x: F.fractional_max_pool2d(pg.ops.reshape(x, (1, 1, 4, 6)), 2, 2)),
    "inverse": (lambda x: torch.linalg.inv(x[:, :4] + 4 * torch.eye(4, dtype=x.dtype)),
                lambda x: pg.ops.linalg.inv(x[:, :4] + np.eye(4, dtype=x.dtype) * 4)),
    "qr": (lambda x: torch.linalg.qr(x)[0], lambda x: pg.ops.linalg.qr(x)[0]),
    # On neither CPU list: the input's dtype.
    "softmax": (lambda x: tF.softmax(x, -1), lambda x: F.softmax(x, -1)),
    "log_softmax": (lambda x: tF.log_softmax(x, -1), lambda x: F.log_softmax(x, -1)),
    "layer_norm": (lambda x: tF.layer_norm(x, (6,)), lambda x: F.layer_norm(x, (6,))),
    "sum": (lambda x: x.sum(), lambda x: pg.ops.sum(x)),
    "relu": (lambda x: tF.relu(x), lambda x: F.relu(x)),
    "tanh": (lambda x: torch.tanh(x), lambda x: F.tanh(x)),
}


def _name(dt) -> str:
    return str(dt).removeprefix("torch.")


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_result_dtype_is_torchs(name, dtype, rng):
    theirs, ours = CASES[name]
    x = rng.uniform(0.1, 1.0, size=(4, 6)).astype(dtype)
    with torch.autocast("cpu", dtype=torch.float16):
        want = _name(theirs(torch.tensor(x)).dtype)
    with pg.amp.autocast("cpu", dtype="float16"):
        got = _name(ours(pg.Variable(x)).dtype)
    assert got == want


def test_float32_parameters_get_float32_gradients_through_both_lists(rng):
    lin = pg.nn.Linear(6, 4)
    x = rng.normal(size=(5, 6)).astype(np.float32)
    with pg.amp.autocast("cpu", dtype="float16"):
        logits = lin(x)
        loss = F.cross_entropy(logits, np.array([0, 1, 2, 3, 0]))
    assert logits.dtype == np.float16 and loss.dtype == np.float32
    loss.backward()
    assert lin.weight.grad.dtype == np.float32
    # Outside the block nothing is cast.
    assert F.mse_loss(pg.Variable(x.astype(np.float16)), x.astype(np.float16)).dtype == \
        np.float16


def test_nested_disabled_block_casts_nothing(rng):
    x = pg.Variable(rng.normal(size=(3, 3)).astype(np.float16))
    with pg.amp.autocast("cpu", dtype="float16"):
        with pg.amp.autocast("cpu", enabled=False):
            assert F.mse_loss(x, x * 0.5).dtype == np.float16
        assert F.mse_loss(x, x * 0.5).dtype == np.float32
