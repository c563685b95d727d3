#!/usr/bin/env bash
# How long `pip install .` of the CUDA build takes on 2 idle cores: the build on CPUs 0 and 1
# only (taskset), in a fresh build folder, without ccache, pip's own work included; the
# architectures are the default ones for the machine (Note [Default architectures] in
# CMakeLists.txt: those of its GPUs). The device machine has no network, so the build uses
# its installed scikit-build-core and pybind11 (--no-build-isolation); the package goes to a
# scratch folder, so the installed cudalite is left as it is.
#
#   bash scripts/gpu_build_time.sh                  the 2-core build, timed
#   bash scripts/gpu_build_time.sh --profile [OLD]  per-translation-unit CPU times of this tree
#                                                   (and of the source tree OLD, e.g. a
#                                                   `git archive` of the base commit), on all
#                                                   cores (scripts/build_profile.py)
set -euo pipefail
OUT=${OUT:-/tmp/cudalite-out}
mkdir -p "$OUT"
export CCACHE_DISABLE=1
unset CUDAARCHS CMAKE_CUDA_ARCHITECTURES
# Ninja's default on a 2-core machine (cores + 2), whatever Ninja makes of the CPU mask.
export CMAKE_BUILD_PARALLEL_LEVEL=4

if [ "${1:-}" = --profile ]; then
  jobs=$(($(nproc) - 2))
  for src in . ${2:+"$2"}; do
    echo "### per-translation-unit CPU times: $src"
    rm -rf "$src/build/prof"
    cmake -S "$src" -B "$src/build/prof" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDALITE_CUDA=ON \
      -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" | grep 'cudalite:'
    python3 "$src/scripts/build_profile.py" "$src/build/prof" --jobs "$jobs" --cores 2 |
      tee "$OUT/build_profile_$(basename "$(realpath "$src")").txt"
  done
  exit 0
fi

build=$(mktemp -d)
target=$(mktemp -d)
log=$OUT/build_time.log
t0=$(date +%s.%N)
/usr/bin/time -f "user %U s, sys %S s" -o "$OUT/build_time_cpu.txt" taskset -c 0,1 \
  python3 -m pip install -v --no-build-isolation --no-deps --target "$target" \
  -Cbuild-dir="$build" . >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
t1=$(date +%s.%N)
grep -m1 'cudalite: CUDA' "$log" || true
python3 -c "import sys; w = float(sys.argv[2]) - float(sys.argv[1]); \
print(f'pip install . on CPUs 0,1: {int(w // 60)} min {w % 60:.0f} s wall')" "$t0" "$t1"
echo "CPU time (user + sys of pip and the compilers): $(cat "$OUT/build_time_cpu.txt")"
rm -rf "$build" "$target"
