"""portagrad.ops.linalg: the standard's linear-algebra extension, differentiable.

Every function takes Variables or arrays of any library (real floating matrices for the
decompositions and solves) and returns Variables; gradients work to any order where the
math allows (see each function).
"""

from ._linalg import matmul as matmul
from ._linalg import tensordot as tensordot
from ._linalg import vecdot as vecdot
from ._linalg_decomp import EighResult as EighResult
from ._linalg_decomp import QRResult as QRResult
from ._linalg_decomp import SVDResult as SVDResult
from ._linalg_decomp import cholesky as cholesky
from ._linalg_decomp import eigh as eigh
from ._linalg_decomp import eigvalsh as eigvalsh
from ._linalg_decomp import qr as qr
from ._linalg_decomp import svd as svd
from ._linalg_decomp import svdvals as svdvals
from ._linalg_ext import cross as cross
from ._linalg_ext import diagonal as diagonal
from ._linalg_ext import matrix_norm as matrix_norm
from ._linalg_ext import outer as outer
from ._linalg_ext import trace as trace
from ._linalg_ext import vector_norm as vector_norm
from ._linalg_solve import SlogdetResult as SlogdetResult
from ._linalg_solve import det as det
from ._linalg_solve import inv as inv
from ._linalg_solve import matrix_power as matrix_power
from ._linalg_solve import matrix_rank as matrix_rank
from ._linalg_solve import pinv as pinv
from ._linalg_solve import slogdet as slogdet
from ._linalg_solve import solve as solve
from ._shape import matrix_transpose as matrix_transpose

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]
