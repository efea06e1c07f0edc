"""Record Chainer 7.8.1's answers for the tests of portagrad's Chainer face (functions,
links, initializers, npz serialization) into ``tests/chainer/fixtures/core/``.

Chainer 7.8.1 needs NumPy < 2, so it runs in its own environment, not the project's::

    python3.11 -m venv v && v/bin/pip install numpy==1.26.4 'setuptools<70' \\
        && v/bin/pip install --no-build-isolation chainer==7.8.1 && v/bin/pip install scipy==1.13.1
    v/bin/python scripts/make_chainer_fixtures_core.py

It is rerunnable (it overwrites the fixtures). ``--parts functions links`` writes only
those files; ``--only CASE ...`` records only those cases and keeps every other stored
value of ``functions.npz`` and ``links.npz``. It writes:

``functions.npz``
    For every case of ``tests/chainer/_core_cases.py``: ``<case>/out<k>`` the outputs,
    ``<case>/g<i>`` (``i`` an argument, or a path ``4.0.5`` into a list argument) the
    gradient of ``sum(w * y)`` (weights ``w`` drawn from the case's
    generator after its inputs) with respect to argument ``i``, and ``<case>/gg<i>`` the
    second-order gradient of ``sum(v * g)`` over those gradients (``v`` drawn next), where
    Chainer has double backpropagation for the function.
``links.npz``
    For every case of ``tests/chainer/_link_cases.py``, built after
    ``numpy.random.seed(<index>)`` with ``config.dtype`` float64: ``<case>/param<path>``
    the initial parameters (``lazyparam`` for those created by the call),
    ``<case>/out<k>``, ``<case>/gx<i>``, ``<case>/gp<path>``, the second-order
    ``<case>/ggp<path>`` (the gradient of ``sum(v * g)`` over all first-order gradients
    ``g`` of the inputs and parameters), and the persistent values after the call
    ``<case>/persist<path>``.
``initializers.npz``
    ``<name>`` arrays drawn after ``numpy.random.seed(7)``.
``model_shapes.npz``
    The names and shapes of the parameters and persistent values of ResNet50Layers,
    ResNet101Layers, ResNet152Layers, GoogLeNet, VGG16Layers and VGG19Layers
    (``<model><path>``).
``model_outputs.npz``
    Some activations of those models in test mode (``<model>/<layer>``), built after
    ``numpy.random.seed(0)`` with ``pretrained_model=None``, on two images drawn from
    ``default_rng(seed_of(<model>))``: 64 x 64 for the ResNets, 224 x 224 for the others.
``chainer_model.npz``, ``chainer_model.h5`` and ``chainer_model_expected.npz``
    A small model saved by ``chainer.serializers.save_npz`` (and ``save_hdf5`` when h5py
    is installed: ``v/bin/pip install h5py==3.11.0``) after one training step's forward,
    and its output on a fixed input in test mode.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import traceback

import numpy as np

if not hasattr(np, "float"):  # Chainer 7 still spells it numpy.float
    np.float = float  # type: ignore[attr-defined]

import chainer  # noqa: E402
import chainer.functions as F  # noqa: E402
import chainer.initializers as I  # noqa: E402
import chainer.links as L  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests", "chainer")
OUT = os.path.join(TESTS, "fixtures", "core")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(TESTS, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seed_of(cid: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


def _flat(out):
    outs = []
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        outs.extend(o if isinstance(o, (tuple, list)) else [o])
    return [o if isinstance(o, chainer.Variable) else chainer.Variable(np.asarray(o))
            for o in outs]


def _weighted_sum(outs, rng):
    total = None
    for o in outs:
        if o.dtype.kind != "f":
            continue
        w = rng.uniform(-1, 1, size=o.shape).astype(o.dtype)
        ok = np.isfinite(o.array)
        if not ok.all():
            o = F.where(ok, o, np.zeros_like(o.array))
        term = F.sum(o * w)
        total = term if total is None else total + term
    return total


def functions(store: dict, only=None) -> None:
    cases = _load("_core_cases")
    for cid, name, make in cases.CASES:
        if only is not None and cid not in only:
            continue
        rng = np.random.default_rng(seed_of(cid))
        args, kwargs, diff = make(rng)
        args = list(args)
        vs = {}
        for i in diff:
            vs[i] = chainer.Variable(np.asarray(cases.get_path(args, i)))
            cases.set_path(args, i, vs[i])
        try:
            outs = _flat(getattr(F, name)(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - reported, the case is left out
            print(f"{cid}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            continue
        for k, o in enumerate(outs):
            store[f"{cid}/out{k}"] = o.array
        if not diff:
            continue
        total = _weighted_sum(outs, rng)
        if total is None:
            continue
        targets = [vs[i] for i in diff]
        double = True
        try:
            gs = chainer.grad([total], targets, enable_double_backprop=True)
        except Exception as e:  # noqa: BLE001
            # Some functions refuse to record their backward (forget): their first
            # derivative alone, without double backpropagation.
            print(f"{cid} grad: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            try:
                gs = chainer.grad([total], targets)
            except Exception as e:  # noqa: BLE001
                print(f"{cid} grad: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
                continue
            double = False
        for i, g in zip(diff, gs):
            store[f"{cid}/g{cases.path_key(i)}"] = (np.zeros_like(vs[i].array) if g is None
                                                   else g.array)
        if not double:
            continue
        try:
            terms = [F.sum(g * rng.uniform(-1, 1, size=g.shape).astype(g.dtype))
                     for g in gs if g is not None]
            second = terms[0]
            for t in terms[1:]:
                second = second + t
            ggs = chainer.grad([second], targets)
        except Exception as e:  # noqa: BLE001 - no double backprop there in Chainer
            print(f"{cid} second order: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
            continue
        for i, g in zip(diff, ggs):
            store[f"{cid}/gg{cases.path_key(i)}"] = (np.zeros_like(vs[i].array) if g is None
                                                    else g.array)


def links(store: dict, only=None) -> None:
    cases = _load("_link_cases")
    for index, (lid, build, inputs, call) in enumerate(cases.LINKS):
        if only is not None and lid not in only:
            continue
        dtype = np.float32 if lid in cases.FLOAT32 else np.float64
        try:
            with chainer.using_config("dtype", dtype):
                np.random.seed(index)
                link = build(L, F)
                rng = np.random.default_rng(seed_of(lid))
                xs = [chainer.Variable(a.astype(dtype)) for a in inputs(rng)]
                for path, p in link.namedparams():
                    if p.array is not None:
                        store[f"{lid}/param{path}"] = p.array.copy()
                outs = _flat(call(link, F, *xs))
                for path, p in link.namedparams():  # lazily created ones
                    if f"{lid}/param{path}" not in store:
                        store[f"{lid}/lazyparam{path}"] = p.array.copy()
                for k, o in enumerate(outs):
                    store[f"{lid}/out{k}"] = o.array
                total = _weighted_sum(outs, rng)
                params = [p for _, p in link.namedparams()]
                names = [n for n, _ in link.namedparams()]
                gs = chainer.grad([total], xs + params, enable_double_backprop=True)
                for i, g in enumerate(gs[:len(xs)]):
                    store[f"{lid}/gx{i}"] = (np.zeros_like(xs[i].array) if g is None
                                             else g.array)
                for n, g in zip(names, gs[len(xs):]):
                    if g is not None:
                        store[f"{lid}/gp{n}"] = g.array
                for path, sub in link.namedlinks():
                    for name in sorted(sub._persistent):
                        v = sub.__dict__[name]
                        if v is not None:
                            store[f"{lid}/persist{path.rstrip('/')}/{name}"] = np.asarray(v)
        except Exception as e:  # noqa: BLE001 - reported, the case is left out
            print(f"link {lid}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            traceback.print_exc(limit=2)
            continue
        # The second order: the gradient of sum(v * g) over every first-order gradient
        # (of the inputs, then of the parameters), with respect to the parameters.
        firsts = [g for g in gs if g is not None]
        try:
            with chainer.using_config("dtype", dtype):
                second = None
                for g in firsts:
                    t = F.sum(g * rng.uniform(-1, 1, size=g.shape).astype(dtype))
                    second = t if second is None else second + t
                ggs = chainer.grad([second], params)
        except Exception as e:  # noqa: BLE001 - no double backprop there in Chainer
            print(f"link {lid} second order: {type(e).__name__}: {str(e)[:120]}",
                  file=sys.stderr)
            continue
        for n, g in zip(names, ggs):
            if g is not None:
                store[f"{lid}/ggp{n}"] = g.array


INITIALIZERS = {
    "Constant": lambda: I.Constant(0.25), "Zero": I.Zero, "One": I.One, "NaN": I.NaN,
    "Identity": lambda: I.Identity(2.0), "Normal": lambda: I.Normal(0.3),
    "LeCunNormal": I.LeCunNormal, "GlorotNormal": I.GlorotNormal, "HeNormal": I.HeNormal,
    "HeNormal_fan_out": lambda: I.HeNormal(fan_option="fan_out"),
    "Uniform": lambda: I.Uniform(0.2), "LeCunUniform": I.LeCunUniform,
    "GlorotUniform": I.GlorotUniform, "HeUniform": I.HeUniform,
    "Orthogonal": I.Orthogonal, "Orthogonal_wide": I.Orthogonal,
    "UpsamplingDeconvFilter": I.UpsamplingDeconvFilter,
    "DownsamplingConvFilter": I.DownsamplingConvFilter,
}
INIT_SHAPES = {"Identity": (3, 3), "Orthogonal_wide": (3, 5),
               "UpsamplingDeconvFilter": (2, 2, 4, 4), "DownsamplingConvFilter": (2, 2, 3, 3)}


def initializers(store: dict) -> None:
    for name, make in INITIALIZERS.items():
        np.random.seed(7)
        shape = INIT_SHAPES.get(name, (4, 3, 2))
        store[name] = chainer.initializers.generate_array(make(), shape, np,
                                                          dtype=np.float64)


def serializer_model() -> None:
    model_mod = _load("_serializer_model")
    with chainer.using_config("dtype", np.float32):
        np.random.seed(3)
        model = model_mod.build(chainer, L, F)
        x = np.random.default_rng(1).uniform(-1, 1, (4, 3, 6, 6)).astype(np.float32)
        model(x)  # one training-mode forward moves the batch statistics
        chainer.serializers.save_npz(os.path.join(OUT, "chainer_model.npz"), model)
        try:
            chainer.serializers.save_hdf5(os.path.join(OUT, "chainer_model.h5"), model)
        except (ImportError, RuntimeError) as e:  # h5py is optional, as in Chainer
            print(f"chainer_model.h5 not written: {e}", file=sys.stderr)
        with chainer.using_config("train", False):
            y = model(x)
        np.savez(os.path.join(OUT, "chainer_model_expected.npz"), x=x, y=y.array)


IMAGE_MODELS = ("ResNet50Layers", "ResNet101Layers", "ResNet152Layers", "GoogLeNet",
                "VGG16Layers", "VGG19Layers")

# The layers recorded by model_outputs, and the input's height and width: GoogLeNet's
# and VGG's classifiers take 224 x 224 only; ResNet pools globally and takes 64 x 64.
MODEL_LAYERS = {
    "ResNet": (64, ("pool5", "fc6", "prob")),
    "GoogLeNet": (224, ("pool5", "loss3_fc", "prob", "loss1_fc2", "loss2_fc2")),
    "VGG": (224, ("fc6", "fc7", "fc8", "prob")),
}


def model_shapes() -> None:
    """The parameter and persistent names and shapes of the image models."""
    store = {}
    for name in IMAGE_MODELS:
        model = getattr(L, name)(pretrained_model=None)
        for path, p in model.namedparams():
            store[f"{name}{path}"] = np.array(p.shape)
        for path, link in model.namedlinks():
            for pname in sorted(link._persistent):
                v = np.asarray(link.__dict__[pname])
                store[f"{name}{path.rstrip('/')}/{pname}"] = np.array(v.shape)
        del model
    np.savez_compressed(os.path.join(OUT, "model_shapes.npz"), **store)


def model_outputs() -> None:
    """The image models' activations in test mode, built after ``numpy.random.seed(0)``
    with ``pretrained_model=None``, on two images drawn from ``default_rng(seed_of(name))``
    (``<model>/<layer>``)."""
    store = {}
    for name in IMAGE_MODELS:
        size, layers = next(v for k, v in MODEL_LAYERS.items() if name.startswith(k))
        np.random.seed(0)
        model = getattr(L, name)(pretrained_model=None)
        x = np.random.default_rng(seed_of(name)).uniform(
            -1, 1, (2, 3, size, size)).astype(np.float32)
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            out = model(x, layers=list(layers))
        for layer in layers:
            store[f"{name}/{layer}"] = out[layer].array
        del model
    np.savez_compressed(os.path.join(OUT, "model_outputs.npz"), **store)


PARTS = ("functions", "links", "initializers", "serializer_model", "model_shapes",
         "model_outputs")


def _write(name: str, fill, only) -> None:
    """Fill ``<name>.npz``; with ``only``, record those cases alone and keep every other
    stored value of the file as it is."""
    path = os.path.join(OUT, f"{name}.npz")
    store: dict = {}
    if only is not None:
        with np.load(path) as old:
            store = {k: old[k] for k in old.files if k.split("/")[0] not in only}
    new: dict = {}
    if only is None:
        fill(new)
    else:
        fill(new, only)
    store.update(new)
    np.savez_compressed(path, **store)
    print(f"{name}: {len(new)} arrays recorded, {len(store)} stored", file=sys.stderr)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Record Chainer 7.8.1's answers into "
                                                 "tests/chainer/fixtures/core/.")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="the files to write (all of them by default)")
    parser.add_argument("--only", nargs="+", metavar="CASE",
                        help="record only these cases of functions.npz and links.npz, "
                             "keeping the other stored values of those files")
    args = parser.parse_args(argv)
    only = None if args.only is None else set(args.only)
    os.makedirs(OUT, exist_ok=True)
    for name, fill in (("functions", functions), ("links", links),
                       ("initializers", initializers)):
        if name in args.parts:
            _write(name, fill, None if name == "initializers" else only)
    if "serializer_model" in args.parts:
        serializer_model()
    if "model_shapes" in args.parts:
        model_shapes()
    if "model_outputs" in args.parts:
        model_outputs()


if __name__ == "__main__":
    main()
