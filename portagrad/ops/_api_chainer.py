"""Public re-exports of Chainer's function names and signatures (``chainer.functions``)
that the rest of the namespace does not already provide under the same name."""

from ._chainer_activation import *  # noqa: F403
from ._chainer_activation import __all__ as _activation_all
from ._chainer_array import *  # noqa: F403
from ._chainer_array import __all__ as _array_all
from ._chainer_conv import *  # noqa: F403
from ._chainer_conv import __all__ as _conv_all
from ._chainer_deform import *  # noqa: F403
from ._chainer_deform import __all__ as _deform_all
from ._chainer_eval import *  # noqa: F403
from ._chainer_eval import __all__ as _eval_all
from ._chainer_extra import *  # noqa: F403
from ._chainer_extra import __all__ as _extra_all
from ._chainer_fft import *  # noqa: F403
from ._chainer_fft import __all__ as _fft_all
from ._chainer_loss import *  # noqa: F403
from ._chainer_loss import __all__ as _loss_all
from ._chainer_math import *  # noqa: F403
from ._chainer_math import __all__ as _math_all
from ._chainer_norm import *  # noqa: F403
from ._chainer_norm import __all__ as _norm_all
from ._chainer_pool import *  # noqa: F403
from ._chainer_pool import __all__ as _pool_all
from ._chainer_rnn import *  # noqa: F403
from ._chainer_rnn import __all__ as _rnn_all
from ._chainer_roi import *  # noqa: F403
from ._chainer_roi import __all__ as _roi_all
from ._chainer_seq import *  # noqa: F403
from ._chainer_seq import __all__ as _seq_all
from ._chainer_shape import *  # noqa: F403
from ._chainer_shape import __all__ as _shape_all
from ._chainer_special import *  # noqa: F403
from ._chainer_special import __all__ as _special_all

__all__: list[str] = [*_activation_all, *_array_all, *_conv_all, *_deform_all, *_eval_all,
                      *_extra_all, *_fft_all, *_loss_all, *_math_all, *_norm_all, *_pool_all,
                      *_rnn_all, *_roi_all, *_seq_all, *_shape_all, *_special_all]
