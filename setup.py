"""The optional compiled kernels (portagrad.xp._cnative); everything else is in
pyproject.toml. Without a C compiler the build leaves them out and the pure paths run."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "portagrad.xp._cnative", ["portagrad/xp/_cnative.c"], optional=True,
    # No fused multiply-adds: the elementwise results round as the defaults' do.
    # -pthread: the pool of threads that runs the parts of its kernels.
    extra_compile_args=["-O3", "-ffp-contract=off", "-pthread"], extra_link_args=["-pthread"])])
