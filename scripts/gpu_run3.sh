#!/usr/bin/env bash
# Third GPU run: build, crash repro under cuda-gdb, whole suite, benchmarks.
set -uo pipefail
export CMAKE_BUILD_PARALLEL_LEVEL=16 PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m pip install --no-build-isolation -q . > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 ))s"
cd /tmp
timeout 60 cuda-gdb -batch -ex run -ex bt --args python3 -c "
import cudalite as c; from cudalite import _C
a = c.ones(2, 3, device='cuda')
try:
    _C._cuda_matmul(a, a)
except RuntimeError as e:
    print('raised', e)
" > "$OUT/gdb.log" 2>&1; grep -E "raised|SIGSEGV|^#[0-9]" "$OUT/gdb.log" | head -14
cd - > /dev/null
timeout 300 python3 -m pytest -q -p no:cacheprovider tests -x \
  --deselect tests/test_cuda_blas.py::test_errors_like_torch > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest.log" | tail -8
timeout 60 python3 benchmarks/bench_cuda_basics.py 2>&1 | tail -9
timeout 60 python3 benchmarks/bench_allocator.py 2>&1 | tail -14
timeout 150 python3 benchmarks/fragmentation.py 2>&1 | tail -24
