"""Mathematics beyond the standard: special functions, tensor contractions and
elementwise functions the standard lacks. Public names are exported by :mod:`portagrad.ops`."""
