"""Chainer's implementations of the benchmark workloads, for Chainer's own interpreter.

The worker (``_worker.py``, run by path with the interpreter of the virtual environment
``portagrad bench --chainer`` names) imports this module beside it; it imports only NumPy
at the top, and Chainer inside each builder. Each builder takes the configuration the
worker makes -- ``problem`` (the weights and batches the host drew) and ``settings`` (the
workload's constants: ``LR``, ``BATCH``, ...) -- and returns a unit ``(check, timed)``.
The models are written as a Chainer user writes them (links, ``chainer.functions``, the
optimizers of ``chainer.optimizers``), in PyTorch's weight layouts, which Chainer shares.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# The variants by workload: name -> (form, check group); see ``_common.Spec``.
VARIANTS: dict[str, dict[str, tuple[str, str | None]]] = {
    "mlp": {"chainer": ("", None)},
    "cnn": {"chainer": ("", None)},
    "lstm": {"chainer fused": ("fused", "")},
    "dispatch": {"chainer": ("", None)},
    "resnet": {"chainer": ("", None)},
    "transformer": {"chainer": ("", None)},
}


def _unit(step: Any, cfg: Any) -> Any:
    from _ipc import training_unit  # type: ignore[import-not-found]

    return training_unit(step, cfg.check_steps)


def _steps(model: Any, forward: Any, batches: list, opt: Any, cfg: Any) -> Any:
    import chainer.functions as F

    opt.setup(model)

    def step(i: int) -> float:
        x, t = batches[i % len(batches)]
        loss = F.softmax_cross_entropy(forward(x), t)
        model.cleargrads()
        loss.backward()
        opt.update()
        return float(loss.array)

    return _unit(step, cfg)


def _set(param: Any, value: np.ndarray) -> None:
    param.array[...] = value


def mlp(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    prob = cfg.problem
    model = chainer.ChainList()
    for w, b in prob.params:
        lin = L.Linear(w.shape[1], w.shape[0])
        _set(lin.W, w)
        _set(lin.b, b)
        model.add_link(lin)
    n = len(prob.params)

    def forward(x: Any) -> Any:
        h = x
        for i, lin in enumerate(model):
            h = lin(h)
            if i < n - 1:
                h = F.relu(h)
        return h

    return _steps(model, forward, prob.batches, chainer.optimizers.SGD(cfg.settings["LR"]),
                  cfg)


def cnn(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    prob = cfg.problem
    model = chainer.ChainList(L.Convolution2D(1, 32, 3), L.Convolution2D(32, 64, 3),
                              L.Linear(9216, 128), L.Linear(128, 10))
    for lin, (w, b) in zip(model, prob.conv + prob.fc):
        _set(lin.W, w)
        _set(lin.b, b)
    c1, c2, f1, f2 = model

    def forward(x: Any) -> Any:
        h = F.relu(c2(F.relu(c1(x))))
        h = F.max_pooling_2d(h, 2, cover_all=False)
        return f2(F.relu(f1(F.reshape(h, (h.shape[0], -1)))))

    return _steps(model, forward, prob.batches, chainer.optimizers.SGD(cfg.settings["LR"]),
                  cfg)


def lstm(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    prob = cfg.problem
    s = cfg.settings
    hid, vocab, seq, batch = int(s["HIDDEN"]), int(s["VOCAB"]), int(s["SEQ"]), int(s["BATCH"])
    model = chainer.Chain()
    with model.init_scope():
        model.embed = L.EmbedID(vocab, hid)
        model.rnn = L.NStepLSTM(len(prob.layers), hid, hid, dropout=0.0)
        model.out = L.Linear(hid, vocab)
    _set(model.embed.W, prob.embed)
    # Chainer's gate weights w0..w3 (input) and w4..w7 (hidden) are PyTorch's i, f, g, o
    # blocks; the biases likewise.
    for k, (w_ih, w_hh, b_ih, b_hh) in enumerate(prob.layers):
        for g in range(4):
            rows = slice(g * hid, (g + 1) * hid)
            _set(model.rnn.ws[k][g], w_ih[rows])
            _set(model.rnn.ws[k][g + 4], w_hh[rows])
            _set(model.rnn.bs[k][g], b_ih[rows])
            _set(model.rnn.bs[k][g + 4], b_hh[rows])
    _set(model.out.W, prob.out[0])
    _set(model.out.b, prob.out[1])
    batches = [(x, t.reshape(-1)) for x, t in prob.batches]

    def forward(x: Any) -> Any:
        hs = model.embed(x)  # (T, B, H)
        xs = [hs[:, b] for b in range(batch)]  # a (T, H) sequence per batch item
        _, _, ys = model.rnn(None, None, xs)
        return model.out(F.reshape(F.stack(ys, axis=1), (seq * batch, hid)))

    return _steps(model, forward, batches, chainer.optimizers.SGD(s["LR"]), cfg)


def dispatch(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F

    w_h, b_h, x = cfg.problem
    w, b = chainer.Variable(w_h.copy()), chainer.Variable(b_h.copy())
    links = int(cfg.settings["N_LINKS"])

    def chain() -> Any:
        w.cleargrad()
        b.cleargrad()
        y = x
        for _ in range(links):
            y = y * w + b
        F.sum(y).backward()
        return w.grad, b.grad

    return (lambda: np.concatenate(chain())), chain


def resnet(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    prob = cfg.problem
    state = prob.state

    def conv_bn(c_in: int, c_out: int, k: int, stride: int, name: str, bn: str) -> Any:
        link = chainer.Chain()
        with link.init_scope():
            link.conv = L.Convolution2D(c_in, c_out, k, stride, k // 2, nobias=True)
            link.bn = L.BatchNormalization(c_out, eps=1e-5)
        _set(link.conv.W, state[f"{name}.weight"])
        _set(link.bn.gamma, state[f"{bn}.weight"])
        _set(link.bn.beta, state[f"{bn}.bias"])
        return link

    blocks = []
    for i, (c_in, c_out, stride) in enumerate(((64, 64, 1), (64, 64, 1), (64, 128, 2),
                                               (128, 128, 1))):
        p = f"blocks.{i}."
        block = chainer.ChainList(conv_bn(c_in, c_out, 3, stride, p + "conv1", p + "bn1"),
                                  conv_bn(c_out, c_out, 3, 1, p + "conv2", p + "bn2"))
        if stride != 1 or c_in != c_out:
            block.add_link(conv_bn(c_in, c_out, 1, stride, p + "proj", p + "proj_bn"))
        blocks.append(block)
    model = chainer.ChainList(conv_bn(3, 64, 3, 1, "stem", "stem_bn"), *blocks,
                              L.Linear(128, 10))
    _set(model[-1].W, state["fc.weight"])
    _set(model[-1].b, state["fc.bias"])

    def cb(link: Any, x: Any) -> Any:
        return link.bn(link.conv(x))

    def forward(x: Any) -> Any:
        h = F.relu(cb(model[0], x))
        for block in blocks:
            y = F.relu(cb(block[0], h))
            y = cb(block[1], y)
            h = F.relu(y + (cb(block[2], h) if len(block) == 3 else h))
        return model[-1](F.mean(h, axis=(2, 3)))

    opt = chainer.optimizers.MomentumSGD(cfg.settings["LR"], cfg.settings["MOMENTUM"])
    return _steps(model, forward, prob.batches, opt, cfg)


def transformer(cfg: Any) -> Any:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    prob = cfg.problem
    state = prob.state
    s = cfg.settings
    vocab, d, heads, ffn = int(s["VOCAB"]), int(s["D_MODEL"]), int(s["HEADS"]), int(s["FFN"])
    seq, batch, n_layers = int(s["SEQ"]), int(s["BATCH"]), int(s["LAYERS"])
    dh = d // heads
    model = chainer.Chain()
    with model.init_scope():
        model.embed = L.EmbedID(vocab, d)
        model.pos = chainer.Parameter(state["pos"].copy())
        model.layers = chainer.ChainList()
        model.norm = L.LayerNormalization(d, eps=1e-5)
        model.out = L.Linear(d, vocab)
    _set(model.embed.W, state["embed.weight"])
    for i in range(n_layers):
        p = f"layers.{i}."
        layer = chainer.Chain()
        with layer.init_scope():
            layer.qkv = L.Linear(d, 3 * d)
            layer.proj = L.Linear(d, d)
            layer.ff1 = L.Linear(d, ffn)
            layer.ff2 = L.Linear(ffn, d)
            layer.norm1 = L.LayerNormalization(d, eps=1e-5)
            layer.norm2 = L.LayerNormalization(d, eps=1e-5)
        for link, name in ((layer.proj, "self_attn.out_proj"), (layer.ff1, "linear1"),
                           (layer.ff2, "linear2")):
            _set(link.W, state[p + name + ".weight"])
            _set(link.b, state[p + name + ".bias"])
        _set(layer.qkv.W, state[p + "self_attn.in_proj_weight"])
        _set(layer.qkv.b, state[p + "self_attn.in_proj_bias"])
        for link, name in ((layer.norm1, "norm1"), (layer.norm2, "norm2")):
            _set(link.gamma, state[p + name + ".weight"])
            _set(link.beta, state[p + name + ".bias"])
        model.layers.add_link(layer)
    _set(model.norm.gamma, state["norm.weight"])
    _set(model.norm.beta, state["norm.bias"])
    _set(model.out.W, state["out.weight"])
    _set(model.out.b, state["out.bias"])
    mask = np.broadcast_to(np.triu(np.full((seq, seq), -np.inf, np.float32), 1),
                           (batch * heads, seq, seq)).copy()
    scale = 1.0 / math.sqrt(dh)

    def split(a: Any) -> Any:  # (B*T, D) -> (B*heads, T, dh)
        a = F.transpose(F.reshape(a, (batch, seq, heads, dh)), (0, 2, 1, 3))
        return F.reshape(a, (batch * heads, seq, dh))

    def forward(x: Any) -> Any:
        h = F.reshape(model.embed(x) + F.broadcast_to(model.pos, (batch, seq, d)),
                      (batch * seq, d))
        for layer in model.layers:
            q, k, v = F.split_axis(layer.qkv(layer.norm1(h)), 3, axis=1)
            scores = F.matmul(split(q), split(k), transb=True) * scale + mask
            ctx = F.matmul(F.softmax(scores, axis=2), split(v))  # (B*heads, T, dh)
            ctx = F.transpose(F.reshape(ctx, (batch, heads, seq, dh)), (0, 2, 1, 3))
            h = h + layer.proj(F.reshape(ctx, (batch * seq, d)))
            u = layer.ff1(layer.norm2(h))
            u = 0.5 * u * (1.0 + F.erf(u * (1.0 / math.sqrt(2.0))))
            h = h + layer.ff2(u)
        return model.out(model.norm(h))

    opt = chainer.optimizers.Adam(alpha=s["LR"])
    return _steps(model, forward, prob.batches, opt, cfg)


SPECS = {"mlp": {"chainer": mlp}, "cnn": {"chainer": cnn}, "lstm": {"chainer fused": lstm},
         "dispatch": {"chainer": dispatch}, "resnet": {"chainer": resnet},
         "transformer": {"chainer": transformer}}
