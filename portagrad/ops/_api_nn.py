"""Public re-exports of the neural-network functions (activations, losses, connections,
pooling, normalization, noise, recurrent cells)."""

__all__: list[str] = []
