#!/usr/bin/env bash
# One device-machine call for several features at once (on a 2-GPU kind, nvidia-h100-x2, the
# multi-GPU, IPC and NCCL tests of the suite run too):
#   1. the build (scripts/gpu_ensure_built.sh);
#   2. torch's CUDA random streams recorded on this GPU (tests/gen_cuda_random_torch.py), so
#      the suite compares cudalite with them; the data file comes back in $OUT;
#   3. `python -m cudalite` and the whole suite (scripts/gpu_check.sh);
#   4. the tutorials' outputs saved from this machine ($OUT/notebooks.tar.gz);
#   5. each benchmark given, while time is left (DEADLINE seconds from the start, default 570).
# Usage: bash scripts/gpu_features.sh "cuda_graphs.py --quick" "multi_gpu_copy.py" ...
# RECORD_RANDOM=0 skips step 2 and NOTEBOOKS=0 step 4 (when device time is short); the suite
# stops BENCH_RESERVE seconds (default 0) before the deadline, leaving them to the benchmarks;
# PRIORITY is passed to scripts/gpu_check.sh.
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
deadline=${DEADLINE:-570}
bash scripts/gpu_ensure_built.sh || exit 1
if [ "${RECORD_RANDOM:-1}" != 0 ]; then
  timeout 120 python3 tests/gen_cuda_random_torch.py > "$OUT/gen_cuda_random.log" 2>&1
  echo "torch's CUDA random streams recorded (rc=$?)"
  cp tests/data/cuda_random_torch.json "$OUT/" 2>/dev/null
fi
DEADLINE=$((deadline - SECONDS - ${BENCH_RESERVE:-0})) bash scripts/gpu_check.sh | tail -75
# The notebooks with their outputs come back as one archive ($OUT returns at most 8 files).
if [ "${NOTEBOOKS:-1}" != 0 ]; then
  nb=$(mktemp -d)
  cp docs/notebooks/*.ipynb "$nb/"
  timeout 180 python3 scripts/run_notebooks.py "$nb"/*.ipynb 2>&1 | tail -6
  tar -C "$nb" -czf "$OUT/notebooks.tar.gz" .
fi
for b in "$@"; do
  left=$((deadline - SECONDS))
  if [ "$left" -lt 20 ]; then
    echo "### skipped, no time left: $b"
    continue
  fi
  log="$OUT/bench_$(echo "$b" | tr ' /' '__').log"
  echo "### $b"
  # shellcheck disable=SC2086
  timeout "$left" python3 benchmarks/$b > "$log" 2>&1
  echo "(rc=$?)"
  grep -v "^$" "$log" | tail -30
done
