"""portagrad.ops.fft: the standard's fft extension, differentiable to any order.

Gradients with respect to complex inputs follow portagrad's convention (``dL/dRe +
i dL/dIm``, see :mod:`portagrad.ops.std.complex`).
"""

from .std.fft import fft as fft
from .std.fft import fftfreq as fftfreq
from .std.fft import fftn as fftn
from .std.fft import fftshift as fftshift
from .std.fft import hfft as hfft
from .std.fft import ifft as ifft
from .std.fft import ifftn as ifftn
from .std.fft import ifftshift as ifftshift
from .std.fft import ihfft as ihfft
from .std.fft import irfft as irfft
from .std.fft import irfftn as irfftn
from .std.fft import rfft as rfft
from .std.fft import rfftfreq as rfftfreq
from .std.fft import rfftn as rfftn

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
