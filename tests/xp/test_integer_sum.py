"""Sums and traces of integer arrays have the standard's dtype on every library: integers
narrower than the default integer widen to its width, unsigned ones to the unsigned integer
of that width (torch, by itself, gives int64 and has no uint16/32/64 sum)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy


@pytest.mark.parametrize("dtype, expected", [("uint8", "uint64"), ("uint16", "uint64"),
                                             ("uint32", "uint64"), ("uint64", "uint64"),
                                             ("int8", "int64"), ("int32", "int64")])
def test_sum_and_trace_of_integers_have_the_standards_dtype(backend, dtype, expected):
    host = np.arange(9, dtype=dtype).reshape(3, 3)
    x = backend.asarray(host)
    for got, want in ((pg.ops.sum(x), host.sum()),
                      (pg.ops.sum(x, axis=1), host.sum(axis=1)),
                      (pg.ops.linalg.trace(x), np.trace(host)),
                      (pg.ops.linalg.trace(x, offset=1), np.trace(host, offset=1))):
        out = to_numpy(got.array)
        assert out.dtype == np.dtype(expected)
        np.testing.assert_array_equal(out, want)


def test_an_unsigned_sum_keeps_every_bit(backend):
    host = np.array([2**63 + 5, 2**63 + 7], dtype=np.uint64)
    out = to_numpy(pg.ops.sum(backend.asarray(host)).array)
    assert out.dtype == np.uint64 and int(out) == 12  # modulo 2**64, as the standard's sum
