"""Array manipulation beyond the standard: padding, splitting, sequence batches, strided
reads, space/depth rearrangement, and Chainer's names for the standard's shape and
indexing functions (declared adapters). Public names are exported by
:mod:`portagrad.ops`."""
