"""``scaled_dot_product_attention`` of ``torch.nn.functional``: PyTorch's signature is the
canonical function's, so it is :func:`portagrad.ops.scaled_dot_product_attention`
itself."""

from __future__ import annotations

from ..ops.nn.attention import scaled_dot_product_attention as scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention"]
