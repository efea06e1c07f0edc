"""Public re-exports of the rest of the Array API standard (linalg, fft, creation,
searching, sets, bitwise, inspection, dtypes and constants)."""

__all__: list[str] = []
