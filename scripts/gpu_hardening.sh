#!/usr/bin/env bash
# One device-machine call for the hardening checks (issue 30), after scripts/gpu_check.sh has
# installed the build: the GIL criteria on two pinned cores, the checkpoint fuzzer loading onto
# CUDA, and compute-sanitizer memcheck over the CUDA tests (as many files as fit in the time).
# Usage: bash scripts/gpu_hardening.sh [memcheck seconds]
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
secs=${1:-240}
shift || true
echo "### GIL (two pinned cores, intra-op pools at one thread)"
taskset -c 2,3 python3 benchmarks/bench_threads.py > "$OUT/threads.log" 2>&1; cat "$OUT/threads.log"
echo "### checkpoint fuzzer, map_location=cuda"
timeout 150 python3 tests/fuzz_checkpoints.py --files 2000 --seed 5 --device cuda > "$OUT/fuzz_ckpt.log" 2>&1; tail -4 "$OUT/fuzz_ckpt.log"
echo "### compute-sanitizer memcheck on the CUDA tests (${secs} s)"
san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$san" ]; then echo "no compute-sanitizer"; exit 0; fi
timeout "$secs" "$san" --tool memcheck --leak-check no --error-exitcode 99 \
  --target-processes all --log-file "$OUT/memcheck.log" \
  python3 -m pytest -q -p no:cacheprovider -x -k cuda "$@" \
  tests/test_op_registry.py tests/test_ops.py tests/test_indexing.py tests/test_reductions.py \
  tests/test_views.py tests/test_matmul.py tests/test_cuda_streams.py tests/test_caching_allocator.py \
  tests/test_pinned_memory.py tests/test_cuda_deferred.py tests/test_autograd_ops.py \
  > "$OUT/memcheck_pytest.log" 2>&1
echo "memcheck rc=$? (124: time limit; 99: an error found)"
tail -3 "$OUT/memcheck_pytest.log"
grep -c "Invalid\|Error" "$OUT/memcheck.log"; tail -5 "$OUT/memcheck.log"
