"""Neural-network functions by family: activations, losses, linear maps and
convolutions, pooling, normalization, recurrent cells, sequences, regions of interest,
noise and metrics. Public names are exported by :mod:`portagrad.ops`."""
