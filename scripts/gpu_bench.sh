#!/usr/bin/env bash
# Benchmarks on the device machine (after scripts/gpu_check.sh installed the package).
# Usage: bash scripts/gpu_bench.sh [benchmark.py ...]  (default: all of them)
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(bench_cuda_basics.py bench_allocator.py bench_transfers.py bench_gpu_math.py bench_training.py bench_cpu.py)
for b in "${benches[@]}"; do
  echo "### $b"
  timeout 240 python3 "benchmarks/$b" > "$OUT/${b%.py}.log" 2>&1
  grep -v "^$" "$OUT/${b%.py}.log" | grep -v "^==" | tail -40
done
