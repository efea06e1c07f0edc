"""How much of PyTorch's public names the PyTorch face covers, counted against the installed
torch: torch.nn's module classes, nn.functional's functions, torch.optim, its
lr_scheduler and swa_utils, and torch.utils.data. Every missing name must be one of the
explained ones below, so the table stays true.

Run ``python tests/nn/test_torch_face_coverage.py`` to print the table.
"""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")

# nn.functional's module-level helpers that are not functions of the API.
_F_INTERNALS = {"Optional", "assert_int_or_pair", "boolean_dispatch", "handle_torch_function",
                "has_torch_function", "has_torch_function_unary",
                "has_torch_function_variadic"}

EXPLAINED = {
    "grouped_mm": "a grouped low-precision GEMM kernel for mixture-of-experts (CUDA-first); "
                  "no portagrad op yet",
    "scaled_mm": "an fp8 GEMM with scales (CUDA only)",
    "scaled_grouped_mm": "an fp8 grouped GEMM (CUDA only)",
    "DFIterDataPipe": "DataPipes: deprecated by torch, dropped by torchdata",
    "DataChunk": "DataPipes: deprecated by torch, dropped by torchdata",
    "IterDataPipe": "DataPipes: deprecated by torch, dropped by torchdata",
    "MapDataPipe": "DataPipes: deprecated by torch, dropped by torchdata",
    "argument_validation": "DataPipes: deprecated by torch, dropped by torchdata",
    "functional_datapipe": "DataPipes: deprecated by torch, dropped by torchdata",
    "guaranteed_datapipes_determinism": "DataPipes: deprecated by torch, dropped by torchdata",
    "non_deterministic": "DataPipes: deprecated by torch, dropped by torchdata",
    "runtime_validation": "DataPipes: deprecated by torch, dropped by torchdata",
    "runtime_validation_disabled": "DataPipes: deprecated by torch, dropped by torchdata",
}


def groups() -> list[tuple[str, list[str], object]]:
    """(label, torch's names, portagrad's module) per group."""
    import portagrad as pg
    import portagrad.nn.functional as F

    tn, tf = torch.nn, torch.nn.functional
    modules = [n for n in dir(tn) if inspect.isclass(getattr(tn, n))
               and issubclass(getattr(tn, n), tn.Module)]
    functions = [n for n in dir(tf) if not n.startswith("_") and callable(getattr(tf, n))
                 and not inspect.isclass(getattr(tf, n))
                 and not inspect.ismodule(getattr(tf, n)) and n not in _F_INTERNALS]
    import torch.optim.lr_scheduler as ls
    import torch.optim.swa_utils as sw
    import torch.utils.data as td

    return [("torch.nn module classes", modules, pg.nn),
            ("torch.nn.functional functions", functions, F),
            ("torch.optim.__all__", list(torch.optim.__all__), pg.optim),
            ("torch.optim.lr_scheduler.__all__", list(ls.__all__), pg.optim.lr_scheduler),
            ("torch.optim.swa_utils.__all__", list(sw.__all__), pg.optim.swa_utils),
            ("torch.utils.data.__all__", [n for n in td.__all__ if not n.startswith("_")],
             pg.data)]


def table() -> str:
    rows = ["| torch list | present / total | missing, and why |", "|---|---|---|"]
    for label, names, ours in groups():
        missing = sorted(n for n in names if not hasattr(ours, n))
        why = "; ".join(f"`{n}`: {EXPLAINED.get(n, 'UNEXPLAINED')}" for n in missing)
        rows.append(f"| {label} | {len(names) - len(missing)}/{len(names)} | "
                    f"{why or 'none'} |")
    return "\n".join(rows)


@pytest.mark.parametrize("label", [g[0] for g in groups()])
def test_every_missing_name_is_explained(label):
    names, ours = next((n, o) for lab, n, o in groups() if lab == label)
    missing = sorted(n for n in names if not hasattr(ours, n))
    assert set(missing) <= set(EXPLAINED), sorted(set(missing) - set(EXPLAINED))


if __name__ == "__main__":
    print(f"torch {torch.__version__}")
    print(table())
