#!/usr/bin/env bash
# Real workloads and the new ops' benchmarks on the device machine, after gpu_ensure_built.sh:
# nanoGPT's shakespeare_char (a checkout carried as build/nanoGPT) under torch and cudalite,
# then each benchmark given. Usage: bash scripts/gpu_workloads.sh [ITERS] [bench.py args]...
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
iters=${1:-200}
shift || true
bash scripts/gpu_ensure_built.sh || exit 1
if [ -d build/nanoGPT ]; then
  for dtype in bfloat16 float32; do
    timeout 300 python3 benchmarks/run_nanogpt.py --nanogpt build/nanoGPT --iters "$iters" \
      --dtype "$dtype" > "$OUT/nanogpt_$dtype.log" 2>&1
    echo "### nanoGPT $dtype (rc=$?)"
    grep -v "^ *model.py\|^ *train.py\|^ *sample.py" "$OUT/nanogpt_$dtype.log" | tail -32
  done
fi
for b in "$@"; do
  echo "### $b"
  # shellcheck disable=SC2086
  timeout 200 python3 benchmarks/$b 2>&1 | grep -v "^$" | tail -25
done
