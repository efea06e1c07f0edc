"""portagrad.vision's utils, transforms and evaluations against ChainerCV 0.13.1's results,
stored by scripts/make_chainercv_fixtures.py on the cases of _chainercv_cases.py."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import _chainercv_cases as cases
import numpy as np
import pytest

from portagrad.xp import to_numpy

STORED = np.load(Path(__file__).parent / "fixtures" / cases.FIXTURE)
CASES = {case.name: case for case in cases.cases()}


def _expected(name: str) -> dict[str, np.ndarray]:
    return {k.split("|", 1)[1]: STORED[k] for k in STORED.files if k.split("|", 1)[0] == name}


def _host(value):
    if isinstance(value, dict):
        return {k: _host(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_host(v) for v in value)
    if value is None or isinstance(value, (int, float, str, slice, np.generic)):
        return value
    return to_numpy(value)


def test_every_case_has_stored_results():
    names = {k.split("|", 1)[0] for k in STORED.files}
    assert names == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_chainercv(name):
    case = CASES[name]
    module, attr = case.fn.rsplit(".", 1)
    func = getattr(importlib.import_module(f"portagrad.vision.{module}"), attr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = cases.flatten(_host(cases.run(case, func)))
    want = _expected(name)
    if name.startswith(("semantic", "eval_")):
        got.pop(".confusion", None)  # an addition of portagrad's, not in ChainerCV's dict
    assert sorted(got) == sorted(want), "result structure differs"
    for key, w in want.items():
        g = np.asarray(got[key])
        assert g.shape == w.shape, key
        if w.dtype.kind in "biuUS":  # integers, booleans, text (printed lines, outcomes)
            np.testing.assert_array_equal(g, w, err_msg=key)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=key)


@pytest.mark.parametrize("name", ["eval_coco_none", "eval_coco_areas", "eval_inst_coco_none",
                                  "eval_inst_coco_crowds"])
def test_coco_metric_keys_name_chainercvs_averages(name):
    # COCO_METRIC_KEYS is portagrad's own list; the averages ChainerCV returned are its check
    from portagrad.vision.evaluations import COCO_METRIC_KEYS

    got = {k.lstrip(".") for k in _expected(name) if k.startswith((".map/", ".mar/"))}
    sized = "none" not in name
    assert got == {k for k in COCO_METRIC_KEYS if sized or "area=all" in k}
    assert len(COCO_METRIC_KEYS) == 12 and len(set(COCO_METRIC_KEYS)) == 12
