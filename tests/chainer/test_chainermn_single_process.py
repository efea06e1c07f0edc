"""ChainerMN's collective functions on one rank (no mpiexec): their gradients, first and
second order, by Chainer's gradient_check; the communicator's names and errors."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import portagrad.chainermn as chainermn  # noqa: E402
from portagrad.chainer import functions as F  # noqa: E402
from portagrad.chainer import gradient_check  # noqa: E402


@pytest.fixture(scope="module")
def comm():
    c = chainermn.create_communicator("naive")
    assert c.size == 1
    return c


def test_collectives_have_gradients_of_two_orders(comm):
    x = np.random.RandomState(0).randn(2, 3)
    gy = np.random.RandomState(1).randn(2, 3)
    ggx = np.random.RandomState(2).randn(2, 3)
    fns = {
        "bcast": lambda v: chainermn.functions.bcast(comm, v) * v,
        "allgather": lambda v: chainermn.functions.allgather(comm, v)[0] * v,
        "alltoall": lambda v: chainermn.functions.alltoall(comm, [v])[0] * v,
        "scatter": lambda v: chainermn.functions.scatter(comm, [v]) * v,
    }
    for name, f in fns.items():
        gradient_check.check_backward(f, x, gy)
        gradient_check.check_double_backward(f, x, gy, ggx)
        np.testing.assert_allclose(f(x).array, x * x, err_msg=name)


def test_communicator_names(comm):
    for name in ("naive", "flat", "non_cuda_aware", "dummy"):
        assert chainermn.create_communicator(name).name == name
    for name in ("pure_nccl", "hierarchical", "two_dimensional", "single_node"):
        with pytest.raises(RuntimeError, match="NCCL"):
            chainermn.create_communicator(name)
    with pytest.raises(ValueError, match="allreduce_grad_dtype"):
        chainermn.create_communicator("naive", allreduce_grad_dtype=np.float16)
    with pytest.raises(TypeError, match="JSON"):
        comm.bcast_obj(object())
    with pytest.raises(ValueError, match="this process"):
        chainermn.functions.send(np.ones(2), comm, rank=0)


def test_scatter_dataset_and_optimizer_on_one_rank(comm):
    import portagrad.chainer.links as L
    from portagrad.chainer import optimizers

    shard = chainermn.scatter_dataset(list(range(5)), comm, shuffle=True, seed=0)
    assert sorted(shard) == list(range(5))
    model = L.Linear(2, 1)
    opt = chainermn.create_multi_node_optimizer(optimizers.SGD(lr=0.5), comm).setup(model)
    x = np.ones((1, 2), np.float32)
    w0 = model.W.array.copy()
    opt.update(lambda: F.sum(model(x)))  # the first update broadcasts, as ChainerMN
    np.testing.assert_array_equal(model.W.array, w0)
    opt.update(lambda: F.sum(model(x)))
    np.testing.assert_allclose(model.W.array, w0 - 0.5)
    with pytest.raises(ValueError, match="double buffering"):
        chainermn.create_multi_node_optimizer(optimizers.SGD(), comm, double_buffering=True)
