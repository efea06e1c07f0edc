"""Data parallelism over MPI (mpi4py): communicator, gradient buckets, distributed training.

Run a script on K processes with ``mpiexec -n K python -m mpi4py script.py``. Arrays travel
as buffers (never pickled); every collective checks layouts across ranks and has a deadline;
an unhandled exception, a signal or an early exit on any rank ends the whole job.
"""

from ._async import ParameterServerSGD as ParameterServerSGD
from ._batchnorm import MultiNodeBatchNorm as MultiNodeBatchNorm
from ._batchnorm import allreduce_sum as allreduce_sum
from ._batchnorm import multi_node_batch_norm as multi_node_batch_norm
from ._batchnorm import multi_node_batch_statistics as multi_node_batch_statistics
from ._buckets import GradientSynchronizer as GradientSynchronizer
from ._checkpoint import MultiNodeCheckpointer as MultiNodeCheckpointer
from ._comm import Communicator as Communicator
from ._comm import create_communicator as create_communicator
from ._comm import default_timeout as default_timeout
from ._comm import set_default_timeout as set_default_timeout
from ._data_parallel import DataParallel as DataParallel
from ._data_parallel import DistributedOptimizer as DistributedOptimizer
from ._data_parallel import broadcast_optimizer_state as broadcast_optimizer_state
from ._data_parallel import broadcast_parameters as broadcast_parameters
from ._data_parallel import broadcast_state as broadcast_state
from ._data_parallel import create_multi_node_optimizer as create_multi_node_optimizer
from ._dataset import scatter_dataset as scatter_dataset
from ._dataset import scatter_index as scatter_index
from ._evaluator import create_multi_node_evaluator as create_multi_node_evaluator
from ._evaluator import reduce_metrics as reduce_metrics
from ._faults import CollectiveTimeoutError as CollectiveTimeoutError
from ._faults import LayoutMismatchError as LayoutMismatchError
from ._faults import PeerExitedError as PeerExitedError
from ._faults import install_abort_hook as install_abort_hook
from ._faults import uninstall_abort_hook as uninstall_abort_hook
from ._training import MultiNodeSnapshot as MultiNodeSnapshot
from ._training import resume_trainer as resume_trainer
