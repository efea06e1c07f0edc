"""``torch.nn.functional``'s names, positional order, keywords and defaults over
:mod:`portagrad.ops`: ``import portagrad.nn.functional as F``.

Every function takes Variables or arrays of any Array API library and returns Variables
(in the inputs' library and on their device), differentiable to every order. ``pg.ops``
keeps the Array API standard's and Chainer's names; this module is for code written
against PyTorch.

Examples
--------
>>> import numpy as np
>>> import portagrad.nn.functional as F
>>> logits = np.array([[2.0, 0.0, 0.0]])
>>> round(float(F.cross_entropy(logits, np.array([0])).array), 4)
0.2395
"""

from ._functional_activation import *  # noqa: F403
from ._functional_activation import __all__ as _activation_all
from ._functional_conv import *  # noqa: F403
from ._functional_conv import __all__ as _conv_all
from ._functional_distance import *  # noqa: F403
from ._functional_distance import __all__ as _distance_all
from ._functional_loss import *  # noqa: F403
from ._functional_loss import __all__ as _loss_all
from ._functional_norm import *  # noqa: F403
from ._functional_norm import __all__ as _norm_all
from ._functional_pool import *  # noqa: F403
from ._functional_pool import __all__ as _pool_all

__all__: list[str] = [*_activation_all, *_conv_all, *_distance_all, *_loss_all, *_norm_all,
                      *_pool_all]
