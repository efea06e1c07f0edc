"""glibc's malloc thresholds raised at import (portagrad.xp._malloc), and left alone where
the environment says so."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHECK = "import portagrad.xp._malloc as m, portagrad; print(m._State.tuned)"


def _tuned(**env: str) -> bool:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PORTAGRAD_MALLOC", "MALLOC_MMAP_THRESHOLD_",
                          "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", CHECK], env={**clean, **env},
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip() == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_import_raises_the_thresholds_unless_told_not_to():
    import ctypes

    try:
        ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
    except AttributeError:
        pytest.skip("not glibc")
    assert _tuned()
    assert not _tuned(PORTAGRAD_MALLOC="0")
    assert not _tuned(MALLOC_TRIM_THRESHOLD_="1048576")  # the user's own setting stands
