#!/usr/bin/env bash
# The GPU check: conformance on CuPy, the GPU-marked tests, the benchmarks on CuPy (and
# PyTorch CUDA when present), and a digits training run on cuda:0. Everything it prints
# goes to files under $OUT (default: gpu-results/).
#
#   bash scripts/gpu_check.sh            # on a machine with an NVIDIA GPU and CuPy >= 14
#   DRY_RUN=1 bash scripts/gpu_check.sh  # the same steps on NumPy and the CPU, to rehearse
#
# Packages missing on the GPU machine travel as wheels in .whl/ (make gpu-wheels fetches
# the pure-Python ones); CuPy itself is expected there, or as a wheel in .whl/ too.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

if compgen -G ".whl/*.whl" > /dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/portagrad-site .whl/*.whl || exit 1
    export PYTHONPATH="/tmp/portagrad-site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi

if [ "${DRY_RUN:-0}" = 1 ]; then
    NS=numpy DEVICE=cpu
else
    NS=cupy DEVICE=cuda:0
    "$PY" -c "import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0" \
        || { echo "no CuPy or no GPU: nothing to check" | tee "$OUT/summary.txt"; exit 2; }
fi

step() {  # step NAME TIMEOUT COMMAND...: run, keep the output, record the status
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    local rc=$?
    printf '%-14s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$OUT/summary.txt"
}

: > "$OUT/summary.txt"
step device 60 bash -c "nvidia-smi 2>/dev/null || true; $PY -m portagrad.cli info"
step conformance 300 "$PY" -m portagrad.cli conformance --namespace "$NS" --max-examples 5
step gpu-tests 180 "$PY" -m pytest -q -p no:cacheprovider -m gpu tests
step bench 240 "$PY" -m portagrad.cli bench --backend "$NS" --json "$OUT/bench.json"
step train 240 "$PY" -m portagrad.cli train --model mlp --dataset digits --epochs 20 \
    --device "$DEVICE" --out "$OUT/train"
cat "$OUT/summary.txt"
