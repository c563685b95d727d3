#!/usr/bin/env bash
# One device-machine call: build, whole test suite, benchmarks. Usage on the GPU machine:
#   bash scripts/gpu_check.sh [benchmark ...]     (logs under $OUT when set)
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=16
nvidia-smi -L
t0=$(date +%s)
python3 -m pip install --no-build-isolation -q . > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
python3 -m cudalite
python3 -m pytest -q -x -p no:cacheprovider tests 2>&1 | tee "$OUT/pytest.log" | tail -25
for b in "$@"; do
  echo "### $b"
  python3 "benchmarks/$b" 2>&1 | tee "$OUT/$(basename "$b" .py).log"
done
