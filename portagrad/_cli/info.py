"""``portagrad info``: versions, array libraries and their devices, BLAS.

    portagrad info
    portagrad info --json
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sys
import warnings
from typing import Any

NAME = "info"
HELP = "print versions, installed array libraries, their devices and the BLAS in use"

# Backend name -> (module that says it is installed, its Array API namespace, distributions)
_BACKENDS = {
    "numpy": ("numpy", "array_api_compat.numpy", ("numpy",)),
    "array_api_strict": ("array_api_strict", "array_api_strict", ("array-api-strict",)),
    "torch": ("torch", "array_api_compat.torch", ("torch",)),
    "jax": ("jax", "jax.numpy", ("jax",)),
    "cupy": ("cupy", "array_api_compat.cupy",
             ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x")),
}
_PACKAGES = ("numpy", "array-api-compat", "array-api-extra", "hypothesis", "mpi4py",
             "threadpoolctl")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``info`` subcommand."""
    p = subparsers.add_parser(NAME, help=HELP, description=HELP)
    p.add_argument("--json", action="store_true", help="print the facts as JSON")
    return p


def _version(*dists: str) -> str | None:
    for d in dists:
        try:
            return importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _backend(name: str) -> dict[str, Any]:
    module, namespace, dists = _BACKENDS[name]
    out: dict[str, Any] = {"installed": importlib.util.find_spec(module) is not None}
    if not out["installed"]:
        return out
    out["version"] = _version(*dists)
    try:
        with warnings.catch_warnings():
            # torch warns while array-api-compat probes its device types.
            warnings.simplefilter("ignore")
            xp = importlib.import_module(namespace)
            inspect = xp.__array_namespace_info__()
            out["devices"] = [_device_name(d) for d in inspect.devices()]
            out["default_device"] = _device_name(inspect.default_device())
            out["float64"] = "float64" in inspect.dtypes(kind="real floating")
    except Exception as e:  # noqa: BLE001 - no driver, no GPU: say so, keep going
        out["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
    return out


def _device_name(device: Any) -> str:
    # array-api-strict's repr is Device('device1'): keep the name.
    return re.sub(r"^.*Device\('(.*)'\)$", r"\1", str(device))


def _blas() -> list[dict[str, Any]]:
    if importlib.util.find_spec("threadpoolctl") is None:
        return []
    import threadpoolctl

    keys = ("internal_api", "version", "threading_layer", "num_threads", "architecture",
            "filepath")
    return [{k: lib.get(k) for k in keys} for lib in threadpoolctl.threadpool_info()]


# OpenBLAS kernels that use AVX-512 need these five extensions; Linux lists an extension
# in /proc/cpuinfo only when the kernel saves its registers, so the flags are enough.
_AVX512 = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")
_AVX2_KERNELS = ("haswell", "zen", "sandybridge", "nehalem", "prescott", "core2")


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_hint(libs: list[dict[str, Any]], flags: set[str] | None = None,
                  env: dict[str, str] | None = None) -> str | None:
    """A note when OpenBLAS runs kernels older than the CPU it is on, else ``None``.

    OpenBLAS picks its kernels when it loads: the ones ``OPENBLAS_CORETYPE`` names when
    that is set, else the best it knows for the CPU it recognises (on a CPU newer than
    the build, a fallback). AVX2 kernels ("Haswell") on a CPU with AVX-512 run
    single-precision GEMM at about half the speed of the AVX-512 ones ("SkylakeX").

    Examples
    --------
    >>> libs = [{"internal_api": "openblas", "architecture": "Haswell"}]
    >>> flags = {"avx2", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}
    >>> openblas_hint(libs, flags, {}).split(":")[0]
    'OpenBLAS runs its Haswell kernels on a CPU with AVX-512'
    >>> "is set" in openblas_hint(libs, flags, {"OPENBLAS_CORETYPE": "Haswell"})
    True
    >>> openblas_hint(libs, {"avx2"}) is None
    True
    """
    if flags is None:
        flags = _cpu_flags()
    if env is None:
        env = dict(os.environ)
    if not all(f in flags for f in _AVX512):
        return None
    for lib in libs:
        arch = str(lib.get("architecture") or "")
        if lib.get("internal_api") == "openblas" and arch.lower() in _AVX2_KERNELS:
            forced = env.get("OPENBLAS_CORETYPE")
            if forced:
                return (f"OpenBLAS runs its {arch} kernels on a CPU with AVX-512: "
                        f"OPENBLAS_CORETYPE={forced} is set in the environment (unset it, "
                        f"with OPENBLAS_L2_SIZE, to let OpenBLAS choose)")
            return (f"OpenBLAS runs its {arch} kernels on a CPU with AVX-512: it does not "
                    f"recognise this CPU; OPENBLAS_CORETYPE=SkylakeX set before Python "
                    f"starts selects the AVX-512 kernels")
    return None


def facts() -> dict[str, Any]:
    """What ``portagrad info`` reports, as a dictionary."""
    from .. import __version__

    return {
        "portagrad": __version__,
        "python": f"{platform.python_version()} ({sys.implementation.name}) on "
                  f"{platform.system()} {platform.machine()}",
        "packages": {p: _version(p) for p in _PACKAGES},
        "backends": {name: _backend(name) for name in _BACKENDS},
        "blas": _blas(),
    }


def _format(f: dict[str, Any]) -> str:
    lines = [f"portagrad {f['portagrad']}", f"python    {f['python']}", "", "packages:"]
    for name, v in f["packages"].items():
        lines.append(f"  {name:<17} {v or 'not installed'}")
    lines += ["", "backends:"]
    for name, b in f["backends"].items():
        if not b["installed"]:
            lines.append(f"  {name:<17} not installed")
            continue
        if "error" in b:
            lines.append(f"  {name:<17} {b['version'] or '?':<10} unusable: {b['error']}")
            continue
        devices = ", ".join(b["devices"])
        lines.append(f"  {name:<17} {b['version'] or '?':<10} devices: {devices} (default "
                     f"{b['default_device']}); float64: {'yes' if b['float64'] else 'no'}")
    lines += ["", "blas (threadpoolctl):"]
    if not f["blas"]:
        lines.append("  none found (threadpoolctl not installed, or no BLAS loaded)")
    for lib in f["blas"]:
        lines.append(f"  {lib['internal_api']} {lib['version']} ({lib['threading_layer']}), "
                     f"{lib['num_threads']} threads, architecture {lib['architecture']}: "
                     f"{lib['filepath']}")
    hint = openblas_hint(f["blas"])
    if hint:
        lines.append(f"  note: {hint}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the facts; 0."""
    f = facts()
    print(json.dumps(f, indent=2) if getattr(args, "json", False) else _format(f))
    return 0
