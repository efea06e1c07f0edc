"""Ratio benchmarks: portagrad against plain NumPy (and PyTorch when installed)."""
