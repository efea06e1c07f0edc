"""GPU tests run only where CuPy sees a CUDA device; elsewhere they skip cleanly."""

import pytest


def _cupy_device_count() -> int:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver or no device
        return 0


def pytest_collection_modifyitems(config, items):
    if _cupy_device_count() > 0:
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
