"""The tensor methods a PyTorch training loop calls on Variables, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]])


def _pair():
    return pg.Variable(X.copy()), torch.tensor(X, requires_grad=True)


@pytest.mark.parametrize("call", [
    lambda v: v.argmax(), lambda v: v.argmax(1), lambda v: v.argmax(dim=0, keepdim=True),
    lambda v: v.argmin(1), lambda v: v.argmin(),
])
def test_index_methods(call):
    v, t = _pair()
    assert call(v).tolist() == call(t).tolist()


@pytest.mark.parametrize("call", [
    lambda v: v.view(3, 2), lambda v: v.view(-1), lambda v: v.view((1, 6)),
    lambda v: v.flatten(), lambda v: v.unsqueeze(1).flatten(1),
    lambda v: v.unsqueeze(0).unsqueeze(-1), lambda v: v.unsqueeze(0).squeeze(),
    lambda v: v.unsqueeze(0).squeeze(0), lambda v: v.unsqueeze(0).squeeze(1),
    lambda v: v.permute(1, 0), lambda v: v.t(), lambda v: v.clone(),
    lambda v: v.exp(), lambda v: v.abs().log(), lambda v: v.abs().sqrt(), lambda v: v.tanh(),
    lambda v: v.sigmoid(), lambda v: v.relu(), lambda v: v.softmax(1),
    lambda v: v.log_softmax(dim=0), lambda v: v.clamp(-1.0, 1.0), lambda v: v.clamp(min=0.0),
    lambda v: v.norm().reshape(1), lambda v: v.norm(1, dim=1), lambda v: v.double(),
])
def test_differentiable_methods_values_and_gradients(call):
    v, t = _pair()
    ours, theirs = call(v), call(t)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.array, theirs.detach().numpy(), rtol=1e-12)
    w = np.linspace(-1.0, 1.0, ours.size).reshape(ours.shape)
    (ours * w).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(v.grad, t.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_size_numel_dim_item_tolist_casts():
    v, t = _pair()
    assert v.size() == tuple(t.size()) and v.size(-1) == t.size(-1) and v.size == 6
    assert v.numel() == t.numel() and v.dim() == t.dim()
    with pytest.raises(pg.ShapeError):
        v.size(2)
    assert (v.sum()).item() == pytest.approx(t.sum().item())
    assert v.tolist() == t.tolist()
    for name, dtype in (("float", np.float32), ("half", np.float16), ("long", np.int64),
                        ("int", np.int32), ("bool", np.bool_), ("double", np.float64)):
        assert getattr(v, name)().dtype == dtype
    assert v.float().requires_grad and not v.long().requires_grad


def test_accuracy_the_way_a_loop_writes_it():
    logits = pg.Variable(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]))
    labels = np.array([1, 1, 1])
    correct = (logits.argmax(1) == pg.Variable(labels)).sum().item()
    assert correct == 2
