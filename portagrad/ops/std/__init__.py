"""The Array API standard's functions, one module per family of the specification:
elementwise, reductions, shapes, indexing, creation, dtypes, sets, searching, sorting, linalg
and fft. Public names are exported by :mod:`portagrad.ops`."""
