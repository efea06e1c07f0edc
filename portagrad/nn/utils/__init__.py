"""``torch.nn.utils``: gradient clipping, parameters as one vector, and packed sequences.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> w = pg.nn.Parameter(np.array([3.0, 4.0]))
>>> (w * w).sum().backward()
>>> float(pg.nn.utils.clip_grad_norm_([w], max_norm=1.0))
10.0
>>> bool(abs(np.linalg.norm(w.grad) - 1.0) < 1e-5)
True
"""

from . import rnn as rnn
from .clip_grad import clip_grad_norm_ as clip_grad_norm_
from .clip_grad import clip_grad_value_ as clip_grad_value_
from .clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import get_total_norm as get_total_norm
from .convert_parameters import parameters_to_vector as parameters_to_vector
from .convert_parameters import vector_to_parameters as vector_to_parameters
