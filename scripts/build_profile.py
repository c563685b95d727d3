"""CPU time of each translation unit of a configured Ninja build, and what it means for N cores.

    python scripts/build_profile.py BUILD_DIR [--jobs 2] [--cores 2] [--target _C]
                                    [--filter REGEX]

Runs every compile command of TARGET (from `ninja -t commands`; configure the build dir
without a compiler launcher such as ccache) under `nice -n 10`, JOBS at a time, and measures
each one's user + sys CPU time (nvcc's subprocesses included), then runs the archive and link
steps the same way. Prints the translation units, longest first, the total, and the wall time
the build would take on CORES idle cores: the compiles handed out longest first to the
least busy core, then the link. These figures do not depend on what else the machine is
doing, unlike a wall-clock time (docs/development.md, "Build time").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def _commands(build_dir: str, target: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(source, command) of each compile, and the other commands (archive, link) in order."""
    lines = subprocess.run(
        ["ninja", "-C", build_dir, "-t", "commands", target],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    root = os.path.abspath(os.path.join(build_dir, "..", ".."))
    compiles, others = [], []
    for line in lines:
        m = re.search(r" -c (\S+)", line)
        if m:
            src = os.path.relpath(os.path.join(build_dir, m.group(1)), root)
            compiles.append((src, line))
        else:
            others.append(line)
    return compiles, others


def _cpu_seconds(cmd: str, cwd: str) -> float | None:
    """user + sys seconds of `cmd` and its children; None when it fails."""
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S", "nice", "-n", "10", "sh", "-c", cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        print(f"failed ({p.returncode}): {cmd}\n{p.stderr}", file=sys.stderr)
        return None
    user, system = p.stderr.strip().splitlines()[-1].split()
    return float(user) + float(system)


def _makespan(times: list[float], cores: int) -> float:
    """Wall time of the jobs on `cores` cores, each job to the least busy core, longest first."""
    loads = [0.0] * cores
    for t in sorted(times, reverse=True):
        loads[loads.index(min(loads))] += t
    return max(loads)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--target", default="_C")
    ap.add_argument("--jobs", type=int, default=2, help="compiles run at once (default 2)")
    ap.add_argument("--cores", type=int, default=2, help="cores of the estimate (default 2)")
    ap.add_argument("--filter", default="", help="only the sources whose path matches REGEX")
    a = ap.parse_args()

    compiles, others = _commands(a.build_dir, a.target)
    if a.filter:
        compiles = [(s, c) for s, c in compiles if re.search(a.filter, s)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(a.jobs) as pool:
        measured = list(pool.map(lambda sc: _cpu_seconds(sc[1], a.build_dir), compiles))
    wall = time.monotonic() - t0
    failed = [s for (s, _), t in zip(compiles, measured, strict=True) if t is None]
    rows = sorted(
        ((t, s) for (s, _), t in zip(compiles, measured, strict=True) if t is not None),
        reverse=True,
    )
    link = 0.0
    if not a.filter and not failed:
        for cmd in others:
            link += _cpu_seconds(cmd, a.build_dir) or 0.0
    for t, s in rows:
        print(f"{t:8.1f} s  {s}")
    times = [t for t, _ in rows]
    print(f"{sum(times):8.1f} s  total compile CPU time ({len(times)} translation units)")
    if rows:
        print(f"{rows[0][0]:8.1f} s  longest translation unit ({rows[0][1]})")
    if not a.filter and not failed:
        print(f"{link:8.1f} s  archive and link")
        est = _makespan(times, a.cores) + link
        print(f"{est:8.1f} s  estimated wall time on {a.cores} idle cores (compiles, then link)")
    print(f"{wall:8.1f} s  wall time of this measurement ({a.jobs} jobs)")
    if failed:
        sys.exit(f"{len(failed)} compiles failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
