"""Public re-exports of the rest of the Array API standard (linalg, fft, creation,
searching, sets, bitwise, inspection, dtypes and constants).

``portagrad/ops/__init__.py`` star-imports this module last, so the names here are the
namespace's: ``astype``, ``sum``, ``prod`` and ``cumulative_sum`` are the versions that
accept portagrad dtype objects and handle complex casts.
"""

from . import fft as fft
from . import linalg as linalg
from ._bitwise import bitwise_and as bitwise_and
from ._bitwise import bitwise_invert as bitwise_invert
from ._bitwise import bitwise_left_shift as bitwise_left_shift
from ._bitwise import bitwise_or as bitwise_or
from ._bitwise import bitwise_right_shift as bitwise_right_shift
from ._bitwise import bitwise_xor as bitwise_xor
from ._bitwise import floor_divide as floor_divide
from ._bitwise import nextafter as nextafter
from ._bitwise import signbit as signbit
from ._complex import astype as astype
from ._complex import conj as conj
from ._complex import imag as imag
from ._complex import real as real
from ._creation import from_dlpack as from_dlpack
from ._creation import meshgrid as meshgrid
from ._creation import tril as tril
from ._creation import triu as triu
from ._dtypes import bool as bool
from ._dtypes import can_cast as can_cast
from ._dtypes import complex64 as complex64
from ._dtypes import complex128 as complex128
from ._dtypes import finfo as finfo
from ._dtypes import float32 as float32
from ._dtypes import float64 as float64
from ._dtypes import iinfo as iinfo
from ._dtypes import int8 as int8
from ._dtypes import int16 as int16
from ._dtypes import int32 as int32
from ._dtypes import int64 as int64
from ._dtypes import isdtype as isdtype
from ._dtypes import result_type as result_type
from ._dtypes import uint8 as uint8
from ._dtypes import uint16 as uint16
from ._dtypes import uint32 as uint32
from ._dtypes import uint64 as uint64
from ._info import __array_namespace_info__ as __array_namespace_info__
from ._info import e as e
from ._info import inf as inf
from ._info import nan as nan
from ._info import newaxis as newaxis
from ._info import pi as pi
from ._search import count_nonzero as count_nonzero
from ._search import nonzero as nonzero
from ._search import searchsorted as searchsorted
from ._sets import isin as isin
from ._sets import unique_all as unique_all
from ._sets import unique_counts as unique_counts
from ._sets import unique_inverse as unique_inverse
from ._sets import unique_values as unique_values
from ._std_extra import all as all
from ._std_extra import any as any
from ._std_extra import copysign as copysign
from ._std_extra import cumulative_prod as cumulative_prod
from ._std_extra import cumulative_sum as cumulative_sum
from ._std_extra import diff as diff
from ._std_extra import prod as prod
from ._std_extra import remainder as remainder
from ._std_extra import sum as sum

__all__: list[str] = [
    "fft", "linalg",
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "floor_divide", "nextafter", "signbit",
    "astype", "conj", "imag", "real",
    "from_dlpack", "meshgrid", "tril", "triu",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
    "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi",
    "count_nonzero", "nonzero", "searchsorted",
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "all", "any", "copysign", "cumulative_prod", "cumulative_sum", "diff", "prod",
    "remainder", "sum",
]
