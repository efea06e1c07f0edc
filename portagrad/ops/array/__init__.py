"""Array manipulation beyond the standard: splitting, padding, stacking by axis,
space/depth rearrangement and indexing helpers. Public names are exported by
:mod:`portagrad.ops`."""
