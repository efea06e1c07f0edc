"""The standard's ``linalg`` extension: products, decompositions, solves and norms.
Public names are exported by :mod:`portagrad.ops.linalg`."""
