"""The standard's differentiable elementwise functions, one module per kind:

- :mod:`.arithmetic`: add, subtract, multiply, divide, pow, negative, positive, abs,
  square, reciprocal;
- :mod:`.exponential`: exp, expm1, log, log1p, log2, log10, logaddexp, sqrt;
- :mod:`.trigonometric`: sin, cos, tan, asin, acos, atan, atan2, hypot and the hyperbolic
  functions sinh, cosh, tanh, asinh, acosh, atanh;
- :mod:`.selection`: maximum, minimum, where, clip.

Comparisons, rounding and tests, which carry no gradient, are in :mod:`..nondiff`; the
bitwise functions in :mod:`..bitwise`. Public names are exported by
:mod:`portagrad.ops`; the other families import them from here.
"""

from .arithmetic import abs as abs
from .arithmetic import add as add
from .arithmetic import divide as divide
from .arithmetic import multiply as multiply
from .arithmetic import negative as negative
from .arithmetic import positive as positive
from .arithmetic import pow as pow
from .arithmetic import reciprocal as reciprocal
from .arithmetic import square as square
from .arithmetic import subtract as subtract
from .exponential import exp as exp
from .exponential import expm1 as expm1
from .exponential import log as log
from .exponential import log1p as log1p
from .exponential import log2 as log2
from .exponential import log10 as log10
from .exponential import logaddexp as logaddexp
from .exponential import sqrt as sqrt
from .selection import clip as clip
from .selection import maximum as maximum
from .selection import minimum as minimum
from .selection import where as where
from .trigonometric import acos as acos
from .trigonometric import acosh as acosh
from .trigonometric import asin as asin
from .trigonometric import asinh as asinh
from .trigonometric import atan as atan
from .trigonometric import atan2 as atan2
from .trigonometric import atanh as atanh
from .trigonometric import cos as cos
from .trigonometric import cosh as cosh
from .trigonometric import hypot as hypot
from .trigonometric import sin as sin
from .trigonometric import sinh as sinh
from .trigonometric import tan as tan
from .trigonometric import tanh as tanh

__all__ = ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "clip",
           "cos", "cosh", "divide", "exp", "expm1", "hypot", "log", "log10", "log1p", "log2",
           "logaddexp", "maximum", "minimum", "multiply", "negative", "positive", "pow",
           "reciprocal", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "where"]
