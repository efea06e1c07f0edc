"""Failures the job must survive by ending promptly with a clear message.

Usage: mpiexec -n 2 python -m mpi4py faults.py CASE
CASE: raise | kill | mismatch | buckets | timeout
"""

import os
import signal
import sys
import time

import numpy as np

import portagrad as pg
from portagrad.parallel import DataParallel, create_communicator

case = sys.argv[1]
comm = create_communicator(timeout=float(os.environ.get("FAULT_TIMEOUT", "20")))
comm.allreduce(np.ones(4))  # everyone is up

if case == "raise":
    if comm.rank == 1:
        raise ValueError("rank 1 failed on purpose")
    comm.allreduce(np.ones(4))  # rank 0 would wait forever without the abort hook
elif case == "kill":
    if comm.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    comm.allreduce(np.ones(4))
elif case == "mismatch":
    comm.allreduce(np.zeros(3 + comm.rank))
elif case == "buckets":
    DataParallel([pg.Variable(np.zeros((4, 2 + comm.rank)))], comm, broadcast=False)
elif case == "timeout":
    comm.step = 7
    if comm.rank == 1:
        time.sleep(30)  # never joins; rank 0's deadline fires first
    comm.allreduce(np.ones(4))
else:
    raise SystemExit(f"unknown case {case}")
print("reached the end", comm.rank, flush=True)
