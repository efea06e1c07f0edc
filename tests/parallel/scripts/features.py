"""The communicator's collectives and the data-parallel helpers, on 2 (or more) ranks.

Usage: mpiexec -n K python -m mpi4py features.py OUT_DIR
Rank 0 writes OUT_DIR/features.npz with what every part produced; the test compares it
with references computed in one process.
"""

import os
import sys

import array_api_strict as xps
import numpy as np

import portagrad as pg
from portagrad.data import TupleDataset
from portagrad.parallel import (
    DataParallel,
    MultiNodeBatchNorm,
    MultiNodeCheckpointer,
    create_communicator,
    create_multi_node_evaluator,
    multi_node_batch_norm,
    reduce_metrics,
    scatter_dataset,
)
from portagrad.xp import namespace_name, namespace_of, to_numpy

comm = create_communicator(timeout=60)
r, n = comm.rank, comm.size
out = sys.argv[1]
res = {}

# -- collectives on every namespace ------------------------------------------------------
spaces = {"numpy": lambda a: a, "array_api_strict": lambda a: xps.asarray(a)}
try:
    import torch

    spaces["torch"] = lambda a: torch.asarray(a)
except ImportError:
    pass
base = np.arange(6.0).reshape(2, 3)
for name, make in spaces.items():
    a = make(base * (r + 1))
    ops = {
        "sum": comm.allreduce(a, "sum"),
        "mean": comm.allreduce(a, "mean"),
        "max": comm.allreduce(make(np.array([r, -r], dtype=np.int64)), "max"),
        # Ranks other than the root pass an array to receive into its library.
        "bcast": comm.bcast(a if r == 1 else make(np.zeros((2, 3))), root=1),
        "allgather": comm.allgather(a),
        "scatter": comm.scatter(make(np.arange(2.0 * n).reshape(n, 2)) if r == 0
                                else make(np.zeros(1))),
    }
    for op, v in ops.items():
        assert namespace_name(namespace_of(v)) == name, (name, op, type(v))
        res[f"{name}/{op}"] = comm.allgather(np.asarray(to_numpy(v)))
res["bcast_none"] = comm.allgather(comm.bcast(base * 7 if r == 0 else None))
res["scatter_none"] = comm.allgather(comm.scatter(np.arange(n) if r == 0 else None))

# -- scatter_dataset ---------------------------------------------------------------------
ds = TupleDataset(np.arange(11) * 10)
shard = scatter_dataset(ds, comm, shuffle=True, seed=3)
res["scatter_dataset"] = comm.allgather(np.array([int(shard[i][0]) for i in range(len(shard))]))
uneven = scatter_dataset(ds, comm, force_equal_length=False)
res["scatter_uneven_len"] = comm.allgather(np.array([len(uneven)]))

# -- metrics -----------------------------------------------------------------------------
res["metrics"] = np.array(reduce_metrics({"a": r + 1.0, "b": np.float32(2 * r)}, comm,
                                         weight=r + 1)["a"])


class LocalEval:
    def evaluate(self):
        return {"main/loss": pg.Variable(np.array(float(r)))}


res["evaluator"] = np.array(create_multi_node_evaluator(LocalEval(), comm).evaluate()
                            ["main/loss"])

# -- multi-node batch normalization ------------------------------------------------------
g = np.random.default_rng(0)
X, W = g.normal(size=(4 * n, 3, 2)), g.normal(size=(4 * n, 3, 2))
gamma = pg.Variable(g.normal(size=3))
beta = pg.Variable(g.normal(size=3))
x = pg.Variable(X[4 * r : 4 * r + 4])
y = multi_node_batch_norm(x, gamma, beta, comm)
(y * W[4 * r : 4 * r + 4]).sum().backward()
res["bn/y"] = comm.allgather(y.array)
res["bn/gx"] = comm.allgather(x.grad)
res["bn/ggamma"] = comm.allreduce(gamma.grad)
res["bn/gbeta"] = comm.allreduce(beta.grad)

bn = MultiNodeBatchNorm(comm, 3, dtype=np.float64)
for step in range(2):
    xs = pg.Variable(X[4 * r : 4 * r + 4] + step)
    ys = bn(xs)
    (ys * W[4 * r : 4 * r + 4]).sum().backward()
    res[f"bnmod/y{step}"] = comm.allgather(ys.array)
    res[f"bnmod/gx{step}"] = comm.allgather(xs.grad)
res["bnmod/ggamma"] = comm.allreduce(bn.gamma.grad)
res["bnmod/running"] = np.stack([bn.running_mean, bn.running_var])
bn.eval()
res["bnmod/eval"] = bn(X[:2]).array

# -- no_sync, unused parameters, torch gradients -----------------------------------------
w = pg.Variable(np.array([1.0, 2.0]))
u = pg.Variable(np.array([5.0]))  # used by rank 0 only: its hook fires on one rank
dp = DataParallel([w, u], comm, mode="overlap", bucket_cap_mb=1e-6)
with dp.no_sync():
    ((r + 1.0) * w).sum().backward()
loss = (w * w).sum()
if r == 0:
    loss = loss + (u * 3.0).sum()
loss.backward()
dp.synchronize()
res["no_sync/w"], res["no_sync/u"] = w.grad, u.grad
dp.close()
if "torch" in spaces:
    tw = pg.Variable(torch.tensor([1.0, -1.0], dtype=torch.float64))
    tdp = DataParallel([tw], comm)
    (tw * (r + 1.0)).sum().backward()
    tdp.synchronize()
    assert isinstance(tw.grad, torch.Tensor)
    res["torch/grad"] = tw.grad.numpy()
    tdp.close()

# -- gradient layouts: transposed (F-ordered) gradients ------------------------------------
for case in ("mixed", "transposed"):
    m = pg.Variable(np.zeros((3, 4)))
    sync = DataParallel([m], comm, mode="packed").synchronizer
    got = []
    for step in range(3):
        g = np.arange(12.0).reshape(3, 4) * (r + 1) + step
        m.grad = np.asfortranarray(g) if case == "transposed" or r == 0 else g
        sync.synchronize()
        got.append(m.grad.copy())
    res[f"layout/{case}"] = np.array(got)
    res[f"layout/{case}/stored_transposed"] = np.array(sync.buckets[0].transposed[0])
    sync.close()

# -- checkpoints: only rank 0 sees the folder ---------------------------------------------
folder = os.path.join(out, "ckpt") if r == 0 else os.path.join(out, f"absent-{r}")
model = pg.nn.Linear(3, 2)
opt = pg.optim.Adam(model, lr=0.1)
from portagrad.parallel import DistributedOptimizer  # noqa: E402

dopt = DistributedOptimizer(opt, comm)
ckpt = MultiNodeCheckpointer(folder, comm, keep=2)


def train(steps):
    for _ in range(steps):
        dopt.zero_grad()
        (model(pg.Variable(np.full((2, 3), r + 1.0))) ** 2).sum().backward()
        dopt.step()


train(3)
ckpt.save(3, model=model, optimizer=opt)
saved = model.weight.array.copy()
saved_v = opt.state_dict()["state"][0]["exp_avg_sq"].copy()
train(2)
ckpt.save(5, model=model, optimizer=opt)
train(1)
if r == 0:  # the newest snapshot is damaged: resume must fall back to step 3
    with open(ckpt.path(5), "r+b") as f:
        f.truncate(40)
res["ckpt/step"] = np.array(ckpt.resume(model=model, optimizer=opt))
res["ckpt/W_equal"] = comm.allgather(np.array(float(np.abs(model.weight.array - saved).max())))
res["ckpt/v_equal"] = comm.allgather(np.array(float(np.abs(
    opt.state_dict()["state"][0]["exp_avg_sq"] - saved_v).max())))
res["ckpt/t"] = comm.allgather(np.array(opt.t))
res["ckpt/kept"] = np.array(ckpt.steps() if r == 0 else [-1])
dopt.close()

if r == 0:
    np.savez(os.path.join(out, "features.npz"), size=n, **res)
