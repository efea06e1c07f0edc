"""ChainerMN (Chainer's multi-node training) over :mod:`portagrad.parallel`.

Run a program on K processes with ``mpiexec -n K python -m mpi4py program.py``. The
communicators (``'naive'``, ``'flat'``, ``'non_cuda_aware'``) run MPI on host arrays;
the NCCL ones need CuPy GPUs and say so. Nothing is pickled: arrays travel as buffers,
objects as JSON.

Examples
--------
>>> import portagrad.chainermn as chainermn
>>> comm = chainermn.create_communicator("naive")
>>> comm.size >= 1
True
"""

from . import communicators as communicators
from . import datasets as datasets
from . import extensions as extensions
from . import functions as functions
from . import global_except_hook as global_except_hook
from . import iterators as iterators
from . import links as links
from . import optimizers as optimizers
from .communicators import CommunicatorBase as CommunicatorBase
from .communicators import create_communicator as create_communicator
from .datasets import DataSizeError as DataSizeError
from .datasets import scatter_dataset as scatter_dataset
from .datasets import scatter_index as scatter_index
from .extensions import create_multi_node_checkpointer as create_multi_node_checkpointer
from .extensions import create_multi_node_evaluator as create_multi_node_evaluator
from .links import MultiNodeChainList as MultiNodeChainList
from .optimizers import create_multi_node_optimizer as create_multi_node_optimizer

__all__ = ["communicators", "datasets", "extensions", "functions", "global_except_hook",
           "iterators", "links", "optimizers",
           "CommunicatorBase", "create_communicator", "DataSizeError", "scatter_dataset",
           "scatter_index", "create_multi_node_checkpointer", "create_multi_node_evaluator",
           "MultiNodeChainList", "create_multi_node_optimizer"]
