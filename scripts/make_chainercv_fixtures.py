"""Store ChainerCV 0.13.1's results on the cases of tests/vision/_chainercv_cases.py.

Runs in a venv of its own, since ChainerCV needs Chainer 7 and NumPy < 2::

    python3.11 -m venv cv && cv/bin/pip install numpy==1.26.4 'setuptools<70' 'cython<3' wheel
    cv/bin/pip install 'pycocotools<2.0.9'
    cv/bin/pip install --no-build-isolation chainer==7.8.1
    cv/bin/pip download --no-deps --no-binary :all: --no-build-isolation chainercv==0.13.1
    tar xzf chainercv-0.13.1.tar.gz
    # its shipped C file predates Python 3.11; the CPU functions do not use it
    cd chainercv-0.13.1 && printf 'def _nms_gpu_post(*a):\\n    raise RuntimeError\\n' \\
        > chainercv/utils/bbox/_nms_gpu_post.py && rm chainercv/utils/bbox/_nms_gpu_post.c \\
        && sed -i 's/ext_modules=extensions,/ext_modules=[],/' setup.py \\
        && ../cv/bin/pip install --no-build-isolation . && cd ..
    cv/bin/python scripts/make_chainercv_fixtures.py

It rewrites tests/vision/fixtures/chainercv_0.13.1.npz; the tests read only that file.
ChainerCV's image backends are set to Pillow (its choice when OpenCV is absent), so the
stored resizes, rotations and file reads do not depend on whether OpenCV is installed.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent / "tests" / "vision"
sys.path.insert(0, str(HERE))

import _chainercv_cases as cases  # noqa: E402


def _default_bbox(coder):
    """SSD's default boxes as ChainerCV computes them: inside its multibox coder."""
    def default_bbox(grids, aspect_ratios, steps, sizes):
        return coder(grids, aspect_ratios, steps, sizes, (0.1, 0.2))._default_bbox
    return default_bbox


ADAPTERS = {"utils.generate_default_bbox": _default_bbox}


def resolve(path: str):
    target = cases.CHAINERCV_PATHS.get(path, path)
    module, name = target.rsplit(".", 1)
    found = getattr(importlib.import_module(f"chainercv.{module}"), name)
    return ADAPTERS[path](found) if path in ADAPTERS else found


def main() -> None:
    import chainer
    import chainercv

    assert chainercv.__version__ == "0.13.1", chainercv.__version__
    for backend in ("cv_resize_backend", "cv_rotate_backend", "cv_read_image_backend"):
        setattr(chainer.global_config, backend, "PIL")
    if not hasattr(np, "bool"):  # scale_mask still spells NumPy's bool the pre-1.24 way
        np.bool = np.bool_
    stored: dict[str, np.ndarray] = {}
    for case in cases.cases():
        name = case.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 -> NaN is the convention
            warnings.simplefilter("ignore", DeprecationWarning)  # random_rotate's own notice
            result = cases.run(case, resolve(case.fn))
        if isinstance(result, dict):
            result.pop("coco_eval", None)  # pycocotools' own object
            if "existent_labels" in result:  # a list, documented as an array
                result["existent_labels"] = np.asarray(result["existent_labels"])
        for key, value in cases.flatten(result).items():
            stored[f"{name}|{key}"] = value
    out = HERE / "fixtures" / cases.FIXTURE
    np.savez_compressed(out, **stored)
    print(f"wrote {len(stored)} arrays for {len(cases.cases())} cases to {out}")


if __name__ == "__main__":
    main()
