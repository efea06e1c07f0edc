"""pg.nn's modules against torch.nn's: the same arguments, torch's state dict loaded (as
NumPy arrays), outputs and gradients (input and parameters) in float64 at rtol 1e-6, the
same state_dict keys, the same missing/unexpected keys on a mismatched dict, and a
safetensors file written by ``safetensors.torch`` loading as it is."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-6, 1e-9


def _np(v):
    return pg.xp.to_numpy(getattr(v, "array", v))


def _outputs(y):
    """The differentiable outputs of a forward, flattened (tuples, (h, c) pairs, None)."""
    if y is None:
        return []
    if isinstance(y, (tuple, list)):
        return [o for item in y for o in _outputs(item)]
    return [y]


def _pair(name, args, kwargs):
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(nn, name)(*args, **kwargs, dtype="float64")
    return theirs, ours


# name, constructor args, kwargs, input shapes (float unless an int tuple is given as
# ("int", shape, high)), training mode
CASES = [
    ("Linear", (5, 3), {}, [(4, 5)], False),
    ("Linear", (5, 3), {"bias": False}, [(2, 7, 5)], False),
    ("Bilinear", (3, 4, 2), {}, [(5, 3), (5, 4)], False),
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, [(2, 3, 9)], False),
    ("Conv2d", (4, 6, 3), {"groups": 2, "dilation": 2, "padding": "same"}, [(2, 4, 7, 7)],
     False),
    ("Conv2d", (2, 3, (3, 2)), {"padding": (1, 2), "padding_mode": "reflect"},
     [(1, 2, 5, 6)], False),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "circular", "bias": False},
     [(1, 2, 5, 5)], False),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "replicate"}, [(1, 2, 4, 4)], False),
    ("Conv3d", (2, 2, 2), {"padding": "valid"}, [(1, 2, 4, 3, 3)], False),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "output_padding": 1}, [(2, 3, 5)], False),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2, "dilation": 1},
     [(1, 4, 4, 3)], False),
    ("ConvTranspose3d", (2, 3, 2), {"stride": (1, 2, 2)}, [(1, 2, 2, 3, 3)], False),
    ("BatchNorm1d", (4,), {}, [(6, 4)], True),
    ("BatchNorm1d", (4,), {"momentum": None, "affine": False}, [(6, 4, 3)], True),
    ("BatchNorm2d", (3,), {"momentum": 0.3}, [(4, 3, 2, 2)], True),
    ("BatchNorm2d", (3,), {}, [(4, 3, 2, 2)], False),
    ("BatchNorm3d", (2,), {"track_running_stats": False}, [(2, 2, 2, 2, 3)], False),
    ("InstanceNorm1d", (3,), {"affine": True}, [(2, 3, 5)], True),
    ("InstanceNorm2d", (3,), {"track_running_stats": True}, [(2, 3, 4, 4)], True),
    ("InstanceNorm3d", (2,), {}, [(2, 2, 3, 3, 3)], True),
    ("LayerNorm", ((3, 4),), {}, [(2, 3, 4)], False),
    ("LayerNorm", (4,), {"bias": False, "eps": 1e-3}, [(5, 4)], False),
    ("GroupNorm", (2, 4), {}, [(3, 4, 5)], False),
    ("RMSNorm", (4,), {"eps": 1e-6}, [(3, 4)], False),
    ("Embedding", (7, 3), {"padding_idx": 1}, [("int", (2, 4), 7)], False),
    ("EmbeddingBag", (7, 3), {"mode": "sum"}, [("int", (2, 4), 7)], False),
    ("EmbeddingBag", (7, 3), {"mode": "max"}, [("int", (3, 2), 7)], False),
    ("PReLU", (3,), {}, [(2, 3, 4)], False),
    ("RNN", (3, 4), {"num_layers": 2, "nonlinearity": "relu"}, [(5, 2, 3)], False),
    ("RNN", (3, 4), {"bidirectional": True, "batch_first": True}, [(2, 5, 3)], False),
    ("LSTM", (3, 4), {}, [(5, 2, 3)], False),
    ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True, "batch_first": True},
     [(2, 4, 3)], False),
    ("LSTM", (3, 5), {"proj_size": 2}, [(4, 2, 3)], False),
    ("LSTM", (3, 4), {"bias": False}, [(4, 3)], False),
    ("GRU", (3, 4), {"num_layers": 2}, [(4, 2, 3)], False),
    ("GRU", (3, 4), {"bidirectional": True}, [(4, 2, 3)], False),
    ("RNNCell", (3, 4), {"nonlinearity": "tanh"}, [(2, 3)], False),
    ("LSTMCell", (3, 4), {}, [(2, 3)], False),
    ("GRUCell", (3, 4), {}, [(2, 3)], False),
    ("MultiheadAttention", (8, 2), {}, [(4, 2, 8), (3, 2, 8), (3, 2, 8)], False),
    ("MultiheadAttention", (8, 2), {"batch_first": True, "add_bias_kv": True,
                                    "add_zero_attn": True, "kdim": 5, "vdim": 6},
     [(2, 4, 8), (2, 3, 5), (2, 3, 6)], False),
    ("TransformerEncoderLayer", (8, 2, 16), {"dropout": 0.0}, [(4, 2, 8)], False),
    ("TransformerEncoderLayer", (8, 2, 16), {"dropout": 0.0, "norm_first": True,
                                             "activation": "gelu", "batch_first": True},
     [(2, 4, 8)], False),
    ("TransformerDecoderLayer", (8, 2, 16), {"dropout": 0.0}, [(4, 2, 8), (3, 2, 8)], False),
    ("Transformer", (8, 2, 2, 1, 16), {"dropout": 0.0}, [(5, 2, 8), (3, 2, 8)], False),
    ("AdaptiveLogSoftmaxWithLoss", (8, 10, [3, 6]), {"div_value": 2.0, "head_bias": True},
     [(7, 8), ("int", (7,), 10)], False),
    ("AdaptiveLogSoftmaxWithLoss", (6, 5, [1]), {}, [(4, 6), ("int", (4,), 5)], False),
    ("LinearCrossEntropyLoss", (4, 6), {}, [(5, 4), ("int", (5,), 6)], False),
    ("LinearCrossEntropyLoss", (4, 6), {"bias": True, "out_features": (2, 3),
                                        "label_smoothing": 0.1, "reduction": "sum"},
     [(5, 4), ("int", (5, 2, 3), 6)], False),
]


def _inputs(specs, rng):
    out = []
    for s in specs:
        if s[0] == "int":
            out.append(rng.integers(0, s[2], size=s[1]))
        else:
            out.append(rng.normal(size=s))
    return out


def _ids(case):
    name, args, kwargs = case[:3]
    return f"{name}{args}{''.join(f',{k}={v}' for k, v in kwargs.items())}"


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_module_matches_torch(case, rng):
    name, args, kwargs, specs, training = case
    theirs, ours = _pair(name, args, kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    result = ours.load_state_dict({k: v.detach().numpy() for k, v in
                                   theirs.state_dict().items()})
    assert result == ([], []) and result.missing_keys == []
    theirs.train(training)
    ours.train(training)
    xs = _inputs(specs, rng)
    floats = [i for i, s in enumerate(specs) if s[0] != "int"]
    xt = [torch.tensor(x, requires_grad=i in floats) for i, x in enumerate(xs)]
    xv = [pg.Variable(x) if i in floats else x for i, x in enumerate(xs)]
    yt = _outputs(theirs(*xt))
    yv = _outputs(ours(*xv))
    assert len(yt) == len(yv)
    for a, b in zip(yv, yt):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=RTOL, atol=ATOL)
    # One backward through every output with the same random cotangents.
    cots = [rng.normal(size=tuple(b.shape)) for b in yt]
    sum(((b * torch.tensor(c)).sum() for b, c in zip(yt, cots) if b.requires_grad),
        torch.zeros((), dtype=torch.float64)).backward()
    total = None
    for a, c in zip(yv, cots):
        if isinstance(a, pg.Variable) and a.requires_grad:
            term = pg.ops.sum(a * c)
            total = term if total is None else total + term
    total.backward()
    for i in floats:
        np.testing.assert_allclose(xv[i].grad, xt[i].grad.numpy(), rtol=RTOL, atol=ATOL)
    tparams = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        g = tparams[n].grad
        if g is None:
            assert p.grad is None or not np.any(p.grad), n
            continue
        np.testing.assert_allclose(p.grad, g.numpy(), rtol=RTOL, atol=ATOL, err_msg=n)
    # Buffers (running statistics, counters) after the forward.
    tbufs = dict(theirs.named_buffers())
    for n, b in ours.named_buffers():
        np.testing.assert_allclose(_np(b), tbufs[n].numpy(), rtol=RTOL, atol=ATOL, err_msg=n)


def _f(rng, *shape):
    return rng.normal(size=shape)


# Parameter-free modules: name, args, kwargs, inputs (callables of rng), training mode
FREE = [
    ("ReLU", (), {}, [(3, 4)]), ("ReLU6", (), {}, [(3, 4)]), ("LeakyReLU", (0.2,), {}, [(5,)]),
    ("ELU", (0.7,), {}, [(5,)]), ("SELU", (), {}, [(5,)]), ("CELU", (1.3,), {}, [(5,)]),
    ("GELU", (), {"approximate": "tanh"}, [(5,)]), ("GELU", (), {}, [(5,)]),
    ("SiLU", (), {}, [(5,)]), ("Mish", (), {}, [(5,)]), ("Sigmoid", (), {}, [(5,)]),
    ("Tanh", (), {}, [(5,)]), ("Softplus", (2.0, 3.0), {}, [(6,)]), ("Softsign", (), {}, [(5,)]),
    ("Hardtanh", (-0.5, 0.7), {}, [(6,)]), ("Hardsigmoid", (), {}, [(6,)]),
    ("Hardswish", (), {}, [(6,)]), ("Hardshrink", (0.3,), {}, [(6,)]),
    ("Softshrink", (0.3,), {}, [(6,)]), ("Tanhshrink", (), {}, [(6,)]),
    ("LogSigmoid", (), {}, [(6,)]), ("Softmax", (1,), {}, [(3, 4)]),
    ("LogSoftmax", (-1,), {}, [(3, 4)]), ("Softmin", (0,), {}, [(3, 4)]),
    ("Softmax2d", (), {}, [(2, 3, 2, 2)]), ("GLU", (1,), {}, [(3, 4)]),
    ("Threshold", (0.1, -2.0), {}, [(6,)]), ("Identity", (), {}, [(3,)]),
    ("LocalResponseNorm", (3,), {}, [(2, 5, 3, 3)]),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, [(2, 3, 8)]),
    ("MaxPool2d", (2,), {"ceil_mode": True}, [(1, 2, 5, 5)]),
    ("MaxPool3d", (2,), {}, [(1, 1, 4, 4, 4)]),
    ("AvgPool1d", (3,), {"stride": 1, "padding": 1, "count_include_pad": False},
     [(2, 2, 6)]),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [(1, 2, 4, 4)]),
    ("AvgPool3d", (2,), {"ceil_mode": True}, [(1, 1, 3, 4, 4)]),
    ("LPPool1d", (2, 3), {}, [(1, 2, 7)]), ("LPPool2d", (3, 2), {}, [("pos", (1, 2, 4, 4))]),
    ("AdaptiveAvgPool1d", (3,), {}, [(2, 3, 7)]), ("AdaptiveAvgPool2d", ((2, 3),), {},
                                                   [(1, 2, 5, 7)]),
    ("AdaptiveAvgPool3d", (2,), {}, [(1, 1, 3, 4, 5)]), ("AdaptiveMaxPool1d", (2,), {},
                                                        [(2, 3, 5)]),
    ("AdaptiveMaxPool2d", (3,), {}, [(1, 2, 5, 7)]), ("AdaptiveMaxPool3d", (2,), {},
                                                     [(1, 1, 3, 4, 5)]),
    ("ZeroPad1d", ((1, 2),), {}, [(1, 2, 4)]), ("ZeroPad2d", (1,), {}, [(1, 2, 3, 3)]),
    ("ZeroPad3d", ((1, 0, 0, 1, 1, 1),), {}, [(1, 1, 2, 2, 2)]),
    ("ConstantPad1d", (2, 3.5), {}, [(2, 3)]), ("ConstantPad2d", ((1, 0, 2, 1), -1.0), {},
                                                [(1, 2, 3)]),
    ("ConstantPad3d", (1, 0.5), {}, [(1, 1, 2, 2, 2)]),
    ("ReflectionPad1d", (2,), {}, [(1, 2, 5)]), ("ReflectionPad2d", ((1, 2, 0, 1),), {},
                                                 [(1, 2, 4, 4)]),
    ("ReflectionPad3d", (1,), {}, [(1, 1, 3, 3, 3)]),
    ("ReplicationPad1d", ((3, 1),), {}, [(1, 2, 4)]), ("ReplicationPad2d", (2,), {},
                                                       [(1, 2, 3, 3)]),
    ("ReplicationPad3d", (1,), {}, [(1, 1, 2, 3, 2)]),
    ("CircularPad1d", (2,), {}, [(1, 2, 4)]), ("CircularPad2d", ((1, 1, 2, 0),), {},
                                               [(1, 2, 3, 3)]),
    ("CircularPad3d", (1,), {}, [(1, 1, 2, 3, 3)]),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, [(1, 2, 3, 3)]),
    ("Upsample", (), {"size": (5, 4), "mode": "bilinear", "align_corners": False},
     [(1, 2, 3, 3)]),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, [(1, 1, 2, 3)]),
    ("UpsamplingBilinear2d", (), {"size": 5}, [(1, 1, 3, 3)]),
    ("PixelShuffle", (2,), {}, [(1, 8, 2, 3)]), ("PixelUnshuffle", (2,), {}, [(1, 2, 4, 6)]),
    ("ChannelShuffle", (2,), {}, [(1, 6, 2, 2)]),
    ("Flatten", (), {}, [(2, 3, 4)]), ("Flatten", (0, 1), {}, [(2, 3, 4)]),
    ("Unflatten", (1, (2, 3)), {}, [(2, 6, 4)]),
    ("Fold", ((4, 5), (2, 2)), {}, [(1, 12, 12)]),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, [(1, 2, 4, 5)]),
    ("CosineSimilarity", (1,), {}, [(3, 4), (3, 4)]),
    ("PairwiseDistance", (), {"p": 3.0, "keepdim": True}, [(3, 4), (3, 4)]),
    ("Dropout", (0.4,), {}, [(3, 4)]), ("Dropout2d", (), {}, [(2, 3, 2, 2)]),
    ("AlphaDropout", (0.3,), {}, [(3, 4)]),
    ("L1Loss", (), {}, [(3, 4), (3, 4)]), ("MSELoss", (), {"reduction": "sum"},
                                             [(3, 4), (3, 4)]),
    ("HuberLoss", (), {"delta": 0.5}, [(6,), (6,)]),
    ("SmoothL1Loss", (), {"beta": 0.5, "reduction": "none"}, [(6,), (6,)]),
    ("SoftMarginLoss", (), {}, [(6,), "sign"]),
    ("GaussianNLLLoss", (), {"full": True}, [(4, 2), (4, 2), "pos"]),
    ("PoissonNLLLoss", (), {"full": True, "log_input": True}, [(4, 2), "pos"]),
    ("KLDivLoss", (), {"reduction": "batchmean", "log_target": True}, [(3, 4), (3, 4)]),
    ("BCEWithLogitsLoss", (), {}, [(3, 4), "prob"]),
    ("BCELoss", (), {}, [("prob", (3, 4)), "prob"]),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}, [(4, 5), ("int", (4,), 5)]),
    ("NLLLoss", (), {"ignore_index": 2}, [(4, 5), ("int", (4,), 5)]),
    ("MultiMarginLoss", (), {"p": 2, "margin": 0.5}, [(4, 5), ("int", (4,), 5)]),
    ("MultiLabelSoftMarginLoss", (), {}, [(3, 4), "binary"]),
    ("HingeEmbeddingLoss", (), {"margin": 0.5}, [(6,), "sign"]),
    ("MarginRankingLoss", (), {"margin": 0.2}, [(5,), (5,), "sign"]),
    ("CosineEmbeddingLoss", (), {"margin": 0.1}, [(3, 4), (3, 4), ("sign", (3,))]),
    ("TripletMarginLoss", (), {"margin": 0.5, "swap": True}, [(3, 4), (3, 4), (3, 4)]),
    ("TripletMarginWithDistanceLoss", (), {"margin": 0.3}, [(3, 4), (3, 4), (3, 4)]),
]


def _free_inputs(specs, rng, shape0):
    out = []
    for s in specs:
        if isinstance(s, str) or (isinstance(s, tuple) and isinstance(s[0], str)
                                  and s[0] != "int"):
            kind, shape = (s, shape0) if isinstance(s, str) else s
            if kind == "sign":
                out.append(np.where(rng.normal(size=shape) > 0, 1.0, -1.0))
            elif kind == "pos":
                out.append(rng.uniform(0.5, 2.0, size=shape))
            elif kind == "prob":
                out.append(rng.uniform(0.05, 0.95, size=shape))
            else:
                out.append((rng.uniform(size=shape) > 0.5).astype(np.float64))
        elif s[0] == "int":
            out.append(rng.integers(0, s[2], size=s[1]))
        else:
            out.append(rng.normal(size=s))
    return out


@pytest.mark.parametrize("case", FREE, ids=[_ids(c) for c in FREE])
def test_parameter_free_module_matches_torch(case, rng):
    name, args, kwargs, specs = case
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    if "Dropout" in name:  # random masks differ between libraries: evaluation mode
        theirs.eval()
        ours.eval()
    first = next(s if isinstance(s[0], int) else s[1] for s in specs
                 if isinstance(s, tuple) and s[0] not in ("int", "sign"))
    xs = _free_inputs(specs, rng, first)
    xt = [torch.tensor(x, requires_grad=i == 0) for i, x in enumerate(xs)]
    xv = [pg.Variable(x) if i == 0 else x for i, x in enumerate(xs)]
    yt, yv = theirs(*xt), ours(*xv)
    np.testing.assert_allclose(_np(yv), yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    c = rng.normal(size=tuple(yt.shape))
    (yt * torch.tensor(c)).sum().backward()
    pg.ops.sum(yv * c).backward()
    np.testing.assert_allclose(xv[0].grad, xt[0].grad.numpy(), rtol=RTOL, atol=ATOL)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_module_names_cover_torch_nn():
    import inspect

    names = [n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n))
             and issubclass(getattr(torch.nn, n), torch.nn.Module)]
    missing = sorted(n for n in names if not hasattr(nn, n))
    assert len(names) - len(missing) >= 150, missing


def _tree():
    tn = torch.nn
    theirs = tn.Sequential(tn.Conv2d(1, 2, 3), tn.BatchNorm2d(2), tn.ReLU(), tn.Flatten(),
                           tn.Linear(8, 3))
    ours = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8, 3))
    return theirs, ours


def test_state_dict_keys_and_order_of_a_tree():
    theirs, ours = _tree()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in
                                                        theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]


@pytest.mark.parametrize("edit", ["drop", "extra", "both"])
def test_non_strict_load_reports_what_torch_reports(edit):
    theirs, ours = _tree()
    sd = {k: v.clone() for k, v in theirs.state_dict().items()}
    if edit in ("drop", "both"):
        del sd["1.running_var"], sd["4.bias"]
    if edit in ("extra", "both"):
        sd["5.weight"] = torch.zeros(2)
        sd["head.bias"] = torch.zeros(1)
    want = theirs.load_state_dict(sd, strict=False)
    got = ours.load_state_dict({k: v.numpy() for k, v in sd.items()}, strict=False)
    assert got.missing_keys == want.missing_keys
    assert got.unexpected_keys == want.unexpected_keys
    with pytest.raises(RuntimeError) as t_err:
        theirs.load_state_dict(sd)
    with pytest.raises(pg.CheckpointError) as p_err:
        ours.load_state_dict({k: v.numpy() for k, v in sd.items()})
    for line in str(t_err.value).splitlines()[1:]:
        assert line.strip() in str(p_err.value)


def test_size_mismatch_raises_as_torch_even_when_not_strict():
    theirs, ours = _tree()
    sd = {k: v.numpy() for k, v in theirs.state_dict().items()}
    sd["4.weight"] = np.zeros((3, 9))
    with pytest.raises(pg.CheckpointError, match="size mismatch for 4.weight"):
        ours.load_state_dict(sd, strict=False)


def test_safetensors_file_written_by_torch_loads(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    theirs, ours = _tree()
    theirs.eval()
    ours.eval()
    with torch.no_grad():
        theirs[1].running_mean.uniform_(-1, 1)
    path = tmp_path / "x.safetensors"
    st.save_file(theirs.state_dict(), str(path))
    assert ours.load_state_dict(path) == ([], [])
    x = np.random.default_rng(0).normal(size=(2, 1, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(x).array, theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert ours[1].num_batches_tracked.dtype == np.int64


def test_pickled_torch_file_is_refused_with_the_way_to_convert(tmp_path):
    theirs, ours = _tree()
    path = tmp_path / "x.pt"
    torch.save(theirs.state_dict(), path)
    with pytest.raises(pg.CheckpointError, match="safetensors.torch.save_file"):
        ours.load_state_dict(str(path))


def test_lazy_modules_become_their_torch_class():
    for lazy, shape, full in [(nn.LazyLinear(3), (2, 5), nn.Linear),
                              (nn.LazyConv2d(4, 3), (1, 2, 5, 5), nn.Conv2d),
                              (nn.LazyConvTranspose1d(2, 3), (1, 3, 4), nn.ConvTranspose1d),
                              (nn.LazyBatchNorm2d(), (2, 3, 2, 2), nn.BatchNorm2d),
                              (nn.LazyInstanceNorm1d(affine=True), (2, 3, 4),
                               nn.InstanceNorm1d)]:
        lazy(np.ones(shape, np.float32))
        assert type(lazy) is full
    theirs = torch.nn.LazyLinear(3)
    theirs(torch.ones(2, 5))
    assert list(nn.LazyLinear(3).state_dict()) == list(theirs.state_dict())


def test_module_methods_as_torch():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m.double()
    assert m[0].weight.dtype == np.float64 and m[1].num_batches_tracked.dtype == np.int64
    m.half().float()
    assert m[0].weight.dtype == np.float32
    assert m.get_submodule("1") is m[1]
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Sequential"]
    calls = []
    h1 = m[0].register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    h2 = m[0].register_forward_hook(lambda mod, args, out: out * 0)
    gin = []
    h3 = m[0].register_full_backward_hook(
        lambda mod, gi, go: gin.append((gi[0].shape, go[0].shape)))
    x = pg.Variable(np.ones((4, 2), np.float32))
    y = m(x)
    assert calls == ["pre"] and not np.any(m[0](x).array)
    pg.ops.sum(y).backward()
    assert gin and gin[0] == ((4, 2), (4, 3))
    for h in (h1, h2, h3):
        h.remove()
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    assert repr(m) == repr(theirs)
    m.register_buffer("scratch", np.zeros(2), persistent=False)
    assert "scratch" not in m.state_dict()
    assert "scratch" in dict(m.named_buffers())


def test_parameter_containers_match_torch():
    ours = nn.ParameterDict({"a": np.ones(2), "b": np.zeros(3)})
    theirs = torch.nn.ParameterDict({"a": torch.ones(2), "b": torch.zeros(3)})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours = nn.ParameterList([np.ones(2), np.zeros(3)])
    theirs = torch.nn.ParameterList([torch.ones(2), torch.zeros(3)])
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_multihead_attention_masks_match_torch(rng):
    theirs, ours = _pair("MultiheadAttention", (8, 2), {"batch_first": True})
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    q = rng.normal(size=(2, 4, 8))
    kv = rng.normal(size=(2, 5, 8))
    attn_mask = np.triu(np.ones((4, 5), bool), 1)
    kpm = np.zeros((2, 5), bool)
    kpm[1, -1] = True
    yt, wt = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                    key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(attn_mask),
                    average_attn_weights=False)
    yv, wv = ours(q, kv, kv, key_padding_mask=kpm, attn_mask=attn_mask,
                  average_attn_weights=False)
    np.testing.assert_allclose(yv.array, yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(wv.array, wt.detach().numpy(), rtol=RTOL, atol=ATOL)
    float_mask = rng.normal(size=(4, 5))
    yt, _ = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                   attn_mask=torch.tensor(float_mask), need_weights=False)
    yv, none = ours(q, kv, kv, attn_mask=float_mask, need_weights=False)
    assert none is None
    np.testing.assert_allclose(yv.array, yt.detach().numpy(), rtol=RTOL, atol=ATOL)


_F_CASES = [
    ("max_pool1d_with_indices", [(2, 3, 8)], (3,), {"stride": 2}),
    ("max_pool2d_with_indices", [(1, 2, 5, 5)], (2,), {"ceil_mode": True}),
    ("max_pool3d_with_indices", [(1, 1, 4, 4, 4)], (2,), {}),
    ("adaptive_max_pool1d_with_indices", [(2, 3, 7)], (3,), {}),
    ("adaptive_max_pool2d_with_indices", [(1, 2, 5, 7)], ((2, 3),), {}),
    ("adaptive_max_pool3d_with_indices", [(1, 1, 3, 4, 5)], (2,), {}),
    ("conv_tbc", [(6, 2, 3), (3, 3, 4), (4,)], (1,), {}),
    ("channel_shuffle", [(2, 6, 3)], (3,), {}),
    # (native_channel_shuffle has no derivative in torch: its values are checked below.)
]


@pytest.mark.parametrize("name, shapes, args, kwargs", _F_CASES, ids=[c[0] for c in _F_CASES])
def test_functional_spellings_match_torch(name, shapes, args, kwargs, rng):
    import portagrad.nn.functional as F

    xs = [rng.normal(size=s) for s in shapes]
    xt = [torch.tensor(x, requires_grad=True) for x in xs]
    xv = [pg.Variable(x) for x in xs]
    yt = getattr(torch.nn.functional, name)(*xt, *args, **kwargs)
    yv = getattr(F, name)(*xv, *args, **kwargs)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(_np(yv[1]), yt[1].numpy())
        yt, yv = yt[0], yv[0]
    np.testing.assert_allclose(_np(yv), yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    c = rng.normal(size=tuple(yt.shape))
    (yt * torch.tensor(c)).sum().backward()
    pg.ops.sum(yv * c).backward()
    for a, b in zip(xv, xt):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_native_channel_shuffle_values(rng):
    import portagrad.nn.functional as F

    x = rng.normal(size=(1, 4, 2, 2))
    np.testing.assert_array_equal(F.native_channel_shuffle(x, 2).array,
                                  torch.nn.functional.native_channel_shuffle(
                                      torch.tensor(x), 2).numpy())


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient(rng):
    import portagrad.nn.functional as F

    pg.random.seed(3)
    logits = pg.Variable(rng.normal(size=(4, 5)))
    y = F.gumbel_softmax(logits, tau=0.5, hard=True)
    assert set(np.unique(y.array)) == {0.0, 1.0} and np.all(y.array.sum(-1) == 1)
    pg.random.seed(3)
    soft = F.gumbel_softmax(pg.Variable(logits.array), tau=0.5)
    np.testing.assert_array_equal(np.argmax(soft.array, -1), np.argmax(y.array, -1))
    (g_hard,) = pg.grad(pg.ops.sum(y * np.arange(5.0)), logits)
    x2 = pg.Variable(logits.array)
    pg.random.seed(3)
    (g_soft,) = pg.grad(pg.ops.sum(F.gumbel_softmax(x2, tau=0.5) * np.arange(5.0)), x2)
    np.testing.assert_allclose(g_hard.array, g_soft.array, rtol=1e-12)


def test_functional_names_cover_torch_functional():
    import inspect

    import portagrad.nn.functional as F

    tf = torch.nn.functional
    names = [n for n in dir(tf) if not n.startswith("_") and callable(getattr(tf, n))
             and not inspect.isclass(getattr(tf, n)) and not inspect.ismodule(getattr(tf, n))]
    present = [n for n in names if hasattr(F, n)]
    assert len(present) >= 129, sorted(set(names) - set(present))


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_packed_sequences_match_torch(name, rng):
    rnn_utils = pytest.importorskip("portagrad.nn.utils.rnn")
    theirs, ours = _pair(name, (3, 4), {"bidirectional": True, "num_layers": 2})
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rng.normal(size=(5, 3, 3))
    lengths = [5, 2, 3]
    tu = torch.nn.utils.rnn
    yt, ht = theirs(tu.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False))
    yt = tu.pad_packed_sequence(yt)[0]
    yv, hv = ours(rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False))
    yv = rnn_utils.pad_packed_sequence(yv)[0]
    np.testing.assert_allclose(_np(yv), yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    for a, b in zip(_outputs(hv), _outputs(ht)):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=RTOL, atol=ATOL)


def _grads_match(ours, theirs):
    for a, b in zip(ours, theirs):
        if b is None:
            continue
        np.testing.assert_allclose(a.grad, b.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_matches_torch_given_the_samples(nd, dtype, rng):
    import portagrad.nn.functional as F

    shape, k, out = ((2, 3, 9, 11), (2, 3), (4, 5)) if nd == 2 else ((1, 2, 5, 6, 7), 2,
                                                                      (3, 3, 4))
    x = rng.normal(size=shape).astype(dtype)
    samples = rng.uniform(size=shape[:2] + (nd,)).astype(dtype)
    xt, xv = torch.tensor(x, requires_grad=True), pg.Variable(x)
    yt, it = getattr(torch.nn.functional, f"fractional_max_pool{nd}d_with_indices")(
        xt, k, out, _random_samples=torch.tensor(samples))
    yv, iv = getattr(F, f"fractional_max_pool{nd}d_with_indices")(
        xv, k, out, _random_samples=samples)
    np.testing.assert_array_equal(iv, it.numpy())
    np.testing.assert_array_equal(yv.array, yt.detach().numpy())
    c = rng.normal(size=yt.shape).astype(dtype)
    (yt * torch.tensor(c)).sum().backward()
    pg.ops.sum(yv * c).backward()
    np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=RTOL)
    # The module, with the samples as its buffer (torch's state dict key), and unbatched.
    cls = f"FractionalMaxPool{nd}d"
    tm = getattr(torch.nn, cls)(k, output_ratio=0.6, _random_samples=torch.tensor(samples[:1]))
    pm = getattr(nn, cls)(k, output_ratio=0.6, _random_samples=samples[:1])
    assert list(pm.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    np.testing.assert_array_equal(pm(x[0]).array, tm(torch.tensor(x[0])).numpy())


def test_fractional_max_pool_module_draws_its_samples_and_checks_its_options():
    pool = nn.FractionalMaxPool2d(2, output_size=3)
    assert list(pool.state_dict()) == []
    pg.manual_seed(0)
    a = pool(np.arange(64.0).reshape(1, 1, 8, 8)).array
    pg.manual_seed(0)
    assert np.array_equal(a, pool(np.arange(64.0).reshape(1, 1, 8, 8)).array)
    for kwargs in ({}, {"output_size": 2, "output_ratio": 0.5}, {"output_ratio": 1.0}):
        with pytest.raises(ValueError):
            nn.FractionalMaxPool2d(2, **kwargs)
        with pytest.raises(ValueError):
            torch.nn.FractionalMaxPool2d(2, **kwargs)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_matches_torch(mode, padding_idx, include_last_offset, rng):
    import portagrad.nn.functional as F

    w = rng.normal(size=(7, 3))
    ids = np.array([1, 2, 4, 5, 4, 3, 2, 0, 6])
    off = np.array([0, 3, 3, 5]) if not include_last_offset else np.array([0, 3, 3, 5, 9])
    psw = rng.normal(size=ids.shape) if mode == "sum" else None
    wt, wv = torch.tensor(w, requires_grad=True), pg.Variable(w)
    pt = None if psw is None else torch.tensor(psw, requires_grad=True)
    pv = None if psw is None else pg.Variable(psw)
    kw = {"mode": mode, "include_last_offset": include_last_offset,
          "padding_idx": padding_idx}
    yt = torch.nn.functional.embedding_bag(torch.tensor(ids), wt, torch.tensor(off),
                                           per_sample_weights=pt, **kw)
    yv = F.embedding_bag(ids, wv, off, per_sample_weights=pv, **kw)
    np.testing.assert_allclose(yv.array, yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    c = rng.normal(size=tuple(yt.shape))
    (yt * torch.tensor(c)).sum().backward()
    pg.ops.sum(yv * c).backward()
    _grads_match([wv] + ([pv] if pv is not None else []), [wt] + ([pt] if pt is not None
                                                                  else []))
    # 2-d input (one bag per row) and the module, loaded from torch's state dict.
    ids2 = rng.integers(0, 7, size=(3, 4))
    tm = torch.nn.EmbeddingBag(7, 3, mode=mode, padding_idx=padding_idx).double()
    pm = nn.EmbeddingBag(7, 3, mode=mode, padding_idx=padding_idx, dtype="float64")
    pm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(pm(ids, off[:4]).array,
                               tm(torch.tensor(ids), torch.tensor(off[:4])).detach().numpy(),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(F.embedding_bag(ids2, w, mode=mode).array,
                               torch.nn.functional.embedding_bag(
                                   torch.tensor(ids2), torch.tensor(w), mode=mode).numpy(),
                               rtol=RTOL, atol=ATOL)


def test_embedding_bag_refuses_what_torch_refuses():
    import portagrad.nn.functional as F

    w = np.ones((4, 2))
    with pytest.raises(ValueError, match="per_sample_weights"):
        F.embedding_bag(np.array([0, 1]), w, np.array([0]), mode="mean",
                        per_sample_weights=np.ones(2))
    with pytest.raises(ValueError, match=r"offsets\[0\]"):
        F.embedding_bag(np.array([0, 1]), w, np.array([1]))
    with pytest.raises(ValueError, match="offsets"):
        F.embedding_bag(np.array([[0, 1]]), w, np.array([0]))


def _mha_args(lib, params, q, k, use_separate=False):
    t = (lambda a: torch.tensor(a)) if lib == "torch" else (lambda a: a)
    return [t(q), t(k), t(k), 8, 2, params["in_proj_weight"], params["in_proj_bias"],
            params["bias_k"], params["bias_v"], True, 0.0, params["out_proj.weight"],
            params["out_proj.bias"]]


@pytest.mark.parametrize("batched", [True, False])
def test_multi_head_attention_forward_matches_torch(batched, rng):
    import portagrad.nn.functional as F

    tm = torch.nn.MultiheadAttention(8, 2, add_bias_kv=True).double()
    tp = dict(tm.named_parameters())
    pp = {n: pg.Variable(p.detach().numpy()) for n, p in tp.items()}
    q, k = rng.normal(size=(4, 2, 8)), rng.normal(size=(5, 2, 8))
    kpm = np.zeros((2, 5), bool)
    kpm[0, -1] = True
    mask = np.triu(np.ones((4, 5), bool), 2)
    if not batched:
        q, k, kpm = q[:, 0], k[:, 0], kpm[0]
    yt, wt = torch.nn.functional.multi_head_attention_forward(
        *_mha_args("torch", tp, q, k), key_padding_mask=torch.tensor(kpm),
        attn_mask=torch.tensor(mask), average_attn_weights=False)
    yv, wv = F.multi_head_attention_forward(*_mha_args("pg", pp, q, k), key_padding_mask=kpm,
                                            attn_mask=mask, average_attn_weights=False)
    np.testing.assert_allclose(yv.array, yt.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(wv.array, wt.detach().numpy(), rtol=RTOL, atol=ATOL)
    c = rng.normal(size=tuple(yt.shape))
    (yt * torch.tensor(c)).sum().backward()
    pg.ops.sum(yv * c).backward()
    for n in tp:
        np.testing.assert_allclose(pp[n].grad, tp[n].grad.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=n)


def test_multi_head_attention_forward_separate_weights_and_static_keys(rng):
    import portagrad.nn.functional as F

    q, k = rng.normal(size=(4, 2, 8)), rng.normal(size=(5, 2, 8))
    qw, kw, vw = (rng.normal(size=(8, 8)) for _ in range(3))
    sk, sv = rng.normal(size=(4, 6, 4)), rng.normal(size=(4, 6, 4))
    out_w = rng.normal(size=(8, 8))

    def run(f, t):
        return f(t(q), t(k), t(k), 8, 2, None, None, None, None, False, 0.0, t(out_w), None,
                 use_separate_proj_weight=True, q_proj_weight=t(qw), k_proj_weight=t(kw),
                 v_proj_weight=t(vw), static_k=t(sk), static_v=t(sv),
                 average_attn_weights=True)

    yt, wt = run(torch.nn.functional.multi_head_attention_forward, torch.tensor)
    yv, wv = run(F.multi_head_attention_forward, lambda a: a)
    np.testing.assert_allclose(yv.array, yt.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(wv.array, wt.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind", ["indices", "probabilities", "k-dim"])
def test_linear_cross_entropy_matches_torch(kind, rng):
    import portagrad.nn.functional as F

    x = rng.normal(size=(5, 4))
    shape = {"indices": (6, 4), "probabilities": (6, 4), "k-dim": (6, 2, 4)}[kind]
    w, b = rng.normal(size=shape), rng.normal(size=shape[:-1])
    if kind == "probabilities":
        target = rng.dirichlet(np.ones(6), size=5)
    else:
        target = rng.integers(0, 6, size=(5,) + shape[1:-1])
        target[0] = 3
    kw = {"label_smoothing": 0.2, "weight": rng.uniform(0.5, 1.5, size=6)}
    if kind == "indices":
        kw["ignore_index"] = 3
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    vs = [pg.Variable(a) for a in (x, w, b)]
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    lt = torch.nn.functional.linear_cross_entropy(ts[0], ts[1], torch.tensor(target),
                                                  linear_bias=ts[2], **tkw)
    lv = F.linear_cross_entropy(vs[0], vs[1], target, linear_bias=vs[2], **kw)
    np.testing.assert_allclose(lv.array, lt.detach().numpy(), rtol=RTOL, atol=ATOL)
    lt.backward()
    lv.backward()
    _grads_match(vs, ts)


_IN_PLACE = [("relu_", ()), ("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()),
             ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.4)), ("rrelu_", (0.1, 0.3)),
             ("threshold_", (0.1, -2.0))]


@pytest.mark.parametrize("name, args", _IN_PLACE, ids=[n for n, _ in _IN_PLACE])
def test_in_place_functions_write_into_the_input_as_torch(name, args, rng):
    import portagrad.nn.functional as F

    x = rng.normal(size=(3, 4))
    xt = torch.tensor(x)
    ours = x.copy()
    out = getattr(F, name)(ours, *args)
    theirs = getattr(torch.nn.functional, name)(xt, *args)
    assert theirs is xt
    np.testing.assert_allclose(ours, xt.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(out.array, ours)
    v = pg.Variable(x.copy(), requires_grad=False)
    assert getattr(F, name)(v, *args) is v
    np.testing.assert_allclose(v.array, xt.numpy(), rtol=1e-12)
    # A Variable on the tape cannot be overwritten: the error names the out-of-place form.
    leaf = pg.Variable(x.copy())
    with pytest.raises(pg.GradientError, match=rf"F\.{name[:-1]}\(x\)"):
        getattr(F, name)(leaf, *args)
    with pytest.raises(pg.GradientError, match="computed by an op"):
        getattr(F, name)(leaf * 2.0, *args)
    with pg.no_grad():
        assert getattr(F, name)(leaf, *args) is leaf
    np.testing.assert_allclose(leaf.array, xt.numpy(), rtol=1e-12)
