"""Data-parallel training on shards of each batch, in both synchronisation modes.

Usage: mpiexec -n K python -m mpi4py equivalence.py OUT_DIR
Rank 0 writes OUT_DIR/{mode}.npz with the final parameters; every rank checks that all
ranks hold bitwise identical parameters.
"""

import sys

import numpy as np
from _mlp import NAMES, batch, digits, init_params, loss_fn

import portagrad as pg
from portagrad.parallel import DistributedOptimizer, create_communicator

comm = create_communicator(timeout=60)
out = sys.argv[1]
x, t, _, _ = digits()
per = 64 // comm.size
mine = slice(comm.rank * per, (comm.rank + 1) * per)

for mode in ("overlap", "packed"):
    # Other ranks start elsewhere: the broadcast from rank 0 must fix it.
    params = init_params(0 if comm.rank == 0 else 100 + comm.rank)
    inner = pg.optim.SGD(list(zip(NAMES, params)), lr=0.1, momentum=0.9)
    opt = DistributedOptimizer(inner, comm, mode=mode, bucket_cap_mb=0.001)
    for s in range(20):
        xb, tb = batch(s, x, t)
        opt.zero_grad()
        loss_fn(params, xb[mine], tb[mine]).backward()
        opt.step()
    flat = np.concatenate([p.array.ravel() for p in params])
    every = comm.allgather(flat)
    assert (every == every[0]).all(), f"{mode}: ranks diverged"
    if comm.rank == 0:
        np.savez(f"{out}/{mode}.npz", buckets=len(opt.synchronizer.buckets),
                 **{n: p.array for n, p in zip(NAMES, params)})
    opt.close()
