#!/usr/bin/env bash
# compute-sanitizer over the CUDA cases of some test files, on the device machine (after
# scripts/gpu_check.sh installed the package).
# Usage: bash scripts/gpu_sanitize.sh TOOL ["-k expression" (default "cuda")] test_file.py ...
#   TOOL: memcheck, racecheck (shared-memory hazards), synccheck (barrier misuse) or initcheck.
# Each file runs under its own sanitizer process (at most $SAN_TIMEOUT s, default 240); the
# log goes to $OUT, and the sanitizer's summary line and the pytest result are printed.
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
tool=$1
shift
expr="cuda"
if [[ $# -gt 0 && $1 != *.py ]]; then
  expr=$1
  shift
fi
for f in "$@"; do
  log="$OUT/sanitize-$tool-$(basename "${f%.py}").log"
  timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --print-limit 50 \
    python3 -m pytest -q -p no:cacheprovider "tests/$f" -k "$expr" > "$log" 2>&1
  rc=$?
  echo "$tool $f (-k '$expr'): rc=$rc $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)"
  grep -E "passed|failed" "$log" | tail -1
done
