#!/usr/bin/env bash
# Benchmarks on the device machine (after scripts/gpu_check.sh installed the package).
# Usage: bash scripts/gpu_bench.sh [benchmark.py | cpp/name.cu ...]  (default: all Python ones)
# A .cu benchmark (benchmarks/cpp/) runs as gpu_check.sh built it against the core
# (build/*/NAME, CUDALITE_BUILD_BENCH), or else is compiled on its own with nvcc.
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(bench_cuda_basics.py bench_allocator.py bench_transfers.py bench_gpu_math.py bench_training.py bench_cpu.py)
for b in "${benches[@]}"; do
  echo "### $b"
  log="$OUT/$(basename "${b%.*}").log"
  built=$(ls build/*/"$(basename "${b%.cu}")" 2>/dev/null | head -1)
  if [[ $b == *.cu && -n $built ]]; then
    timeout 240 "$built" > "$log" 2>&1
  elif [[ $b == *.cu ]]; then
    nvcc -O2 -std=c++17 -arch=sm_90 -o "/tmp/$(basename "${b%.cu}")" "benchmarks/$b" -lcuda &&
      timeout 240 "/tmp/$(basename "${b%.cu}")" > "$log" 2>&1
  else
    timeout 240 python3 "benchmarks/$b" > "$log" 2>&1
  fi
  grep -v "^$" "$log" | grep -v "^==" | tail -40
done
