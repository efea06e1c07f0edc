"""portagrad.ops.linalg: the standard's linear-algebra extension, differentiable.

Every function takes Variables or arrays of any library (real floating matrices for the
decompositions and solves) and returns Variables; gradients work to any order where the
math allows (see each function).
"""

from .std.linalg.decompositions import EighResult as EighResult
from .std.linalg.decompositions import QRResult as QRResult
from .std.linalg.decompositions import SVDResult as SVDResult
from .std.linalg.decompositions import cholesky as cholesky
from .std.linalg.decompositions import eigh as eigh
from .std.linalg.decompositions import eigvalsh as eigvalsh
from .std.linalg.decompositions import qr as qr
from .std.linalg.decompositions import svd as svd
from .std.linalg.decompositions import svdvals as svdvals
from .std.linalg.determinants import SlogdetResult as SlogdetResult
from .std.linalg.determinants import det as det
from .std.linalg.determinants import slogdet as slogdet
from .std.linalg.norms import cross as cross
from .std.linalg.norms import diagonal as diagonal
from .std.linalg.norms import matrix_norm as matrix_norm
from .std.linalg.norms import outer as outer
from .std.linalg.norms import trace as trace
from .std.linalg.norms import vector_norm as vector_norm
from .std.linalg.products import matmul as matmul
from .std.linalg.products import tensordot as tensordot
from .std.linalg.products import vecdot as vecdot
from .std.linalg.solve import inv as inv
from .std.linalg.solve import matrix_power as matrix_power
from .std.linalg.solve import matrix_rank as matrix_rank
from .std.linalg.solve import pinv as pinv
from .std.linalg.solve import solve as solve
from .std.permutation import matrix_transpose as matrix_transpose

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]
