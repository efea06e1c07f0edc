"""Smoke test of the benchmark workloads: a step or two each, with their agreement checks.

No timing is asserted; what must hold is that every implementation of a workload runs,
that the implementations agree (losses, gradients, Hessian-vector products) and that
the report and the ``portagrad bench`` command are well formed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from portagrad._bench import WORKLOADS, BenchmarkCheckError, Config, run_benchmarks
from portagrad._bench import hvp as hvp_workload
from portagrad._bench import mlp as mlp_workload
from portagrad._bench._common import check_close, check_losses
from portagrad._bench._report import environment, format_results, to_json
from portagrad._cli import bench as bench_cli

HAS_TORCH = Config().use_torch()
QUICK = Config(steps=1, warmup=0, check_steps=2, memory_repeats=1, memory_steps=2)


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "dispatch", "hvp", "memory"])
def test_workload_runs_and_implementations_agree(name):
    result = WORKLOADS[name](QUICK)  # raises BenchmarkCheckError on disagreement
    impls = {r.impl for r in result.rows}
    assert impls == ({"numpy", "portagrad", "torch"} if HAS_TORCH else {"numpy", "portagrad"})
    assert result.checks
    for r in result.rows:
        assert math.isfinite(r.value) and r.value > 0, r
        assert r.unit in ("ms", "MB", "x")
        if r.vs_numpy is not None:
            assert r.vs_numpy[0] <= r.vs_numpy[1] <= r.vs_numpy[2]
        if r.impl == "numpy" and r.unit != "x":
            assert r.vs_numpy == (1.0, 1.0, 1.0)
    assert result.targets
    for t in result.targets:
        assert t.limit > 0
        assert (t.value is None) == (t.met is None)
        if t.value is not None and name != "memory":
            assert t.best is not None and t.best > 0


def test_training_losses_agree_with_a_fresh_numpy_run():
    # The NumPy reference of the MLP is an independent re-derivation; check its first step
    # against a direct float64 computation of the same loss.
    prob = mlp_workload.problem(0)
    x, t = prob.batches[0]
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(prob.params):
        h = h @ w.T.astype(np.float64) + b
        if i < len(prob.params) - 1:
            h = np.maximum(h, 0.0)
    h = h - h.max(axis=1, keepdims=True)
    expected = float(np.mean(np.log(np.exp(h).sum(axis=1)) - h[np.arange(len(t)), t]))
    step = mlp_workload.numpy_mlp(Config())
    assert step(0) == pytest.approx(expected, rel=1e-5)


def test_numpy_hvp_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(3)
    sizes = (5, 4, 3)
    params = [[rng.standard_normal((o, i)), rng.standard_normal(o)]
              for i, o in zip(sizes[:-1], sizes[1:])]
    v = [(rng.standard_normal((o, i)), rng.standard_normal(o))
         for i, o in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((6, 5))
    t = rng.integers(0, 3, size=6)
    hv = hvp_workload.numpy_hvp(params, v, x, t)
    eps = 1e-6

    def grad_at(sign):
        moved = [[w + sign * eps * vw, b + sign * eps * vb] for (w, b), (vw, vb) in
                 zip(params, v)]
        return mlp_workload.numpy_forward_backward(moved, x, t)[1]

    plus, minus = grad_at(1.0), grad_at(-1.0)
    for (hw, hb), (pw, pb), (mw, mb) in zip(hv, plus, minus):
        np.testing.assert_allclose(hw, (pw - mw) / (2 * eps), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(hb, (pb - mb) / (2 * eps), rtol=1e-5, atol=1e-7)
    # The product at a kept point (what conjugate gradients or Lanczos repeat) is the same.
    point = hvp_workload.numpy_point(params, x, t)
    for (hw, hb), (aw, ab) in zip(hv, hvp_workload.numpy_hvp_at(params, point, v)):
        np.testing.assert_allclose(aw, hw, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(ab, hb, rtol=1e-12, atol=1e-14)


def test_checks_catch_disagreement_and_a_loss_that_does_not_fall():
    ok = {"numpy": [2.0, 1.5], "portagrad": [2.0, 1.5 + 1e-6]}
    assert "agree" in check_losses("w", ok)
    with pytest.raises(BenchmarkCheckError, match="disagree"):
        check_losses("w", {"numpy": [2.0, 1.5], "portagrad": [2.0, 1.6]})
    with pytest.raises(BenchmarkCheckError, match="did not decrease"):
        check_losses("w", {"numpy": [2.0, 2.1], "portagrad": [2.0, 2.1]})
    with pytest.raises(BenchmarkCheckError, match="not finite"):
        check_losses("w", {"numpy": [2.0, 1.5], "portagrad": [2.0, float("nan")]})
    with pytest.raises(BenchmarkCheckError, match="differs"):
        check_close("w", "H v", {"numpy": np.ones(3), "torch": np.array([1.0, 1.0, 1.1])})


def test_without_torch_the_torch_column_is_left_out():
    cfg = Config(steps=1, warmup=0, torch=False)
    results, ok = run_benchmarks(["dispatch"], cfg)
    assert ok
    (res,) = results
    assert {r.impl for r in res.rows} == {"numpy", "portagrad"}
    assert all(r.vs_torch is None for r in res.rows)
    (target,) = res.targets
    assert target.met is None and "PyTorch left out" in target.note
    assert "n/a" in format_results(results)


def test_a_failing_workload_is_reported_and_the_others_still_run(monkeypatch):
    def broken(cfg):
        raise BenchmarkCheckError("mlp: portagrad losses disagree")

    monkeypatch.setitem(WORKLOADS, "mlp", broken)
    results, ok = run_benchmarks(["mlp", "dispatch"], Config(steps=1, warmup=0,
                                                              torch=False))
    assert not ok
    assert [r.workload for r in results] == ["mlp", "dispatch"]
    assert results[0].rows == [] and "check failed" in results[0].notes[0]
    assert results[1].rows


def test_bench_command_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    rc = bench_cli.main(["--in-process", "--workloads", "dispatch", "--steps", "1",
                         "--warmup", "0", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "dispatch" in text and "vs numpy min/med/max" in text
    assert "threads:" in text and "targets for portagrad" in text
    data = json.loads(out.read_text())
    assert data["config"]["steps"] == 1
    (res,) = data["results"]
    assert res["workload"] == "dispatch"
    assert {r["impl"] for r in res["rows"]} >= {"numpy", "portagrad"}
    assert "met" in res["targets"][0]


def test_bench_command_rejects_unknown_workloads(capsys):
    assert bench_cli.main(["--workloads", "mlp,nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_environment_names_threads_and_blas():
    env = environment(Config(torch=False))
    assert env["numpy"] == np.__version__
    pools = env["threadpools"]
    if not isinstance(pools, str):
        assert any(p["user_api"] == "blas" for p in pools)
    assert json.loads(to_json([], env, Config()))["environment"]["numpy"] == np.__version__


def test_profile_tells_blas_numpy_loops_and_python_apart():
    from portagrad._bench.profile import _classify

    top = ["step (portagrad/_bench/mlp.py:176)", "linear (portagrad/ops/nn/connection.py:49)",
           "_matmul (portagrad/ops/std/linalg/products.py:19)"]
    assert _classify(top + ["sgemm_kernel_HASWELL (libscipy_openblas64_-32a4b2a6.so)"]) == (
        "BLAS", "portagrad/ops", "ops/std/linalg/products.py:_matmul")
    loop = "execute_ufunc_loop (numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so)"
    assert _classify(top + [loop])[0] == "NumPy C"
    assert _classify(top + ["0x7f25a8c4524a (libc.so.6)"])[0] == "libc/kernel"
    assert _classify(top[:2] + ["apply (portagrad/tape/_node.py:197)"]) == (
        "Python", "portagrad/tape", "tape/_node.py:apply")


def test_cprofile_fallback_names_the_workload():
    from portagrad._bench.profile import cprofile_text

    text = cprofile_text("dispatch", Config(warmup=0), steps=1, top=3)
    assert text.startswith("dispatch / portagrad:")
    assert len(text.splitlines()) == 4


def test_standalone_benchmarks_check_and_time(capsys):
    # The scripts beside `portagrad bench`: their agreement checks pass and a table comes out.
    from benchmarks import bench_batchnorm, bench_conv, bench_jvp, bench_transformer_ops

    assert bench_conv.main(["--rounds", "1", "--batch", "2", "--channels", "4",
                            "--size", "8"]) == 0
    assert bench_batchnorm.main(["--rounds", "1"]) == 0
    assert bench_jvp.main(["--rounds", "1"]) == 0
    assert bench_transformer_ops.main(["--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "layer_norm forward+backward" in out and "scaled_dot_product_attention" in out
    assert "conv2d forward+backward" in out and "portagrad (fused)" in out
    assert "portagrad jvp (forward mode)" in out


def test_bench_command_runs_each_implementation_in_its_own_process(tmp_path, capsys):
    out = tmp_path / "bench.json"
    rc = bench_cli.main(["--workloads", "dispatch", "--steps", "2", "--warmup", "0",
                         "--threads", "1", "--no-torch", "--gc-off", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "a process per implementation at 1 thread(s), the collector on" in text
    assert "wall / 1 thread" in text and "check values agree across 2 processes" in text
    (res,) = json.loads(out.read_text())["results"]
    rows = {r["impl"]: r for r in res["rows"]}
    assert set(rows) == {"numpy", "portagrad"}
    for r in rows.values():
        assert r["threads"] == 1 and r["cpu"] > 0 and r["value"] > 0 and r["gc_off"] > 0
        assert r["peak_mb"] is None or r["peak_mb"] > 0
        assert r["cpu_vs_numpy"][0] <= r["cpu_vs_numpy"][1] <= r["cpu_vs_numpy"][2]


def test_process_checks_fail_loudly_with_every_value_printed():
    from portagrad._bench._common import Spec
    from portagrad._bench._procs import _Worker, check_values

    def worker(impl, values, form=""):
        w = _Worker(Spec(impl, lambda cfg: (None, None), form, ""), 1, None, "")
        w.check = np.array(values)
        return w

    same = [worker("numpy", [2.0, 1.5]), worker("portagrad", [2.0, 1.5], "loop")]
    (line,) = check_values("w", same, "losses", 1e-4)
    assert "agree across 2 processes" in line and "portagrad loop x1: 2.000000" in line
    with pytest.raises(BenchmarkCheckError, match="portagrad x1 disagrees with numpy x1.*"
                                                  "portagrad x1: 2.000000, 1.600000"):
        check_values("w", [worker("numpy", [2.0, 1.5]), worker("portagrad", [2.0, 1.6])],
                     "losses", 1e-4)
    with pytest.raises(BenchmarkCheckError, match="did not decrease"):
        check_values("w", [worker("numpy", [2.0, 2.1])], "losses", 1e-4)
    with pytest.raises(BenchmarkCheckError, match="disagrees"):
        check_values("w", [worker("numpy", [1.0, 0.0]), worker("torch", [1.0, 0.1])],
                     "close", 1e-3)


def test_problem_file_keeps_the_nesting_of_weights_and_batches(tmp_path):
    from portagrad._bench import hvp as hvp_workload
    from portagrad._bench._ipc import load_problem, save_problem

    prob = hvp_workload.problem(0)
    save_problem(str(tmp_path / "p.npz"), {"problem": prob, "settings": {"LR": 0.1}})
    back = load_problem(str(tmp_path / "p.npz"))
    assert back["settings"] == {"LR": 0.1}
    (w, b), = back["problem"].mlp.params[:1]
    np.testing.assert_array_equal(w, prob.mlp.params[0][0])
    assert w.dtype == np.float32 and isinstance(back["problem"].mlp.batches[0], tuple)
    np.testing.assert_array_equal(back["problem"].v[2][1], prob.v[2][1])


@pytest.mark.parametrize("name", ["resnet", "transformer"])
def test_resnet_and_transformer_first_losses_agree_with_torch(name):
    # One training step each (the process harness takes three and times them).
    import importlib

    module = importlib.import_module(f"portagrad._bench.{name}")
    cfg = Config(check_steps=1)
    losses = {s.impl: s.build(cfg)[0]() for s in module.SPECS.values()
              if s.impl != "torch" or HAS_TORCH}
    assert set(losses) == ({"portagrad", "torch"} if HAS_TORCH else {"portagrad"})
    if HAS_TORCH:
        check_losses(name, {k: list(v) for k, v in losses.items()}, rtol=1e-4)


@pytest.mark.parametrize("name", ["bench_mkl", "bench_native"])
def test_switch_benchmarks_time_both_sides(name, capsys):
    # A fast path switched on and off over the same steps: the first losses agree (or the
    # script exits) and one line of timings per workload comes out.
    import importlib

    from portagrad.xp import mkl_in_use, native_in_use

    if not (mkl_in_use() if name == "bench_mkl" else native_in_use()):
        pytest.skip(f"{name}: its switch has nothing to switch here")
    mod = importlib.import_module(f"benchmarks.{name}")
    assert mod.main(["--rounds", "2", "--warmup", "0", "--workloads", "mlp"]) == 0
    line = [s for s in capsys.readouterr().out.splitlines() if s.startswith("mlp")]
    assert len(line) == 1 and len(line[0].split()) == 8  # name, on, off, min / med / max
