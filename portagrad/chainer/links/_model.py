"""Chainer's model links: Classifier, VGG16Layers, VGG19Layers, ResNet50Layers,
ResNet101Layers, ResNet152Layers and GoogLeNet, and TheanoFunction.

The image models never download: ``pretrained_model='auto'`` loads Chainer's converted
weights from its cache, ``$CHAINER_DATASET_ROOT/pfnet/chainer/models/<name>.npz``
(``~/.chainer/dataset`` by default), and raises naming that path when the file is
missing; a path loads that npz file; ``None`` (or ``''``) draws fresh weights as Chainer
does.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import numpy as np

from ..._errors import CheckpointError, PortagradTypeError, PortagradValueError
from .. import functions as F
from .. import initializers as I
from .. import reporter
from ..config import get_dtype, using_config
from ..link import Chain
from ..variable import Variable
from ._connection import Convolution2D, Inception, Linear
from ._normalization import BatchNormalization

__all__ = ["Classifier", "VGG16Layers", "VGG19Layers", "ResNet50Layers", "ResNet101Layers",
           "ResNet152Layers", "GoogLeNet", "TheanoFunction"]


class Classifier(Chain):
    """Chainer's ``Classifier(predictor, lossfun=softmax_cross_entropy, accfun=accuracy,
    label_key=-1)``: ``link(*args)`` takes the label from ``args[label_key]`` (or the
    keyword ``label_key``), reports ``loss`` and ``accuracy`` under its observer name,
    keeps ``y``, ``loss`` and ``accuracy``, and returns the loss.

    Parameters
    ----------
    predictor
        The model.
    lossfun, accfun
        The loss and accuracy functions.
    label_key
        The position or the keyword of the label.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> import portagrad.chainer.links as L
    >>> model = L.Classifier(L.Linear(4, 3))
    >>> rep = chainer.Reporter(); rep.add_observer("main", model)
    >>> with rep.scope(obs := {}):
    ...     loss = model(np.ones((2, 4), np.float32), np.array([0, 2], np.int32))
    >>> sorted(obs)
    ['main/accuracy', 'main/loss']
    """

    compute_accuracy = True

    def __init__(self, predictor: Any, lossfun: Any = F.softmax_cross_entropy,
                 accfun: Any = F.accuracy, label_key: int | str = -1) -> None:
        if not isinstance(label_key, (int, str)):
            raise PortagradTypeError(f"Classifier(label_key): expected an int or a str, got "
                                     f"{type(label_key).__name__}")
        super().__init__()
        self.lossfun = lossfun
        self.accfun = accfun
        self.y = None
        self.loss = None
        self.accuracy = None
        self.label_key = label_key
        with self.init_scope():
            self.predictor = predictor

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(self.label_key, int):
            if not -len(args) <= self.label_key < len(args):
                raise PortagradValueError(f"Classifier: label key {self.label_key} is out of "
                                          f"bounds for {len(args)} arguments")
            t = args[self.label_key]
            if self.label_key == -1:
                args = args[:-1]
            else:
                args = args[:self.label_key] + args[self.label_key + 1:]
        else:
            if self.label_key not in kwargs:
                raise PortagradValueError(f"Classifier: label key {self.label_key!r} is not "
                                          f"among the keyword arguments")
            t = kwargs.pop(self.label_key)
        self.y = self.loss = self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        reporter.report({"loss": self.loss}, self)
        if self.compute_accuracy:
            self.accuracy = self.accfun(self.y, t)
            reporter.report({"accuracy": self.accuracy}, self)
        return self.loss


def _models_dir() -> str:
    root = os.environ.get("CHAINER_DATASET_ROOT",
                          os.path.join(os.path.expanduser("~"), ".chainer", "dataset"))
    return os.path.join(root, "pfnet", "chainer", "models")


def _load_pretrained(model: Chain, pretrained_model: Any, auto_name: str) -> None:
    from ..serializers import load_npz

    if not pretrained_model:
        return
    if pretrained_model == "auto" or str(pretrained_model).endswith(".caffemodel"):
        path = os.path.join(_models_dir(), auto_name)
        if not os.path.exists(path):
            raise CheckpointError(
                f"{type(model).__name__}(pretrained_model={pretrained_model!r}): expected "
                f"Chainer's converted weights at {path}, got no such file; portagrad never "
                f"downloads: convert the Caffe model with Chainer once, or pass the path of "
                f"an npz file (pretrained_model=None draws fresh weights)")
        load_npz(path, model)
        return
    load_npz(pretrained_model, model)


class _ImageModel(Chain):
    _mean: tuple = (103.939, 116.779, 123.68)
    _extract_default = "fc7"
    # Side branches: the layer that starts from another's output, not the previous one's.
    _branches: dict = {}

    @property
    def functions(self) -> collections.OrderedDict:
        raise NotImplementedError

    @property
    def available_layers(self) -> list:
        """The names ``forward(x, layers=...)`` accepts."""
        return list(self.functions.keys())

    def forward(self, x: Any, layers: Any = None, **kwargs: Any) -> dict:
        if kwargs:
            raise PortagradTypeError(f"{type(self).__name__}: unexpected argument(s) "
                                     f"{sorted(kwargs)} (use chainer.using_config('train'))")
        layers = ["prob"] if layers is None else layers
        unknown = set(layers) - set(self.functions)
        if unknown:
            raise PortagradValueError(f"{type(self).__name__}(layers): expected names of "
                                      f"available_layers, got {sorted(unknown)}")
        h = x
        out = {}
        kept = {}
        sources = set(self._branches.values())
        targets = set(layers)
        for key, funcs in self.functions.items():
            if not targets:
                break
            if key in self._branches:
                h = kept[self._branches[key]]
            for f in funcs:
                h = f(h)
            if key in targets:
                out[key] = h
                targets.remove(key)
            if key in sources:
                kept[key] = h
        return out

    def prepare(self, image: Any, size: Any = (224, 224)) -> np.ndarray:
        """Chainer's preprocessing: RGB to BGR, the mean subtracted, CHW (needs Pillow)."""
        return _prepare(image, size, self._mean)

    def extract(self, images: Any, layers: Any = None, size: Any = (224, 224),
                **kwargs: Any) -> dict:
        """The activations of ``layers`` for a list of images."""
        if kwargs:
            raise PortagradTypeError(f"extract: unexpected argument(s) {sorted(kwargs)}")
        x = np.stack([self.prepare(img, size=size) for img in images])
        return self(Variable(self.device.send(x)),
                    layers=[self._extract_default] if layers is None else layers)

    def predict(self, images: Any, oversample: bool = True) -> Any:
        """Class probabilities of a list of images (ten crops averaged if
        ``oversample``)."""
        from ..config import no_backprop_mode

        x = np.stack([self.prepare(img, size=(256, 256)) for img in images])
        x = _oversample(x, (224, 224)) if oversample else x[:, :, 16:240, 16:240]
        with no_backprop_mode(), using_config("train", False):
            y = self(Variable(self.device.send(x)), layers=["prob"])["prob"]
            if oversample:
                n = y.shape[0] // 10
                y = F.sum(F.reshape(y, (n, 10) + tuple(y.shape[1:])), axis=1) / 10
        return y


def _prepare(image: Any, size: Any, mean: tuple) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("prepare: expected Pillow to be installed, got no module named "
                          "'PIL'") from None
    dtype = get_dtype()
    if isinstance(image, np.ndarray):
        if image.ndim == 3 and image.shape[0] in (1, 3):
            image = image[0] if image.shape[0] == 1 else image.transpose(1, 2, 0)
        image = Image.fromarray(image.astype(np.uint8))
    image = image.convert("RGB")
    if size:
        image = image.resize(size)
    a = np.asarray(image, dtype=dtype)[:, :, ::-1] - np.array(mean, dtype=dtype)
    return a.transpose(2, 0, 1)


def _oversample(x: np.ndarray, crop: tuple) -> np.ndarray:
    h, w = x.shape[2:]
    ch, cw = crop
    starts = [(0, 0), (0, w - cw), (h - ch, 0), (h - ch, w - cw),
              ((h - ch) // 2, (w - cw) // 2)]
    crops = []
    for img in x:
        views = [img[:, i:i + ch, j:j + cw] for i, j in starts]
        crops += views + [v[:, :, ::-1] for v in views]
    return np.stack(crops)


def _pool2(x: Any) -> Any:
    return F.max_pooling_2d(x, ksize=2)


class _VGG(_ImageModel):
    def __init__(self, pretrained_model: Any, n_layers: int) -> None:
        super().__init__()
        if pretrained_model:
            kw: dict = {"initialW": I.Zero(), "initial_bias": I.Zero()}
        else:
            kw = {"initialW": I.Normal(0.01), "initial_bias": I.Zero()}
        with self.init_scope():
            self.conv1_1 = Convolution2D(3, 64, 3, 1, 1, **kw)
            self.conv1_2 = Convolution2D(64, 64, 3, 1, 1, **kw)
            self.conv2_1 = Convolution2D(64, 128, 3, 1, 1, **kw)
            self.conv2_2 = Convolution2D(128, 128, 3, 1, 1, **kw)
            self.conv3_1 = Convolution2D(128, 256, 3, 1, 1, **kw)
            self.conv3_2 = Convolution2D(256, 256, 3, 1, 1, **kw)
            self.conv3_3 = Convolution2D(256, 256, 3, 1, 1, **kw)
            self.conv4_1 = Convolution2D(256, 512, 3, 1, 1, **kw)
            self.conv4_2 = Convolution2D(512, 512, 3, 1, 1, **kw)
            self.conv4_3 = Convolution2D(512, 512, 3, 1, 1, **kw)
            self.conv5_1 = Convolution2D(512, 512, 3, 1, 1, **kw)
            self.conv5_2 = Convolution2D(512, 512, 3, 1, 1, **kw)
            self.conv5_3 = Convolution2D(512, 512, 3, 1, 1, **kw)
            self.fc6 = Linear(512 * 7 * 7, 4096, **kw)
            self.fc7 = Linear(4096, 4096, **kw)
            self.fc8 = Linear(4096, 1000, **kw)
            if n_layers == 19:
                self.conv3_4 = Convolution2D(256, 256, 3, 1, 1, **kw)
                self.conv4_4 = Convolution2D(512, 512, 3, 1, 1, **kw)
                self.conv5_4 = Convolution2D(512, 512, 3, 1, 1, **kw)
        self._n = n_layers
        _load_pretrained(self, pretrained_model, f"VGG_ILSVRC_{n_layers}_layers.npz")

    @property
    def functions(self) -> collections.OrderedDict:
        r = F.relu
        seq: list = []
        blocks = [(1, 2), (2, 2), (3, 3), (4, 3), (5, 3)] if self._n == 16 else [
            (1, 2), (2, 2), (3, 4), (4, 4), (5, 4)]
        for b, n in blocks:
            for i in range(1, n + 1):
                seq.append((f"conv{b}_{i}", [getattr(self, f"conv{b}_{i}"), r]))
            seq.append((f"pool{b}", [_pool2]))
        seq += [("fc6", [self.fc6, r, F.dropout]), ("fc7", [self.fc7, r, F.dropout]),
                ("fc8", [self.fc8]), ("prob", [F.softmax])]
        return collections.OrderedDict(seq)


class VGG16Layers(_VGG):
    """Chainer's ``VGG16Layers(pretrained_model='auto')``: ``link(x, layers=['prob'])``
    returns the activations named (``available_layers``); ``extract`` and ``predict``
    take images (Pillow).

    Parameters
    ----------
    pretrained_model
        ``'auto'`` (Chainer's cached ``VGG_ILSVRC_16_layers.npz``), a path to an npz
        file, or None (``Normal(0.01)`` weights).

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> vgg = L.VGG16Layers(pretrained_model=None)  # doctest: +SKIP
    >>> vgg.available_layers[:3], vgg.fc8.W.shape  # doctest: +SKIP
    (['conv1_1', 'conv1_2', 'pool1'], (1000, 4096))
    """

    def __init__(self, pretrained_model: Any = "auto") -> None:
        super().__init__(pretrained_model, 16)


class VGG19Layers(_VGG):
    """Chainer's ``VGG19Layers(pretrained_model='auto')``: as :class:`VGG16Layers` with
    the 19-layer network (``VGG_ILSVRC_19_layers.npz``).

    Parameters
    ----------
    pretrained_model
        As :class:`VGG16Layers`.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> "conv5_4" in L.VGG19Layers(pretrained_model=None).available_layers  # doctest: +SKIP
    True
    """

    def __init__(self, pretrained_model: Any = "auto") -> None:
        super().__init__(pretrained_model, 19)


class _BottleneckA(Chain):
    def __init__(self, in_channels: int, mid: int, out: int, stride: int = 2,
                 initialW: Any = None, downsample_fb: bool = False) -> None:
        super().__init__()
        s1, s3 = (1, stride) if downsample_fb else (stride, 1)
        kw = {"initialW": initialW, "nobias": True}
        with self.init_scope():
            self.conv1 = Convolution2D(in_channels, mid, 1, s1, 0, **kw)
            self.bn1 = BatchNormalization(mid)
            self.conv2 = Convolution2D(mid, mid, 3, s3, 1, **kw)
            self.bn2 = BatchNormalization(mid)
            self.conv3 = Convolution2D(mid, out, 1, 1, 0, **kw)
            self.bn3 = BatchNormalization(out)
            self.conv4 = Convolution2D(in_channels, out, 1, stride, 0, **kw)
            self.bn4 = BatchNormalization(out)

    def forward(self, x: Any) -> Any:
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return F.relu(self.bn3(self.conv3(h)) + self.bn4(self.conv4(x)))


class _BottleneckB(Chain):
    def __init__(self, in_channels: int, mid: int, initialW: Any = None) -> None:
        super().__init__()
        kw = {"initialW": initialW, "nobias": True}
        with self.init_scope():
            self.conv1 = Convolution2D(in_channels, mid, 1, 1, 0, **kw)
            self.bn1 = BatchNormalization(mid)
            self.conv2 = Convolution2D(mid, mid, 3, 1, 1, **kw)
            self.bn2 = BatchNormalization(mid)
            self.conv3 = Convolution2D(mid, in_channels, 1, 1, 0, **kw)
            self.bn3 = BatchNormalization(in_channels)

    def forward(self, x: Any) -> Any:
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return F.relu(self.bn3(self.conv3(h)) + x)


class _BuildingBlock(Chain):
    def __init__(self, n_layers: int, in_channels: int, mid: int, out: int, stride: int,
                 initialW: Any = None, downsample_fb: bool = False) -> None:
        super().__init__()
        with self.init_scope():
            self.a = _BottleneckA(in_channels, mid, out, stride, initialW, downsample_fb)
            self._forward = ["a"]
            for i in range(n_layers - 1):
                setattr(self, f"b{i + 1}", _BottleneckB(out, mid, initialW))
                self._forward.append(f"b{i + 1}")

    def forward(self, x: Any) -> Any:
        for name in self._forward:
            x = getattr(self, name)(x)
        return x


def _global_average_pooling_2d(x: Any) -> Any:
    n, c, h, w = x.shape
    return F.reshape(F.average_pooling_2d(x, (h, w), stride=1), (n, c))


class _ResNet(_ImageModel):
    _mean = (103.063, 115.903, 123.152)
    _extract_default = "pool5"

    def __init__(self, pretrained_model: Any, n_layers: int,
                 downsample_fb: bool = False) -> None:
        super().__init__()
        conv_kw = {"initialW": I.Zero() if pretrained_model else I.HeNormal(scale=1.0)}
        blocks = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}[n_layers]
        with self.init_scope():
            self.conv1 = Convolution2D(3, 64, 7, 2, 3, **conv_kw)
            self.bn1 = BatchNormalization(64)
            self.res2 = _BuildingBlock(blocks[0], 64, 64, 256, 1, downsample_fb=downsample_fb,
                                       **conv_kw)
            self.res3 = _BuildingBlock(blocks[1], 256, 128, 512, 2,
                                       downsample_fb=downsample_fb, **conv_kw)
            self.res4 = _BuildingBlock(blocks[2], 512, 256, 1024, 2,
                                       downsample_fb=downsample_fb, **conv_kw)
            self.res5 = _BuildingBlock(blocks[3], 1024, 512, 2048, 2,
                                       downsample_fb=downsample_fb, **conv_kw)
            self.fc6 = Linear(2048, 1000)
        _load_pretrained(self, pretrained_model, f"ResNet-{n_layers}-model.npz")

    @property
    def functions(self) -> collections.OrderedDict:
        return collections.OrderedDict([
            ("conv1", [self.conv1, self.bn1, F.relu]),
            ("pool1", [lambda x: F.max_pooling_2d(x, ksize=3, stride=2)]),
            ("res2", [self.res2]), ("res3", [self.res3]), ("res4", [self.res4]),
            ("res5", [self.res5]), ("pool5", [_global_average_pooling_2d]),
            ("fc6", [self.fc6]), ("prob", [F.softmax])])


def _resnet_class(n: int) -> type:
    doc = f"""Chainer's ``ResNet{n}Layers(pretrained_model='auto', downsample_fb=False)``:
    ``link(x, layers=['prob'])`` returns the named activations (``available_layers``).

    Parameters
    ----------
    pretrained_model
        ``'auto'`` (Chainer's cached ``ResNet-{n}-model.npz``), a path to an npz file, or
        None (``HeNormal`` weights).
    downsample_fb
        Downsample in the 3x3 convolution (Facebook's variant) instead of the 1x1.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> L.ResNet{n}Layers(pretrained_model=None).available_layers[-2:]  # doctest: +SKIP
    ['fc6', 'prob']
    """

    def __init__(self: Any, pretrained_model: Any = "auto",
                 downsample_fb: bool = False) -> None:
        _ResNet.__init__(self, pretrained_model, n, downsample_fb)

    return type(f"ResNet{n}Layers", (_ResNet,), {"__init__": __init__, "__doc__": doc,
                                                 "__module__": __name__})


ResNet50Layers = _resnet_class(50)
ResNet101Layers = _resnet_class(101)
ResNet152Layers = _resnet_class(152)


class GoogLeNet(_ImageModel):
    """Chainer's ``GoogLeNet(pretrained_model='auto')`` (``bvlc_googlenet.npz``), with the
    auxiliary classifiers ``loss1_fc2`` and ``loss2_fc2`` as layers.

    Parameters
    ----------
    pretrained_model
        ``'auto'``, a path to an npz file, or None (``LeCunUniform`` weights).

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> L.GoogLeNet(pretrained_model=None).available_layers[:2]  # doctest: +SKIP
    ['conv1', 'pool1']
    """

    _mean = (104.0, 117.0, 123.0)
    _extract_default = "pool5"
    # The auxiliary classifiers read inception_4a's and inception_4d's outputs.
    _branches = {"loss1_fc2": "inception_4a", "loss2_fc2": "inception_4d"}

    def __init__(self, pretrained_model: Any = "auto") -> None:
        super().__init__()
        kw = {"initialW": I.Zero() if pretrained_model else I.LeCunUniform(scale=1.0)}
        with self.init_scope():
            self.conv1 = Convolution2D(3, 64, 7, stride=2, pad=3, **kw)
            self.conv2_reduce = Convolution2D(64, 64, 1, **kw)
            self.conv2 = Convolution2D(64, 192, 3, stride=1, pad=1, **kw)
            self.inc3a = Inception(192, 64, 96, 128, 16, 32, 32)
            self.inc3b = Inception(256, 128, 128, 192, 32, 96, 64)
            self.inc4a = Inception(480, 192, 96, 208, 16, 48, 64)
            self.inc4b = Inception(512, 160, 112, 224, 24, 64, 64)
            self.inc4c = Inception(512, 128, 128, 256, 24, 64, 64)
            self.inc4d = Inception(512, 112, 144, 288, 32, 64, 64)
            self.inc4e = Inception(528, 256, 160, 320, 32, 128, 128)
            self.inc5a = Inception(832, 256, 160, 320, 32, 128, 128)
            self.inc5b = Inception(832, 384, 192, 384, 48, 128, 128)
            self.loss3_fc = Linear(1024, 1000, **kw)
            self.loss1_conv = Convolution2D(512, 128, 1, **kw)
            self.loss1_fc1 = Linear(2048, 1024, **kw)
            self.loss1_fc2 = Linear(1024, 1000, **kw)
            self.loss2_conv = Convolution2D(528, 128, 1, **kw)
            self.loss2_fc1 = Linear(2048, 1024, **kw)
            self.loss2_fc2 = Linear(1024, 1000, **kw)
        _load_pretrained(self, pretrained_model, "bvlc_googlenet.npz")

    @property
    def functions(self) -> collections.OrderedDict:
        r = F.relu

        def pool(x: Any) -> Any:
            return F.max_pooling_2d(x, ksize=3, stride=2)

        def lrn(x: Any) -> Any:
            return F.local_response_normalization(x, n=5, k=1, alpha=1e-4 / 5)

        def avg5(x: Any) -> Any:
            return F.average_pooling_2d(x, ksize=5, stride=3)

        def avg7(x: Any) -> Any:
            return F.average_pooling_2d(x, ksize=7, stride=1)

        def drop(x: Any) -> Any:
            return F.dropout(x, ratio=0.4)

        return collections.OrderedDict([
            ("conv1", [self.conv1, r]), ("pool1", [pool, lrn]),
            ("conv2_reduce", [self.conv2_reduce, r]), ("conv2", [self.conv2, r, lrn]),
            ("pool2", [pool]), ("inception_3a", [self.inc3a]),
            ("inception_3b", [self.inc3b]), ("pool3", [pool]),
            ("inception_4a", [self.inc4a]), ("inception_4b", [self.inc4b]),
            ("inception_4c", [self.inc4c]), ("inception_4d", [self.inc4d]),
            ("inception_4e", [self.inc4e]), ("pool4", [pool]),
            ("inception_5a", [self.inc5a]), ("inception_5b", [self.inc5b]),
            ("pool5", [avg7]), ("loss3_fc", [drop, self.loss3_fc]), ("prob", [F.softmax]),
            ("loss1_fc2", [avg5, self.loss1_conv, r, self.loss1_fc1, r, self.loss1_fc2]),
            ("loss2_fc2", [avg5, self.loss2_conv, r, self.loss2_fc1, r, self.loss2_fc2])])


class TheanoFunction(Chain):
    """Chainer's ``TheanoFunction(inputs, outputs)``: needs Theano, which portagrad does
    not support; creating one raises.

    Parameters
    ----------
    inputs, outputs
        Theano variables.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> L.TheanoFunction(None, None)
    Traceback (most recent call last):
    ...
    ImportError: TheanoFunction: expected Theano, which portagrad does not support ...
    """

    def __init__(self, inputs: Any, outputs: Any) -> None:
        raise ImportError("TheanoFunction: expected Theano, which portagrad does not support "
                          "(Theano is unmaintained); write the function with "
                          "portagrad.chainer.functions")
