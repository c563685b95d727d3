"""``python -m cudalite``: what this install is, what it can see, and a short demonstration.

Prints the version, how the package was built, NumPy's version and the devices found (or why
none is usable), then runs the tutorials' basics on the best device. ``--json`` prints the
report as JSON instead. Exits 0 on any machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time


def report():
    import numpy

    import cudalite
    from cudalite import _C

    info = {
        "cudalite": cudalite.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cuda_compiled": _C._cuda.is_compiled(),
        "cuda_version": _C._cuda.compiled_version() or None,
        "cuda_archs": _C._cuda.compiled_archs() or None,
        "devices": [],
        "cuda_unusable_reason": None,
        "cudnn": None,  # {"version": 91900, "path": ...} where cuDNN loads (convolutions)
    }
    if info["cuda_compiled"] and cudalite.backends.cudnn.is_available():
        info["cudnn"] = {
            "version": cudalite.backends.cudnn.version(),
            "path": _C._cuda._cudnn_library_path(),
        }
    if not info["cuda_compiled"]:
        info["cuda_unusable_reason"] = "cudalite was built without the CUDA toolkit (CPU only)"
    elif cudalite.cuda.device_count() == 0:
        try:
            cudalite.cuda.init()
            info["cuda_unusable_reason"] = "No CUDA GPUs are available"
        except Exception as e:  # the driver's reason, in torch's words
            info["cuda_unusable_reason"] = str(e).splitlines()[0]
    else:
        for i in range(cudalite.cuda.device_count()):
            p = cudalite.cuda.get_device_properties(i)
            info["devices"].append(
                {
                    "index": i,
                    "name": p.name,
                    "capability": f"{p.major}.{p.minor}",
                    "total_memory_gib": round(p.total_memory / 2**30, 2),
                    "multi_processor_count": p.multi_processor_count,
                }
            )
    return info


def demo(device):
    """The seeds' basics: create, move, compute, reduce, matmul, bring back."""
    import cudalite as torch

    lines = []
    t0 = time.perf_counter()
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    lines.append(f"x = torch.tensor([1., 2., 3.], device='{device}')  ->  {x!r}")
    y = x**2
    lines.append(f"x ** 2  ->  {y!r}")
    torch.manual_seed(0)
    a = torch.randn(3, 3).to(device)
    lines.append(f"randn(3, 3).to('{device}').sum()  ->  {a.sum()!r}")
    m = a @ a.t()
    lines.append(f"(a @ a.t()).diagonal sum  ->  {float(m[0, 0] + m[1, 1] + m[2, 2]):.4f}")
    back = y.cpu()
    lines.append(f"y.cpu()  ->  {back!r}  (device {back.device})")
    lines.append(f"demo ran in {1000 * (time.perf_counter() - t0):.1f} ms")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cudalite", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    info = report()
    device = "cuda" if info["devices"] else "cpu"
    try:
        lines = demo(device)
        info["demo_device"] = device
    except Exception as e:  # a broken GPU must not break the report
        lines = [f"demo on {device} failed: {type(e).__name__}: {e}"] + demo("cpu")
        info["demo_device"] = "cpu"
    if args.json:
        info["demo"] = lines
        print(json.dumps(info, indent=2))
        return 0
    print(f"cudalite {info['cudalite']} (Python {info['python']}, NumPy {info['numpy']})")
    if info["cuda_compiled"]:
        print(f"built with CUDA {info['cuda_version']} for architectures {info['cuda_archs']}")
        cudnn = info["cudnn"]
        if cudnn:
            v = cudnn["version"]
            print(f"cuDNN {v // 10000}.{v // 100 % 100}.{v % 100} ({cudnn['path']})")
        else:
            print("cuDNN not found: convolutions on the GPU run on cuBLAS")
    else:
        print("built without CUDA (CPU only)")
    if info["devices"]:
        for d in info["devices"]:
            print(
                f"  cuda:{d['index']}: {d['name']} (compute capability {d['capability']}, "
                f"{d['total_memory_gib']} GiB, {d['multi_processor_count']} SMs)"
            )
    else:
        print(f"no usable GPU: {info['cuda_unusable_reason']}")
    print(f"\ndemonstration on {info['demo_device']}:")
    for line in lines:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
