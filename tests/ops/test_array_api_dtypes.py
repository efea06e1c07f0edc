"""portagrad's dtype objects, the data-type functions and the inspection API, on every
backend."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import DTypeError

o = pg.ops
NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128")


def test_dtypes_equal_each_backends_dtype_of_the_same_name(backend):
    xp = backend.xp
    for name in NAMES:
        ours = getattr(o, name)
        theirs = getattr(xp, name)
        assert ours == theirs and theirs == ours, name
        assert not (ours != theirs) and not (theirs != ours), name
    assert o.float32 != xp.float64 and xp.float64 != o.float32
    assert o.float32 != "float32" and o.float32 != 4


def test_variable_dtype_compares_with_the_namespace_dtypes(backend):
    x = pg.Variable(backend.asarray(np.ones(2, dtype=np.float32)))
    xp = pg.ops
    assert x.dtype == xp.float32
    assert not (x.dtype == xp.float64)
    assert xp.isdtype(x.dtype, "real floating")
    assert xp.isdtype(x.dtype, xp.float32)


def test_creation_translates_portagrad_dtypes(backend):
    dev = backend.device
    x = o.asarray([1.0, 2.0], dtype=o.float32, device=dev)
    assert type(x.array) is type(backend.asarray(np.zeros(1)))
    assert x.dtype == backend.xp.float32
    for fn in (o.zeros, o.ones, o.empty):
        assert fn((2,), dtype=o.int16, device=dev).dtype == backend.xp.int16
    assert o.full((2,), 3, dtype=o.uint8, device=dev).dtype == backend.xp.uint8
    assert o.arange(3, dtype=o.float64, device=dev).dtype == backend.xp.float64
    assert o.linspace(0, 1, 3, dtype=o.float32, device=dev).dtype == backend.xp.float32
    assert o.eye(2, dtype=o.float32, device=dev).dtype == backend.xp.float32
    like = backend.asarray(np.zeros(2))
    for fn in (o.zeros_like, o.ones_like, o.empty_like):
        assert fn(like, dtype=o.int32).dtype == backend.xp.int32
    assert o.full_like(like, 2, dtype=o.int64).dtype == backend.xp.int64
    np.testing.assert_array_equal(pg.xp.to_numpy(o.fft.fftfreq(4, dtype=o.float32,
                                                               device=dev).array),
                                  np.fft.fftfreq(4).astype(np.float32))


def test_dtype_arguments_of_ops_accept_portagrad_dtypes(backend):
    x = pg.Variable(backend.asarray(np.array([1.0, 2.0, 3.0], dtype=np.float32)))
    assert o.astype(x, o.float64).dtype == backend.xp.float64
    assert x.astype(o.float64).dtype == backend.xp.float64
    assert o.sum(x, dtype=o.float64).dtype == backend.xp.float64
    assert o.prod(x, dtype=o.float64).dtype == backend.xp.float64
    assert o.cumulative_sum(x, dtype=o.float64).dtype == backend.xp.float64
    assert o.cumulative_prod(x, dtype=o.float64).dtype == backend.xp.float64
    assert o.linalg.trace(o.reshape(o.concat([x, x, x]), (3, 3)),
                          dtype=o.float64).dtype == backend.xp.float64
    # the gradient of a cast between floating dtypes comes back in the input's dtype
    y = o.sum(o.astype(x, o.float64) ** 2)
    (g,) = pg.grad(y, x)
    assert g.dtype == backend.xp.float32
    np.testing.assert_allclose(pg.xp.to_numpy(g.array), [2.0, 4.0, 6.0])


def test_isdtype_kinds():
    assert o.isdtype(o.int8, "signed integer") and not o.isdtype(o.uint8, "signed integer")
    assert o.isdtype(o.uint64, "integral") and o.isdtype(o.bool, "bool")
    assert o.isdtype(o.complex64, "numeric") and not o.isdtype(o.bool, "numeric")
    assert o.isdtype(o.float64, ("complex floating", "real floating"))
    assert o.isdtype(np.dtype("int32"), o.int32)
    assert o.isdtype(np.int32, "integral")
    with pytest.raises(ValueError):
        o.isdtype(o.float32, "floating")
    with pytest.raises(DTypeError):
        o.isdtype(np.ones(2), "real floating")


def test_result_type_follows_portagrads_promotion(backend):
    xp = backend.xp
    f32 = backend.asarray(np.ones(2, dtype=np.float32))
    i64 = backend.asarray(np.ones(2, dtype=np.int64))
    assert o.result_type(f32, i64) == xp.float32  # integer + floating: the floating dtype
    assert o.result_type(f32, xp.float64) == xp.float64
    assert o.result_type(f32, 1.0) == xp.float32  # Python scalars are weak
    # a float scalar lifts an integer array to the library's default floating dtype
    assert o.result_type(i64, 1.0) == pg.xp.default_float(xp)
    assert o.result_type(f32, 1j) == xp.complex64
    # only portagrad dtypes in, a portagrad dtype out
    assert o.result_type(o.int8, o.int16) is o.int16
    assert o.result_type(o.float32, o.complex64) is o.complex64
    assert o.result_type(pg.Variable(f32), o.float64) == xp.float64


def test_can_cast_finfo_iinfo(backend):
    xp = backend.xp
    assert o.can_cast(o.float32, o.float64) and not o.can_cast(o.float64, o.int32)
    f32 = backend.asarray(np.ones(2, dtype=np.float32))
    assert o.can_cast(f32, xp.float64) and not o.can_cast(pg.Variable(f32), o.int8)
    assert o.finfo(o.float32).bits == 32 and o.finfo(f32).eps == np.finfo(np.float32).eps
    assert o.finfo(o.float64).eps == np.finfo(np.float64).eps
    assert o.iinfo(o.int8).min == -128 and o.iinfo(xp.uint16).max == 65535
    with pytest.raises(DTypeError):
        o.finfo(o.int8)
    with pytest.raises(DTypeError):
        o.iinfo(o.float32)


def test_inspection_api():
    info = o.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert "max dimensions" in caps
    assert info.default_device() in info.devices()
    assert info.default_dtypes() == {"real floating": o.float64, "complex floating":
                                     o.complex128, "integral": o.int64, "indexing": o.int64}
    assert set(info.dtypes()) == set(NAMES)
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                 "uint16", "uint32", "uint64"}
    assert info.dtypes(kind="bool") == {"bool": o.bool}


def test_dtype_objects_are_hashable_and_pickle():
    import pickle

    assert {o.float32: 1}[o.float32] == 1
    assert pickle.loads(pickle.dumps(o.float32)) == o.float32
    assert repr(o.complex64) == "portagrad.ops.complex64"
    with pytest.raises(AttributeError):
        o.float32.name = "float64"


def test_missing_dtype_in_a_namespace_raises_a_clear_error():
    from portagrad.ops.std.dtypes import DType, resolve_dtype

    with pytest.raises(DTypeError, match="bfloat16"):
        resolve_dtype(__import__("array_api_strict"), DType("bfloat16"), "zeros")


def test_a_dict_of_portagrad_dtypes_is_indexed_by_array_dtypes():
    import array_api_strict as xs

    names = {pg.ops.float32: "float32", pg.ops.int16: "int16", pg.ops.bool: "bool",
             pg.ops.complex128: "complex128"}
    assert names[pg.ops.asarray(np.ones(2, np.float32)).dtype] == "float32"
    assert names[xs.asarray([1], dtype=xs.int16).dtype] == "int16"
    assert names[np.dtype(bool)] == "bool" and names[np.dtype("complex128")] == "complex128"
    assert len({pg.ops.float32, np.dtype("float32")}) == 1


def test_sum_and_prod_keep_an_integer_dtype_argument_on_floating_input():
    o = pg.ops
    x = o.asarray([1.5, 2.5, -3.0])
    assert o.sum(x, dtype=o.int32).dtype == o.int32
    assert int(o.sum(x, dtype=o.int32).array) == 0  # cast first: 1 + 2 - 3
    assert o.prod(x, dtype=o.int16).dtype == o.int16
    assert o.sum(o.asarray([1 + 1j, 2 - 1j]), dtype=o.int8).dtype == o.int8
