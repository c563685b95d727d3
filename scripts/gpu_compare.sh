#!/usr/bin/env bash
# Old against new on one device machine: builds the source tree OLD_SRC (e.g. a `git archive`
# of the base commit, carried to the machine) into its own target folder, and runs each given
# benchmark with the old build, then with the installed (new) one, in the same call.
# Usage: bash scripts/gpu_compare.sh OLD_SRC "bench_gpu_math.py --launch" "bench_training.py" ...
# Run scripts/gpu_check.sh first (it installs the new build).
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=16
old_src=$1
shift
old_site=/tmp/cudalite-old-site
if [ ! -d "$old_site/cudalite" ]; then  # a warm machine keeps it
  t0=$(date +%s)
  python3 -m pip install --no-build-isolation -q --no-deps --target "$old_site" "$old_src" \
    > "$OUT/build_old.log" 2>&1 || { tail -30 "$OUT/build_old.log"; exit 1; }
  echo "old build: $(( $(date +%s) - t0 )) s"
fi
# Import time: fresh processes, old and new interleaved (25 each), medians and minima.
OLD_SITE=$old_site python3 - <<'PY'
import os, statistics, subprocess, sys
code = "import time; t = time.perf_counter(); import cudalite; print(time.perf_counter() - t)"
ts = {"old": [], "new": []}
for _ in range(25):
    for which in ("old", "new"):
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        if which == "old":
            env["PYTHONPATH"] = os.environ["OLD_SITE"]
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        ts[which].append(float(out.stdout) * 1e3)
for which, v in ts.items():
    print(f"{which} import: median {statistics.median(v):.1f} ms, min {min(v):.1f} ms (25 processes)")
PY
for b in "$@"; do
  for which in old new; do
    site=""
    [ "$which" = old ] && site=$old_site
    echo "### $which: $b"
    # shellcheck disable=SC2086
    PYTHONPATH=$site timeout 300 python3 benchmarks/$b > "$OUT/cmp_${which}_$(echo "$b" | tr ' /' '__').log" 2>&1
    grep -v "^$" "$OUT/cmp_${which}_$(echo "$b" | tr ' /' '__').log" | tail -30
  done
done
