#!/usr/bin/env bash
# One device-machine call: build (16 cores; with the C++ benchmarks, CUDALITE_BUILD_BENCH),
# `python -m cudalite`, the whole test suite.
# PRIORITY="tests/a.py tests/b.py": those files first (the ones a change touched, so that
# their result comes back even if time runs out), then the rest. DEADLINE (seconds from the
# start, default 570) bounds the whole call: each pytest stops in time to report.
# Logs go to $OUT (or /tmp/cudalite-out). Benchmarks: scripts/gpu_bench.sh.
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=16
deadline=${DEADLINE:-570}
nvidia-smi -L
bash scripts/gpu_ensure_built.sh || exit 1
python3 -m cudalite | tail -12
ignore=()
if [ -n "${PRIORITY:-}" ]; then
  t0=$SECONDS
  # shellcheck disable=SC2086
  timeout -s INT $((deadline - SECONDS - 5)) python3 -m pytest -q -p no:cacheprovider $PRIORITY \
    > "$OUT/pytest_priority.log" 2>&1
  echo "priority files: pytest rc=$? in $((SECONDS - t0)) s"
  grep -E "^(FAILED|ERROR)|Fatal|passed|failed" "$OUT/pytest_priority.log" | tail -30
  for f in $PRIORITY; do ignore+=("--ignore=$f"); done
fi
t0=$SECONDS
timeout -s INT $((deadline - SECONDS - 5)) python3 -m pytest -q -p no:cacheprovider tests \
  "${ignore[@]}" > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? in $((SECONDS - t0)) s"
grep -E "^(FAILED|ERROR)|Fatal|passed|failed" "$OUT/pytest.log" | tail -40
