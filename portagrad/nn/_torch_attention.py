"""``torch.nn``'s attention and transformer modules: MultiheadAttention,
TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder
and Transformer, with torch's parameter and submodule names (``in_proj_weight``,
``out_proj``, ``self_attn``, ``linear1``, ``norm1``...), arguments and mask conventions
(a boolean mask is ``True`` where attention is not allowed; a float mask is added)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from . import functional as F
from . import init as _init
from ._containers import ModuleList
from ._module import Module
from ._torch_common import new_param, resolve
from ._torch_linear import Linear
from ._torch_norm import LayerNorm
from ._torch_simple import Dropout

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerDecoder", "Transformer"]


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads over projected queries, keys and values
    (``torch.nn.MultiheadAttention``).

    Parameters
    ----------
    embed_dim, num_heads
        Model width ``E`` (divisible by ``num_heads``).
    dropout
        Dropout on the attention weights while training.
    bias
        Learn ``in_proj_bias`` and ``out_proj.bias``.
    add_bias_kv
        Learn ``bias_k``/``bias_v`` ``(1, 1, E)`` appended to the keys and values.
    add_zero_attn
        Append a zero key and value.
    kdim, vdim
        Key and value widths (default ``E``); when they differ from ``E`` the projections
        are ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` instead of
        ``in_proj_weight`` ``(3E, E)``.
    batch_first
        Inputs ``(N, L, E)`` instead of ``(L, N, E)``.
    device, dtype, xp
        As :class:`Linear`.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns ``(output,
    weights)``; the weights are ``(N, L, S)`` averaged over heads, ``(N, heads, L, S)``
    otherwise, ``None`` without ``need_weights``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> mha = pg.nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = np.ones((3, 5, 8), np.float32)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape, list(mha.state_dict())[:2]
    ((3, 5, 8), (3, 5, 5), ['in_proj_weight', 'in_proj_bias'])
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        if int(embed_dim) <= 0 or int(num_heads) <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        self.embed_dim = e = int(embed_dim)
        self.kdim = int(kdim) if kdim is not None else e
        self.vdim = int(vdim) if vdim is not None else e
        self._qkv_same_embed_dim = self.kdim == e and self.vdim == e
        self.num_heads = int(num_heads)
        self.dropout = float(dropout)
        self.batch_first = bool(batch_first)
        self.head_dim = e // self.num_heads
        if self.head_dim * self.num_heads != e:
            raise ValueError("embed_dim must be divisible by num_heads")
        where = resolve(xp, device, dtype)
        glorot = _init.GlorotUniform()
        if self._qkv_same_embed_dim:
            self.in_proj_weight = new_param(glorot, (3 * e, e), where)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = new_param(glorot, (e, e), where)
            self.k_proj_weight = new_param(glorot, (e, self.kdim), where)
            self.v_proj_weight = new_param(glorot, (e, self.vdim), where)
        if bias:
            self.in_proj_bias = new_param(_init.Zeros(), (3 * e,), where)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, device=where[1], dtype=where[2], xp=where[0])
        if bias:
            self.out_proj.bias.set_array(where[0].zeros((e,), dtype=where[2],
                                                        device=where[1]))
        if add_bias_kv:
            self.bias_k = new_param(_init.GlorotNormal(), (1, 1, e), where)
            self.bias_v = new_param(_init.GlorotNormal(), (1, 1, e), where)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Any, Any]:
        q, k, v = (var(a, "MultiheadAttention", n) for a, n in
                   ((query, "query"), (key, "key"), (value, "value")))
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention(is_causal): need attn_mask if specifying "
                             "the is_causal hint")
        batched = q.ndim == 3
        if q.ndim not in (2, 3) or k.ndim != q.ndim or v.ndim != q.ndim:
            raise ShapeError(f"MultiheadAttention(query): expected 2-d or 3-d query, key and "
                             f"value of the same rank, got shapes {tuple(q.shape)}, "
                             f"{tuple(k.shape)}, {tuple(v.shape)}")
        if not batched:
            q, k, v = (ops.expand_dims(a, axis=1) for a in (q, k, v))
            if key_padding_mask is not None:
                kpm = getattr(key_padding_mask, "array", key_padding_mask)
                key_padding_mask = q.xp.expand_dims(kpm, axis=0)
        elif self.batch_first:
            q, k, v = (ops.permute_dims(a, (1, 0, 2)) for a in (q, k, v))
        out, weights = self._attend(q, k, v, key_padding_mask, need_weights, attn_mask,
                                    average_attn_weights)
        if not batched:
            out = ops.squeeze(out, axis=1)
            if weights is not None:
                weights = ops.squeeze(weights, axis=0)
        elif self.batch_first:
            out = ops.permute_dims(out, (1, 0, 2))
        return out, weights

    def _attend(self, q: Any, k: Any, v: Any, key_padding_mask: Any, need_weights: bool,
                attn_mask: Any, average: bool) -> tuple[Any, Any]:
        # (L, N, E) time-major, as torch's functional form.
        e = int(q.shape[-1])
        if e != self.embed_dim:
            raise ShapeError(f"was expecting embedding dimension of {self.embed_dim}, but got "
                             f"{e}")
        return ops.multi_head_attention(
            q, k, v, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.out_proj.weight, self.out_proj.bias, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            bias_k=self.bias_k, bias_v=self.bias_v, add_zero_attn=self.add_zero_attn,
            dropout_p=self.dropout if self.training else 0.0,
            key_padding_mask=key_padding_mask, attn_mask=attn_mask,
            need_weights=need_weights, average_attn_weights=average)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        return (f"MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                f"{self.out_proj.extra_repr()})\n)")


_ACTIVATIONS: dict[str, Callable[[Any], Any]] = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation: Any) -> Any:
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(f"activation: expected 'relu', 'gelu' or a callable, got "
                        f"{activation!r}")
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and
    layer normalization (``torch.nn.TransformerEncoderLayer``).

    Parameters
    ----------
    d_model, nhead
        Width and heads of ``self_attn``.
    dim_feedforward
        Width of ``linear1`` (``linear2`` maps back to ``d_model``).
    dropout
        Rate of ``dropout``, ``dropout1``, ``dropout2`` and of the attention weights.
    activation
        ``"relu"``, ``"gelu"`` or a callable (a module is registered).
    layer_norm_eps
        ``eps`` of ``norm1``/``norm2``.
    batch_first
        ``(N, L, E)`` inputs.
    norm_first
        Normalize before each block (pre-LN) instead of after the residual sum.
    bias
        Biases in the linear maps and the layer norms.
    device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> layer = pg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    >>> layer(np.ones((2, 3, 8), np.float32)).shape
    (2, 3, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype, "xp": xp}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Any:
        x = var(src, "TransformerEncoderLayer", "src")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Any, attn_mask: Any, key_padding_mask: Any) -> Any:
        y = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(y)

    def _ff_block(self, x: Any) -> Any:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over ``memory``, then a feed-forward block, each with a
    residual connection and layer normalization (``torch.nn.TransformerDecoderLayer``).

    Parameters
    ----------
    d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps
        As :class:`TransformerEncoderLayer`.
    batch_first, norm_first, bias, device, dtype, xp
        As :class:`TransformerEncoderLayer`; the memory attention is ``multihead_attn``
        and the norms ``norm1``, ``norm2``, ``norm3``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> layer = pg.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    >>> layer(np.ones((4, 2, 8), np.float32), np.ones((3, 2, 8), np.float32)).shape
    (4, 2, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype, "xp": xp}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Any:
        x = var(tgt, "TransformerDecoderLayer", "tgt")
        mem = var(memory, "TransformerDecoderLayer", "memory")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), mem, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, mem, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Any, attn_mask: Any, key_padding_mask: Any) -> Any:
        y = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(y)

    def _mha_block(self, x: Any, mem: Any, attn_mask: Any, key_padding_mask: Any) -> Any:
        y = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(y)

    def _ff_block(self, x: Any) -> Any:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0``, ``layers.1``...), then
    ``norm`` if given (``torch.nn.TransformerEncoder``).

    Parameters
    ----------
    encoder_layer
        A :class:`TransformerEncoderLayer`, deep-copied ``num_layers`` times.
    num_layers
        How many.
    norm
        A final normalization module, or ``None``.
    enable_nested_tensor, mask_check
        Accepted, as torch's fast-path options.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> layer = pg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    >>> enc = pg.nn.TransformerEncoder(layer, 2)
    >>> enc(np.ones((3, 1, 8), np.float32)).shape, list(enc.state_dict())[0]
    ((3, 1, 8), 'layers.0.self_attn.in_proj_weight')
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Any:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm`` if given
    (``torch.nn.TransformerDecoder``).

    Parameters
    ----------
    decoder_layer
        A :class:`TransformerDecoderLayer`, deep-copied ``num_layers`` times.
    num_layers
        How many.
    norm
        A final normalization module, or ``None``.
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """An encoder-decoder transformer (``torch.nn.Transformer``): ``encoder`` and
    ``decoder`` stacks, each ending in a LayerNorm, every matrix parameter re-drawn
    Glorot-uniform as torch does.

    Parameters
    ----------
    d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward
        Sizes of the layers.
    dropout, activation
        Sizes and options of the layers.
    custom_encoder, custom_decoder
        Modules used instead of the default stacks.
    layer_norm_eps, batch_first, norm_first, bias, device, dtype, xp
        As :class:`TransformerEncoderLayer`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> t = pg.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    >>> t(np.ones((5, 2, 8), np.float32), np.ones((3, 2, 8), np.float32)).shape
    (3, 2, 8)
    >>> pg.nn.Transformer.generate_square_subsequent_mask(3)
    array([[  0., -inf, -inf],
           [  0.,   0., -inf],
           [  0.,   0.,   0.]], dtype=float32)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype, "xp": xp}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps,
                                                        bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps,
                                                        bias=bias, **kw))
        glorot = _init.GlorotUniform()
        for p in self.parameters():
            if p.ndim > 1:
                a = p.array
                p.set_array(glorot(tuple(a.shape), xp=p.xp, device=a.device, dtype=a.dtype))
        self.d_model = int(d_model)
        self.nhead = int(nhead)
        self.batch_first = bool(batch_first)

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Any:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None, *,
                                        xp: Any = None) -> Any:
        """A ``(sz, sz)`` float mask: ``-inf`` above the diagonal, 0 elsewhere.

        Parameters
        ----------
        sz
            The sequence length.
        device, dtype, xp
            Where the mask is made (default: the default namespace, float32).
        """
        xp, device, dtype = resolve(xp, device, dtype)
        i = xp.reshape(xp.arange(sz, device=device), (-1, 1))
        j = xp.reshape(xp.arange(sz, device=device), (1, -1))
        return xp.where(j > i, xp.full((sz, sz), -math.inf, dtype=dtype, device=device),
                        xp.zeros((sz, sz), dtype=dtype, device=device))
