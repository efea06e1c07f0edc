# The two commands of the README. Both create .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.portagrad-installed
# One BLAS thread: the tests' and the demo's matrices are small, and threads only contend.
export OMP_NUM_THREADS ?= 1

.PHONY: demo test test-full install lint bench conformance clean gpu-wheels gpu-check

$(STAMP): pyproject.toml setup.py portagrad/xp/_cnative.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,torch,jax,mpi,plot,examples,bench]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/portagrad train --model mlp --dataset digits --epochs 20 --out result/demo

# Every backend the README names that installs here: NumPy, array-api-strict (on a
# non-default device), PyTorch and JAX (CuPy needs a GPU: make gpu-check). A skip for any
# other reason fails the run; the skips and their reasons are printed at the end.
BACKENDS := numpy,array_api_strict,torch,jax
# JAX on its CPU backend without probing for accelerator plugins (the tests are CPU ones).
TEST_ENV := PORTAGRAD_STRICT_SKIPS=1 PORTAGRAD_NAMESPACE=$(BACKENDS) JAX_PLATFORMS=cpu
# Worker processes (pytest-xdist), one per core by default: each test is single-threaded
# (OMP_NUM_THREADS=1). The MPI jobs and the tests that time a wait take turns on one lock
# (tests/conftest.py). TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS)

test: $(STAMP)
	$(BIN)/ruff check .
	$(TEST_ENV) $(PYTEST)

# The same on every backend at the full example counts (the ci profile draws fewer on
# JAX and torch, see conformance._runner.NAMESPACE_PROFILES).
test-full: $(STAMP)
	$(BIN)/ruff check .
	$(TEST_ENV) HYPOTHESIS_PROFILE=full $(PYTEST)

conformance: $(STAMP)
	$(BIN)/portagrad conformance --namespace numpy
	$(BIN)/portagrad conformance --namespace array_api_strict
	$(BIN)/portagrad conformance --namespace torch
	$(BIN)/portagrad conformance --namespace jax

# OpenBLAS chooses its kernels itself here: some machines pin OPENBLAS_CORETYPE (and
# OPENBLAS_L2_SIZE) for older builds, which would slow NumPy's current one but not PyTorch.
# Each implementation runs in processes of its own at 1 and 2 threads (each sets its own
# thread count); the bench extra brings PyTorch. CHAINER_VENV=<venv> adds Chainer.
CHAINER_VENV ?=
bench: $(STAMP)
	$(BIN)/python -c "import torch" || { echo "make bench: PyTorch is missing (pip install -e '.[bench]')"; exit 1; }
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/portagrad bench \
		$(if $(CHAINER_VENV),--chainer $(CHAINER_VENV))

clean:
	rm -rf $(VENV) result .pytest_cache .hypothesis

# Pure-Python packages the GPU machine lacks, as wheels that travel with the tree.
gpu-wheels:
	mkdir -p .whl
	$(PYTHON) -m pip download --no-deps --only-binary=:all: -d .whl \
		"array-api-compat>=1.14,<2" array-api-strict

gpu-check:
	bash scripts/gpu_check.sh

# Fuzz every public callable (pg.ops, ops.linalg, ops.fft, nn.functional) with bad and
# edge inputs: up to FUZZ_EXAMPLES cases each (a callable stops at its first finding; 150
# make over 50,000 calls), printing the counts of calls, portagrad errors, raw
# exceptions, hangs and lost NaNs at the end.
.PHONY: fuzz
FUZZ_EXAMPLES ?= 150
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -p no:cacheprovider tests/fuzz
