"""The parallel package on one rank (no mpiexec): argument checks, errors, bucketing,
deadlines and the pieces whose multi-rank behaviour the MPI tests cover."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import portagrad as pg

pytest.importorskip("mpi4py")

from portagrad.parallel import (  # noqa: E402
    CollectiveTimeoutError,
    DataParallel,
    GradientSynchronizer,
    MultiNodeCheckpointer,
    ParameterServerSGD,
    allreduce_sum,
    create_communicator,
    install_abort_hook,
    multi_node_batch_norm,
    reduce_metrics,
    scatter_index,
    uninstall_abort_hook,
)
from portagrad.parallel._faults import wait_all  # noqa: E402


@pytest.fixture(scope="module")
def comm():
    return create_communicator(abort_on_exception=False)


def test_single_rank_collectives_return_new_arrays(comm):
    assert (comm.rank, comm.size) == (0, 1)
    x = np.arange(4.0)
    for op in ("sum", "mean", "max", "min", "prod"):
        y = comm.allreduce(x, op)
        np.testing.assert_array_equal(y, x)
        assert y is not x
    y = comm.allreduce(x)
    y += 1
    np.testing.assert_array_equal(x, np.arange(4.0))  # the input is never written
    np.testing.assert_array_equal(comm.allgather(x), x[None])
    np.testing.assert_array_equal(comm.scatter(x[None]), x)


def test_collective_argument_errors(comm):
    with pytest.raises(ValueError, match=r"allreduce\(op\): expected one of"):
        comm.allreduce(np.ones(2), "avg")
    with pytest.raises(pg.DTypeError, match="floating dtype for op='mean'"):
        comm.allreduce(np.ones(2, dtype=np.int64), "mean")
    with pytest.raises(TypeError, match=r"allreduce\(x\): expected an array"):
        comm.allreduce([1.0, 2.0])
    with pytest.raises(ValueError, match=r"bcast\(root\): expected a rank in \[0, 1\)"):
        comm.bcast(np.ones(2), root=3)
    with pytest.raises(pg.ShapeError, match="first axis has length 1"):
        comm.scatter(np.ones((2, 3)))


def test_create_communicator_rejects_a_foreign_launcher(monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "4")
    with pytest.raises(RuntimeError, match="expected COMM_WORLD of size 4"):
        create_communicator(abort_on_exception=False)
    monkeypatch.delenv("PMI_SIZE")
    with pytest.raises(ValueError, match="backend"):
        create_communicator(backend="gloo")


class _Never:
    def Test(self) -> bool:  # noqa: N802
        return False


def test_a_wait_past_its_deadline_names_the_op_the_step_and_the_rank():
    with pytest.raises(CollectiveTimeoutError,
                       match=r"allreduce of gradient bucket 2/3: .* within 0\.05 s, got no "
                             r"completion on rank 1 of 4 at step 12"):
        wait_all([_Never()], timeout=0.05, what="allreduce of gradient bucket 2/3", rank=1,
                 size=4, step=12)
    assert issubclass(CollectiveTimeoutError, TimeoutError)


def test_abort_hook_installs_once_and_restores_the_previous_hook():
    before = sys.excepthook
    install_abort_hook()
    install_abort_hook()
    assert sys.excepthook.__name__ == "_abort_hook"
    uninstall_abort_hook()
    assert sys.excepthook is before


def test_buckets_follow_reverse_parameter_order_cap_and_dtype(comm):
    ps = [pg.Variable(np.zeros(n, dtype=d)) for n, d in
          [(256, np.float64), (256, np.float64), (256, np.float32), (512, np.float64)]]
    sync = GradientSynchronizer(ps, comm, bucket_cap_mb=3000 / 2**20)
    # Reversed: p3 (4096 B) fills a bucket past the cap; p2 is float32: its own bucket;
    # p1 and p0 (2048 B each) share one, the cap being checked before adding.
    index = {id(p): i for i, p in enumerate(ps)}  # Variables compare elementwise
    assert [[index[id(p)] for p in b.params] for b in sync.buckets] == [[3], [2], [1, 0]]
    assert sync.bucket_sizes == [4096, 1024, 4096]
    packed = GradientSynchronizer(ps, comm, mode="packed")
    assert len(packed.buckets) == 2  # one buffer per dtype
    with pytest.raises(ValueError, match="mode"):
        GradientSynchronizer(ps, comm, mode="ring")
    with pytest.raises(ValueError, match="bucket_cap_mb"):
        GradientSynchronizer(ps, comm, bucket_cap_mb=0)


def test_wrappers_need_initialized_parameters(comm):
    lazy = pg.nn.LazyLinear(3)  # input size inferred at the first call
    with pytest.raises(ValueError, match="expected initialized parameters, got 'weight'"):
        DataParallel(lazy, comm)


def test_parameter_server_needs_two_ranks(comm):
    opt = pg.optim.SGD([pg.nn.Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="at least 2 ranks"):
        ParameterServerSGD(opt, comm)


def test_scatter_index_and_metrics_on_one_rank(comm):
    np.testing.assert_array_equal(scatter_index(5, comm, shuffle=True, seed=1),
                                  np.random.default_rng(1).permutation(5))
    assert reduce_metrics({"loss": np.float64(0.25), "acc": pg.Variable(np.array(0.5))},
                          comm) == {"acc": 0.5, "loss": 0.25}


def test_allreduce_sum_and_batch_norm_gradients_to_second_order(comm):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    pg.gradcheck.check_backward(lambda a: allreduce_sum(a, comm), [x])
    f = lambda a, g, b: multi_node_batch_norm(a, g, b, comm)  # noqa: E731
    pg.gradcheck.check_backward(f, [x, gamma, beta])
    pg.gradcheck.check_double_backward(f, [x, gamma, beta])
    y = f(x, gamma, beta).array
    ref = (x - x.mean(0)) / np.sqrt(x.var(0) + 2e-5) * gamma + beta
    np.testing.assert_allclose(y, ref, rtol=1e-12)


def test_checkpointer_keeps_the_newest_and_falls_back_past_damage(comm, tmp_path):
    model = pg.nn.Linear(2, 2)
    ckpt = MultiNodeCheckpointer(tmp_path, comm, keep=2)
    assert ckpt.resume(model=model) is None
    states = {}
    for step in (1, 2, 3):
        model.weight.array = np.full((2, 2), float(step))
        ckpt.save(step, model=model)
        states[step] = model.weight.array.copy()
    assert ckpt.steps() == [2, 3]
    ckpt.path(3).write_bytes(b"damaged")
    assert ckpt.resume(model=model) == 2
    np.testing.assert_array_equal(model.weight.array, states[2])
    with pytest.raises(ValueError, match="prefix"):
        MultiNodeCheckpointer(tmp_path, comm, prefix="a/b")


def test_nccl_backend_without_cupy_says_what_to_install():
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed; the GPU tests cover NCCL")
    with pytest.raises(RuntimeError, match="expected CuPy with NCCL for backend='nccl'"):
        create_communicator(backend="nccl", abort_on_exception=False)
