"""Mixed precision as ``torch.amp``: :class:`autocast` (torch's per-device lists: matrix
products and convolutions in float16/bfloat16 with float32 parameters, the losses and the
other float32 ops in float32) and
:class:`GradScaler` (dynamic loss scaling with ``scale``, ``unscale_``, ``step``,
``update``, ``state_dict``).

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> model = pg.nn.Linear(4, 3)
>>> opt = pg.optim.Adam(model.parameters(), lr=1e-2)
>>> scaler = pg.amp.GradScaler(init_scale=1024.0)
>>> x, t = np.ones((2, 4), np.float32), np.array([0, 2])
>>> with pg.amp.autocast("cuda", dtype="float16"):
...     loss = pg.ops.softmax_cross_entropy(model(x), t)
>>> scaler.scale(loss).backward()
>>> _ = scaler.step(opt); scaler.update()
>>> loss.dtype, model.weight.dtype
(dtype('float32'), dtype('float32'))
"""

from ._autocast import autocast as autocast
from ._autocast import get_autocast_dtype as get_autocast_dtype
from ._autocast import is_autocast_enabled as is_autocast_enabled
from ._grad_scaler import GradScaler as GradScaler
