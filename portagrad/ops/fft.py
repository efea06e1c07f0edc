"""portagrad.ops.fft: the standard's fft extension, differentiable to any order.

Gradients with respect to complex inputs follow portagrad's convention (``dL/dRe +
i dL/dIm``, see :mod:`portagrad.ops._complex`).
"""

from ._fft import fft as fft
from ._fft import fftfreq as fftfreq
from ._fft import fftn as fftn
from ._fft import fftshift as fftshift
from ._fft import hfft as hfft
from ._fft import ifft as ifft
from ._fft import ifftn as ifftn
from ._fft import ifftshift as ifftshift
from ._fft import ihfft as ihfft
from ._fft import irfft as irfft
from ._fft import irfftn as irfftn
from ._fft import rfft as rfft
from ._fft import rfftfreq as rfftfreq
from ._fft import rfftn as rfftn

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
