"""Failures the job must survive by ending promptly with a clear message.

Usage: mpiexec -n 2 python -m mpi4py faults.py CASE [ARG]
CASE: raise | exit CODE | terminate | kill | os-exit CODE | mismatch | buckets | timeout |
      default-deadline (the deadline from PORTAGRAD_MPI_TIMEOUT) | end (no fault)
"""

import os
import signal
import sys
import time

import numpy as np

import portagrad as pg
from portagrad.parallel import DataParallel, create_communicator

case = sys.argv[1]
if case == "default-deadline":
    comm = create_communicator()
else:
    comm = create_communicator(timeout=float(os.environ.get("FAULT_TIMEOUT", "20")))
comm.allreduce(np.ones(4))  # everyone is up

if case == "raise":
    if comm.rank == 1:
        raise ValueError("rank 1 failed on purpose")
    comm.allreduce(np.ones(4))  # rank 0 would wait forever without the abort hook
elif case == "exit":
    if comm.rank == 1:
        sys.exit(int(sys.argv[2]))  # no exception hook runs: only the exit notice tells
    comm.allreduce(np.ones(4))
elif case == "terminate":
    if comm.rank == 1:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
    comm.allreduce(np.ones(4))
elif case == "kill":
    if comm.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    comm.allreduce(np.ones(4))
elif case == "os-exit":
    if comm.rank == 1:
        os._exit(int(sys.argv[2]))  # no Python code runs: the launcher alone sees it
    comm.allreduce(np.ones(4))
elif case == "mismatch":
    comm.allreduce(np.zeros(3 + comm.rank))
elif case == "buckets":
    DataParallel([pg.Variable(np.zeros((4, 2 + comm.rank)))], comm, broadcast=False)
elif case in ("timeout", "default-deadline"):
    comm.step = 7
    if comm.rank == 1:
        time.sleep(30)  # never joins; rank 0's deadline fires first
    comm.allreduce(np.ones(4))
elif case != "end":
    raise SystemExit(f"unknown case {case}")
print("reached the end", comm.rank, flush=True)
