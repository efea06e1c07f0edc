"""portagrad.ops against the standard's list of names and signatures.

The reference is array-api-strict's namespace (and its linalg and fft extensions): every
public name it exports that the 2024.12 standard defines (names added later carry a
``requires_api_version`` guard there and are left out).
"""

from __future__ import annotations

import inspect

import pytest

import portagrad as pg

strict = pytest.importorskip("array_api_strict")

# array-api-strict's own helpers, not names of the standard.
_STRICT_ONLY = {"Device", "set_array_api_strict_flags", "get_array_api_strict_flags",
                "reset_array_api_strict_flags", "ArrayAPIStrictFlags", "__version__"}
_VERSION = "2024.12"


def _required_version(fn):
    """The api_version a function of array-api-strict is guarded by, or None."""
    code = getattr(fn, "__code__", None)
    if code is not None and "version" in code.co_freevars:
        return fn.__closure__[code.co_freevars.index("version")].cell_contents
    return None


def _standard_names(module) -> list[str]:
    out = []
    for name in module.__all__:
        if name in _STRICT_ONLY:
            continue
        v = _required_version(getattr(module, name))
        if v is not None and v > _VERSION:
            continue
        out.append(name)
    return out


REFERENCE = ([("", n) for n in _standard_names(strict)]
             + [("linalg.", n) for n in _standard_names(strict.linalg)]
             + [("fft.", n) for n in _standard_names(strict.fft)])


def _lookup(prefix: str, name: str):
    ns = pg.ops
    if prefix:
        ns = getattr(ns, prefix.rstrip("."))
    return getattr(ns, name)


def _param_names(fn) -> list[str] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]


def test_reference_list_is_the_full_standard():
    # 2024.12: 150-odd top-level names, 23 in linalg, 14 in fft.
    assert len([1 for p, _ in REFERENCE if p == "linalg."]) == 23
    assert len([1 for p, _ in REFERENCE if p == "fft."]) == 14
    assert len(REFERENCE) > 180


def test_every_standard_name_is_present():
    missing = [p + n for p, n in REFERENCE if not hasattr(
        getattr(pg.ops, p.rstrip(".")) if p else pg.ops, n)]
    assert not missing, f"portagrad.ops lacks {missing}"


def _functions() -> list[tuple[str, str]]:
    out = []
    for prefix, name in REFERENCE:
        ref_mod = getattr(strict, prefix.rstrip(".")) if prefix else strict
        obj = getattr(ref_mod, name)
        if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            out.append((prefix, name))
    return out


@pytest.mark.parametrize("prefix,name", _functions(), ids=lambda v: v or "top")
def test_signature_parameter_names_match(prefix, name):
    ref_mod = getattr(strict, prefix.rstrip(".")) if prefix else strict
    want = _param_names(getattr(ref_mod, name))
    got = _param_names(_lookup(prefix, name))
    if want is None or got is None:
        pytest.skip("no introspectable signature")
    assert got == want, f"{prefix}{name}: parameters {got}, the standard's {want}"


def test_constants_and_dtypes():
    import math

    assert pg.ops.e == math.e and pg.ops.pi == math.pi
    assert math.isinf(pg.ops.inf) and math.isnan(pg.ops.nan) and pg.ops.newaxis is None
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"):
        assert getattr(pg.ops, name) == getattr(strict, name)


def _array_members() -> list[str]:
    cls = type(strict.asarray(1.0))
    return sorted(n for n in dir(cls) if (not n.startswith("_") or (
        n.startswith("__") and n.endswith("__"))) and n not in dir(object)
                  and n not in ("__buffer__", "__annotations__", "__slots__"))


def test_every_array_method_and_attribute_is_on_variable():
    missing = [n for n in _array_members() if not hasattr(pg.Variable, n)]
    assert not missing, f"Variable lacks {missing}"


def test_array_namespace_of_a_variable_is_portagrad_ops():
    import array_api_compat
    import numpy as np

    assert array_api_compat.array_namespace(pg.Variable(np.ones(2))) is pg.ops
    assert pg.ops.__array_api_version__ == "2024.12"


def test_coverage_count():
    """The numbers reported for the standard: every name is covered."""
    covered = sum(1 for p, n in REFERENCE if hasattr(
        getattr(pg.ops, p.rstrip(".")) if p else pg.ops, n))
    assert covered == len(REFERENCE)
