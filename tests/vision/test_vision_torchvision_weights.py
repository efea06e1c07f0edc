"""VGG16 and ResNet50 from torchvision-layout weights, end to end: a state dict written by
hand from torchvision's documented parameter names and shapes (torchvision itself does not
install beside the CPU build of torch 2.13.0), saved with ``safetensors.torch``, converted,
loaded, and the features and logits compared with a forward written in torch from the same
state dict. Broken files fail naming the torchvision key."""

import numpy as np
import pytest

import portagrad as pg
from portagrad import CheckpointError
from portagrad.vision import models as M
from portagrad.xp import to_numpy

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

# torchvision.models.vgg16: features = [conv3x3 + ReLU]* and MaxPool2d(2) per block
VGG_BLOCKS = ((2, 64), (2, 128), (3, 256), (3, 512), (3, 512))
# torchvision.models.resnet50: Bottleneck (expansion 4), layers [3, 4, 6, 3]
RESNET50_LAYERS = (3, 4, 6, 3)


def _vgg16_layout(n_class, make):
    """torchvision's vgg16().state_dict() names and shapes; ``make(name, shape)`` fills."""
    sd, cin, idx = {}, 3, 0
    for n, cout in VGG_BLOCKS:
        for _ in range(n):
            sd[f"features.{idx}.weight"] = make("conv", (cout, cin, 3, 3))
            sd[f"features.{idx}.bias"] = make("bias", (cout,))
            cin, idx = cout, idx + 2  # Conv2d, ReLU
        idx += 1  # MaxPool2d
    for i, (n_out, n_in) in zip((0, 3, 6), ((4096, 512 * 7 * 7), (4096, 4096),
                                           (n_class, 4096))):
        sd[f"classifier.{i}.weight"] = make("linear", (n_out, n_in))
        sd[f"classifier.{i}.bias"] = make("bias", (n_out,))
    return sd


def _bn(sd, p, c, make):
    for leaf in ("weight", "bias", "running_mean", "running_var"):
        sd[f"{p}.{leaf}"] = make(f"bn_{leaf}", (c,))
    sd[f"{p}.num_batches_tracked"] = make("count", ())


def _resnet_layout(layers, n_class, make):
    """torchvision's ResNet(Bottleneck, layers) state_dict names and shapes."""
    sd = {"conv1.weight": make("conv", (64, 3, 7, 7))}
    _bn(sd, "bn1", 64, make)
    inplanes = 64
    for s, (n, planes) in enumerate(zip(layers, (64, 128, 256, 512)), start=1):
        for i in range(n):
            p = f"layer{s}.{i}"
            sd[f"{p}.conv1.weight"] = make("conv", (planes, inplanes, 1, 1))
            _bn(sd, f"{p}.bn1", planes, make)
            sd[f"{p}.conv2.weight"] = make("conv", (planes, planes, 3, 3))
            _bn(sd, f"{p}.bn2", planes, make)
            sd[f"{p}.conv3.weight"] = make("conv_last", (planes * 4, planes, 1, 1))
            _bn(sd, f"{p}.bn3", planes * 4, make)
            if i == 0:  # torchvision adds it where the stride or the width changes
                sd[f"{p}.downsample.0.weight"] = make("conv", (planes * 4, inplanes, 1, 1))
                _bn(sd, f"{p}.downsample.1", planes * 4, make)
            inplanes = planes * 4
    sd["fc.weight"] = make("linear", (n_class, 2048))
    sd["fc.bias"] = make("bias", (n_class,))
    return sd


def _random(dtype, seed=0):
    """Values that keep activations of order one through the depth, with non-trivial
    batch-norm statistics."""
    rng = np.random.default_rng(seed)

    def make(kind, shape):
        if kind == "count":
            return torch.tensor(int(rng.integers(1, 1000)), dtype=torch.int64)
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        if kind in ("conv", "linear", "conv_last"):
            v = rng.standard_normal(shape, dtype=np.float32) * np.float32(
                np.sqrt((2.0 if kind != "conv_last" else 0.5) / fan_in))
        elif kind == "bn_running_var":
            v = rng.uniform(0.5, 1.5, shape)
        elif kind == "bn_weight":
            v = rng.uniform(0.5, 1.5, shape)
        else:  # biases, bn bias and running mean
            v = rng.normal(0.0, 0.1, shape)
        return torch.from_numpy(np.asarray(v, dtype=dtype))

    return make


def _zeros(kind, shape):
    return torch.zeros(shape, dtype=torch.int64 if kind == "count" else torch.float32)


def _save(tmp_path, sd, name):
    path = tmp_path / name
    safetensors_torch.save_file(sd, str(path))
    return path


# ------------------------------------------------------------------- torch references
def _torch_resnet(sd, x, layers):
    """torchvision's ResNet forward (v1.5: the stride on the 3x3 convolution), written
    from its documentation; returns layer1 ... layer4 and the logits."""
    F = torch.nn.functional

    def bn(h, p):
        return F.batch_norm(h, sd[p + ".running_mean"], sd[p + ".running_var"],
                            sd[p + ".weight"], sd[p + ".bias"], False, 0.0, 1e-5)

    h = F.relu(bn(F.conv2d(x, sd["conv1.weight"], stride=2, padding=3), "bn1"))
    h = F.max_pool2d(h, 3, 2, 1)
    feats = []
    for s, n in enumerate(layers, start=1):
        for i in range(n):
            p = f"layer{s}.{i}"
            stride = 2 if (i == 0 and s > 1) else 1
            y = F.relu(bn(F.conv2d(h, sd[p + ".conv1.weight"]), p + ".bn1"))
            y = F.relu(bn(F.conv2d(y, sd[p + ".conv2.weight"], stride=stride, padding=1),
                          p + ".bn2"))
            y = bn(F.conv2d(y, sd[p + ".conv3.weight"]), p + ".bn3")
            if p + ".downsample.0.weight" in sd:
                h = bn(F.conv2d(h, sd[p + ".downsample.0.weight"], stride=stride),
                       p + ".downsample.1")
            h = F.relu(y + h)
        feats.append(h)
    logits = F.linear(F.adaptive_avg_pool2d(h, 1).flatten(1), sd["fc.weight"], sd["fc.bias"])
    return feats, logits


def _torch_vgg16(sd, x):
    """torchvision's vgg16 forward in evaluation (dropout off); returns the output of
    features (pool5) and the logits."""
    F = torch.nn.functional
    h, idx = x, 0
    for n, _ in VGG_BLOCKS:
        for _ in range(n):
            h = F.relu(F.conv2d(h, sd[f"features.{idx}.weight"], sd[f"features.{idx}.bias"],
                                padding=1))
            idx += 2
        h = F.max_pool2d(h, 2)
        idx += 1
    pool5 = h
    h = F.adaptive_avg_pool2d(h, (7, 7)).flatten(1)
    for i in (0, 3):
        h = F.relu(F.linear(h, sd[f"classifier.{i}.weight"], sd[f"classifier.{i}.bias"]))
    return pool5, F.linear(h, sd["classifier.6.weight"], sd["classifier.6.bias"])


def _close(got, want, rtol):
    got, want = to_numpy(got), want.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


# ------------------------------------------------------------------------------ ResNet
def test_resnet50_from_a_torchvision_safetensors_file_matches_torch_in_float64(tmp_path):
    sd = _resnet_layout(RESNET50_LAYERS, 7, _random(np.float64))
    path = _save(tmp_path, sd, "resnet50.safetensors")
    state = M.convert_torchvision_resnet(path)
    model = M.ResNet50(n_class=7, dtype="float64")
    assert set(state) == set(model.state_dict())  # the layouts agree key for key
    model.load_state_dict(state)
    model.eval()
    x = np.random.default_rng(1).normal(size=(2, 3, 64, 48))
    with pg.no_grad():
        ours = model.extract(x, ("res2", "res3", "res4", "res5"))
        logits = model(x)
    feats, want = _torch_resnet(sd, torch.from_numpy(x), RESNET50_LAYERS)
    for name, f in zip(("res2", "res3", "res4", "res5"), feats):
        _close(ours[name].array, f, 1e-9)
    _close(logits.array, want, 1e-9)
    assert float(want.std()) > 0.1  # the logits are not flat: the comparison means something
    count = "layer3.2.bn1.num_batches_tracked"
    assert int(to_numpy(model.state_dict()[count])) == int(sd[count])


def test_broken_torchvision_resnet_files_fail_naming_the_key(tmp_path):
    model = M.ResNet50(n_class=7)
    good = _resnet_layout(RESNET50_LAYERS, 7, _zeros)

    def load(sd):
        model.load_state_dict(M.convert_torchvision_resnet(sd))

    missing = dict(good)
    del missing["layer2.0.downsample.1.running_var"]
    with pytest.raises(CheckpointError,
                       match=r'Missing key.*"layer2\.0\.downsample\.1\.running_var"'):
        load(_save(tmp_path, missing, "missing.safetensors"))  # the same from a file
    wrong = dict(good, **{"layer4.1.conv2.weight": torch.zeros(512, 512, 1, 1)})
    with pytest.raises(CheckpointError, match=r"size mismatch for layer4\.1\.conv2\.weight.*"
                                              r"\(512, 512, 1, 1\).*\(512, 512, 3, 3\)"):
        load(wrong)
    with pytest.raises(CheckpointError, match=r"size mismatch for fc\.weight"):
        load(_resnet_layout(RESNET50_LAYERS, 1000, _zeros))  # 1000 classes into 7
    extra = dict(good, **{"layer1.0.conv4.weight": torch.zeros(1)})
    with pytest.raises(CheckpointError, match=r'Unexpected key.*"layer1\.0\.conv4\.weight"'):
        load(extra)
    with pytest.raises(CheckpointError, match=r"unexpected key 'layer1\.0\.bn1\.scale'"):
        load(dict(good, **{"layer1.0.bn1.scale": torch.zeros(64)}))
    with pytest.raises(CheckpointError, match="Missing key"):  # a ResNet-101 needs more
        M.ResNet101(n_class=7).load_state_dict(M.convert_torchvision_resnet(good))


# ------------------------------------------------------------------------------- VGG16
@pytest.mark.slow
def test_vgg16_from_a_torchvision_safetensors_file_matches_torch(tmp_path):
    sd = _vgg16_layout(5, _random(np.float32))
    path = _save(tmp_path, sd, "vgg16.safetensors")
    model = M.VGG16(n_class=5)
    model.load_state_dict(M.convert_torchvision_vgg16(path))
    model.eval()
    x = np.random.default_rng(1).normal(size=(2, 3, 48, 64)).astype(np.float32)
    with pg.no_grad():
        ours = model.extract(x, ("pool5", "fc8"))
    pool5, want = _torch_vgg16(sd, torch.from_numpy(x))
    _close(ours["pool5"].array, pool5, 1e-4)
    _close(ours["fc8"].array, want, 1e-4)
    assert float(want.std()) > 0.1
    assert model.prepare(np.full((3, 300, 260), 128.0)).shape == (3, 224, 224)


def test_broken_torchvision_vgg16_state_dicts_fail_naming_the_key():
    good = _vgg16_layout(5, _zeros)  # zeros: the shapes only
    assert len(M.convert_torchvision_vgg16(good)) == 32
    missing = dict(good)
    del missing["features.17.bias"]
    with pytest.raises(CheckpointError, match=r"convert_torchvision_vgg16: expected the "
                                              r"torchvision key 'features\.17\.bias'"):
        M.convert_torchvision_vgg16(missing)
    wrong = dict(good, **{"features.5.weight": torch.zeros(128, 64, 5, 5)})
    with pytest.raises(CheckpointError, match=r"'features\.5\.weight' of shape "
                                              r"\(128, 64, 3, 3\), got \(128, 64, 5, 5\)"):
        M.convert_torchvision_vgg16(wrong)
    # a vgg16_bn file: its convolutions sit at other indices
    shifted = {k.replace("features.2.", "features.3."): v for k, v in good.items()}
    with pytest.raises(CheckpointError, match=r"'features\.2\.weight', which is missing"):
        M.convert_torchvision_vgg16(shifted)
    with pytest.raises(CheckpointError, match=r"'classifier\.0\.weight' of shape "
                                              r"\(4096, 25088\), got \(4096, 4096\)"):
        M.convert_torchvision_vgg16(dict(good, **{"classifier.0.weight": torch.zeros(4096,
                                                                                      4096)}))
    with pytest.raises(CheckpointError, match=r"'classifier\.6\.bias' of shape \(5,\), got "
                                              r"\(1000,\)"):
        M.convert_torchvision_vgg16(dict(good, **{"classifier.6.bias": torch.zeros(1000)}))
    with pytest.raises(CheckpointError, match=r"unexpected keys \['features\.1\.weight'\]"):
        M.convert_torchvision_vgg16(dict(good, **{"features.1.weight": torch.zeros(1)}))
    # another number of classes converts (loading it into VGG16(n_class=5) would not)
    other = M.convert_torchvision_vgg16(_vgg16_layout(3, _zeros))
    assert other["fc8.weight"].shape == (3, 4096)
