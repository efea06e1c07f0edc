"""The standard's ``fft`` extension: the transforms and the frequency functions. Public
names are exported by :mod:`portagrad.ops.fft`."""
