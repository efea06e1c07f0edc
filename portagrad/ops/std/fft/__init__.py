"""The standard's ``fft`` extension: transforms and their helpers. Public names are
exported by :mod:`portagrad.ops.fft`."""
