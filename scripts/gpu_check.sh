#!/usr/bin/env bash
# One device-machine call: build (16 cores; with the C++ benchmarks, CUDALITE_BUILD_BENCH),
# `python -m cudalite`, the whole test suite.
# Logs go to $OUT (or /tmp/cudalite-out). Benchmarks: scripts/gpu_bench.sh.
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=16
nvidia-smi -L
bash scripts/gpu_ensure_built.sh || exit 1
python3 -m cudalite | tail -12
t0=$(date +%s)
python3 -m pytest -q -p no:cacheprovider tests > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? in $(( $(date +%s) - t0 )) s"
grep -E "^(FAILED|ERROR)|Fatal|passed|failed" "$OUT/pytest.log" | tail -40
