"""Asynchronous SGD with a parameter server on the digits MLP.

Usage: mpiexec -n 3 python -m mpi4py async_sgd.py OUT_JSON
Rank 0 serves; the other ranks train on disjoint shards and never wait for each other.
"""

import json
import sys

import numpy as np
from _mlp import NAMES, digits, init_params, loss_fn

import portagrad as pg
from portagrad.parallel import ParameterServerSGD, create_communicator

comm = create_communicator(timeout=120)
x, t, xt, tt = digits()
params = init_params(comm.rank, hidden=64)  # only the server's start counts
ps = ParameterServerSGD(pg.optim.SGD(list(zip(NAMES, params)), lr=0.05, momentum=0.9),
                        comm, max_staleness=2)
if ps.is_server:
    ps.serve()
else:
    workers, me = comm.size - 1, comm.rank - 1
    rng = np.random.default_rng(comm.rank)
    shard = np.arange(me, len(x), workers)
    for _epoch in range(25):
        order = rng.permutation(shard)
        for lo in range(0, len(order), 32):
            idx = order[lo : lo + 32]
            for p in params:
                p.cleargrad()
            loss_fn(params, x[idx], t[idx]).backward()
            ps.step()
    ps.finish()
ps.broadcast_final()
flat = np.concatenate([p.array.ravel() for p in params])
every = comm.allgather(flat)
assert (every == every[0]).all(), "ranks hold different final parameters"
if comm.rank == 0:
    from _mlp import accuracy

    with open(sys.argv[1], "w") as f:
        json.dump({"accuracy": accuracy(params, xt, tt), "accepted": ps.accepted,
                   "dropped": ps.dropped, "version": ps.version,
                   "max_staleness": ps.max_staleness_applied}, f)
ps.close()
