"""Make the reference numbers of the architectures of Chainer 7's ImageNet example by
running Chainer 7.8.1 itself on them.

Run it with the interpreter of the Chainer 7.8.1 environment described in
``make_chainer_fixtures_distributions.py``, from the repository root (it imports the
example's model files from Chainer's own sources, ``--chainer-examples``, and nothing of
portagrad)::

    v/bin/python scripts/make_chainer_fixtures_imagenet.py --chainer-examples \
        <chainer checkout>/examples/imagenet

It writes ``tests/chainer/fixtures/train/imagenet_archs.json``. For each architecture:
a batch of two random images at the model's input size (``insize``) and labels 3 and 7;
a first forward sets the sizes of the lazily sized links; then every parameter is set
from its name alone (a generator seeded with the CRC-32 of the name: He-scaled normal
weights, biases and shifts near 0, scales near 1), so portagrad builds the same weights
without storing them. Recorded: what the model reports (``loss``, ``accuracy``...), the
sum of squares of each parameter's gradient, the sum and the sum of squares of each
persistent value after the forward (batch normalization's running statistics), and the
loss after one ``MomentumSGD(lr=0.01)`` update. Networks with dropout (alex, googlenet,
nin) run with ``train=False`` (their gradients are still taken) in float32; the
batch-normalized ones run in training mode and in float64 (``config.dtype``): at a batch
of two, batch normalization's gradients amplify float32's rounding past any useful
tolerance.
"""

import argparse
import json
import os
import sys
import zlib

import chainer
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "chainer",
                   "fixtures", "train", "imagenet_archs.json")

# architecture: (module, class, train mode and float64, as the batch-normalized nets run)
ARCHS = {"alex": ("alex", "Alex", False), "googlenet": ("googlenet", "GoogLeNet", False),
         "googlenetbn": ("googlenetbn", "GoogLeNetBN", True), "nin": ("nin", "NIN", False),
         "resnet50": ("resnet50", "ResNet50", True),
         "resnext50": ("resnext50", "ResNeXt50", True)}


def set_weights(model):
    """The weights the fixtures use, a function of each parameter's name (the same code
    is in tests/chainer/test_examples_imagenet.py)."""
    for name, p in sorted(model.namedparams()):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        shape = p.array.shape
        z = rng.standard_normal(shape, dtype=np.float32)
        if len(shape) >= 2:
            value = z * np.float32(np.sqrt(2.0 / np.prod(shape[1:])))
        elif name.endswith("/gamma"):
            value = 1 + 0.1 * z
        else:
            value = 0.1 * z
        p.array[...] = value


def inputs(insize):
    x = (np.random.RandomState(0).rand(2, 3, insize, insize) - 0.5).astype(
        chainer.get_dtype())
    return x, np.array([3, 7], np.int32)


def persistents(model):
    out = {}
    for path, link in model.namedlinks():
        for name in sorted(link._persistent):
            v = np.asarray(getattr(link, name), np.float64)
            out[f"{path}/{name}".replace("//", "/")] = [float(v.sum()),
                                                        float((v * v).sum())]
    return out


def run(model, train):
    x, t = inputs(model.insize)
    with chainer.using_config("train", train):
        model(x, t)  # the lazily sized links take their sizes
        set_weights(model)
        for link in model.links():  # running statistics back to their start
            if isinstance(link, chainer.links.BatchNormalization):
                link.avg_mean[...] = 0
                link.avg_var[...] = 1
                link.N = 0
        reporter = chainer.Reporter()
        reporter.add_observer("main", model)
        observation = {}
        with reporter.scope(observation):
            loss = model(x, t)
        model.cleargrads()
        loss.backward()
        grads = {name: float(np.square(p.grad.astype(np.float64)).sum())
                 for name, p in model.namedparams()}
        stats = persistents(model)
        opt = chainer.optimizers.MomentumSGD(lr=0.01)
        opt.setup(model)
        opt.update()
        after = float(model(x, t).array)
    return {"train": train, "insize": model.insize,
            "report": {k: float(chainer.backends.cuda.to_cpu(getattr(v, "array", v)))
                       for k, v in observation.items()},
            "grad_sq": grads, "persistent": stats, "loss_after_update": after}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chainer-examples", required=True)
    parser.add_argument("archs", nargs="*", default=sorted(ARCHS))
    args = parser.parse_args()
    sys.path.insert(0, args.chainer_examples)
    result = {}
    if os.path.exists(OUT):
        with open(OUT) as f:
            result = json.load(f)["archs"]
    for arch in args.archs:
        module, cls, train = ARCHS[arch]
        dtype = np.float64 if train else np.float32
        with chainer.using_config("dtype", dtype):
            model = getattr(__import__(module), cls)()
            result[arch] = {**run(model, train), "dtype": np.dtype(dtype).name}
        print(arch, result[arch]["report"], result[arch]["loss_after_update"], flush=True)
    with open(OUT, "w") as f:
        json.dump({"chainer": chainer.__version__, "archs": result}, f, indent=0,
                  sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
