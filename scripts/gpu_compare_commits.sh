#!/usr/bin/env bash
# Old against new in one run on one machine: builds the commit OLD_REF (default dd38f68) and
# this tree, each into its own folder, at the same time, then runs
# benchmarks/compare_builds.py (tiny-op latency, parsed calls, bandwidth rows, the MLP
# training step, the regression loop, `import cudalite`) and prints old / new / ratio.
#
# Usage: bash scripts/gpu_compare_commits.sh [OLD_REF] [compare_builds.py options]
#   e.g. bash scripts/gpu_compare_commits.sh dd38f68 --rounds 3
#
# The old source comes from, in order: $OLD_SRC (a folder or a .tar of the tree), a git
# worktree of OLD_REF where git has the commit, or .cmp/OLD_REF.tar. The GPU machine gets
# the working tree without its git history, so carry the old tree there; here, once:
#   echo /.cmp/ >> .git/info/exclude; mkdir -p .cmp
#   git archive -o .cmp/dd38f68.tar dd38f68 CMakeLists.txt pyproject.toml README.md LICENSE csrc kernels python
# and name .cmp in the run's carry.
#
# Environment: CUDALITE_CUDA (ON; OFF for a CPU-only check of the script), CUDAARCHS
# (90-real), JOBS (compile jobs per build; default all cores: the two builds share them),
# CMP_DIR (/tmp/cudalite-cmp: the old source, the two installs and the logs). A warm
# machine reuses the old install and both build folders (the new one is rebuilt
# incrementally).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
old_ref=dd38f68
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  old_ref=$1
  shift
fi
cmp_dir=${CMP_DIR:-/tmp/cudalite-cmp}
mkdir -p "$cmp_dir"
export PYTHONUNBUFFERED=1
export CUDALITE_CUDA=${CUDALITE_CUDA:-ON} CUDAARCHS=${CUDAARCHS:-90-real}
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
py=${PYTHON:-python3}
t_start=$(date +%s)

# ---- the old source ----
old_src=$cmp_dir/src-$old_ref
if [ ! -f "$old_src/pyproject.toml" ]; then
  rm -rf "$old_src"
  from=${OLD_SRC:-}
  [ -z "$from" ] && [ -f ".cmp/$old_ref.tar" ] && from=.cmp/$old_ref.tar
  if [ -n "$from" ] && [ -d "$from" ]; then
    cp -r "$from" "$old_src"
  elif [ -n "$from" ]; then
    mkdir -p "$old_src" && tar -xf "$from" -C "$old_src"
  elif git rev-parse -q --verify "$old_ref^{commit}" > /dev/null 2>&1; then
    git worktree prune
    git worktree add -q --detach "$old_src" "$old_ref" || exit 1
  else
    echo "no source for $old_ref: set OLD_SRC or carry .cmp/$old_ref.tar (see the header)" >&2
    exit 1
  fi
fi

# ---- both builds at once (each its own build folder, in its source tree) ----
build() {  # source target log
  "$py" -m pip install --no-build-isolation --no-deps --upgrade -q --target "$2" "$1" \
    > "$3" 2>&1
}
old_site=$cmp_dir/site-old
new_site=$cmp_dir/site-new
pids=()
if [ ! -d "$old_site/cudalite" ]; then
  build "$old_src" "$old_site" "$cmp_dir/build_old.log" &
  pids+=("$!:old")
fi
build "$root" "$new_site" "$cmp_dir/build_new.log" &
pids+=("$!:new")
failed=0
for p in "${pids[@]}"; do
  if ! wait "${p%%:*}"; then
    echo "the ${p##*:} build failed:" >&2
    tail -30 "$cmp_dir/build_${p##*:}.log" >&2
    failed=1
  fi
done
[ $failed = 0 ] || exit 1
echo "builds: $(( $(date +%s) - t_start )) s (CUDALITE_CUDA=$CUDALITE_CUDA, CUDAARCHS=$CUDAARCHS)"

# ---- the comparison (the new tree's benchmark code for both builds) ----
device=cuda
[ "$CUDALITE_CUDA" = OFF ] && device=cpu
"$py" benchmarks/compare_builds.py "$old_site" "$new_site" --device "$device" "$@"
echo "total: $(( $(date +%s) - t_start )) s"
