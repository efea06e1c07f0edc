"""portagrad.ops.fft: the standard's fft extension, differentiable to any order.

Gradients with respect to complex inputs follow portagrad's convention (``dL/dRe +
i dL/dIm``, see :mod:`portagrad.ops.std.complex`).
"""

from .std.fft.frequencies import fftfreq as fftfreq
from .std.fft.frequencies import fftshift as fftshift
from .std.fft.frequencies import ifftshift as ifftshift
from .std.fft.frequencies import rfftfreq as rfftfreq
from .std.fft.real import hfft as hfft
from .std.fft.real import ihfft as ihfft
from .std.fft.real import irfft as irfft
from .std.fft.real import irfftn as irfftn
from .std.fft.real import rfft as rfft
from .std.fft.real import rfftn as rfftn
from .std.fft.transforms import fft as fft
from .std.fft.transforms import fftn as fftn
from .std.fft.transforms import ifft as ifft
from .std.fft.transforms import ifftn as ifftn

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
