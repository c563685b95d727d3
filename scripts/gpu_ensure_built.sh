#!/usr/bin/env bash
# Installs this tree on the device machine unless the installed build is already this tree's
# (a warm machine keeps it between calls). Sourced by the other gpu_*.sh scripts' callers:
#   bash scripts/gpu_ensure_built.sh && ...
set -uo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUDAARCHS=${CUDAARCHS:-90-real}
key=$(find csrc kernels python/cudalite CMakeLists.txt pyproject.toml -type f -not -name '*.pyc' \
  -not -name '_C*.so' -not -path '*/__pycache__/*' | sort | xargs md5sum | md5sum | cut -c1-16)
if [ "$(cat /tmp/cudalite_built_key 2>/dev/null)" = "$key" ] && python3 -c "import cudalite" 2>/dev/null; then
  echo "cudalite already built from this tree ($key)"
  exit 0
fi
t0=$(date +%s)
python3 -m pip install --no-build-isolation -q -Ccmake.define.CUDALITE_BUILD_BENCH=ON . \
  > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "$key" > /tmp/cudalite_built_key
echo "build: $(( $(date +%s) - t0 )) s ($key)"
