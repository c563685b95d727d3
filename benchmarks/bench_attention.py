"""scaled_dot_product_attention on CUDA in bfloat16: cudalite's fused kernel against cudalite's
composition (matmul, mask, softmax, matmul: the scores materialised) and torch's flash kernel,
forward and forward + backward, causal and not, at a GPT-2-like shape (B 8, H 16, T 1024,
D 64) and nanoGPT's (B 64, H 6, T 256, D 64).

    python benchmarks/bench_attention.py [--dtype bfloat16|float16] [--iters 20]

Times are CUDA-event medians of 7 runs of `iters` calls each. TFLOP/s counts the two
products of the forward (4 B H L S D, halved when causal) and 2.5 times that more for the
backward (3.5 times in all for forward + backward), as FlashAttention's papers count. Run
with an interpreter that has both cudalite and torch importable (torch is optional).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import cudalite  # noqa: E402
from _harness import Table, optional  # noqa: E402

torch = optional("torch")
if torch is not None:
    optional("torch.nn.attention")  # torch.nn.attention, for sdpa_kernel

SHAPES = [
    ("gpt2 B8 H16 T1024 D64", (8, 16, 1024, 64)),
    ("nanogpt B64 H6 T256 D64", (64, 6, 256, 64)),
]


def _events_median(M, fn, iters, repeat=7):
    """Median seconds per call of fn, timed with CUDA events around `iters` calls."""
    fn()
    M.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = M.cuda.Event(enable_timing=True)
        end = M.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(times)


def _case(M, shape, dtype_name, causal, backward):
    """A callable running attention (and its backward) on random q, k, v of `shape`."""
    B, H, T, D = shape
    dtype = getattr(M, dtype_name)
    M.manual_seed(0)
    q, k, v = (
        M.randn(B, H, T, D, device="cuda", dtype=dtype, requires_grad=backward) for _ in range(3)
    )
    do = M.randn(B, H, T, D, device="cuda", dtype=dtype)
    F = M.nn.functional

    def run():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if backward:
            out.backward(do)
            q.grad = k.grad = v.grad = None

    return run


def _timed(M, backend, shape, dtype_name, causal, backward, iters):
    """Seconds per call with `backend` (an SDPBackend name) selected, or None if it fails."""
    from_attention = M.nn.attention
    fn = _case(M, shape, dtype_name, causal, backward)
    with from_attention.sdpa_kernel(getattr(from_attention.SDPBackend, backend)):
        try:
            return _events_median(M, fn, iters)
        except (RuntimeError, MemoryError) as e:  # out of memory for the composition, say
            print(f"  {M.__name__} {backend} {shape}: {type(e).__name__}: {str(e)[:80]}")
            return None


def _flops(shape, causal, backward):
    B, H, T, D = shape
    f = 4.0 * B * H * T * T * D * (0.5 if causal else 1.0)
    return f * (3.5 if backward else 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    if not cudalite.cuda.is_available():
        print("bench_attention: no CUDA device")
        return
    times = Table(f"scaled_dot_product_attention, {args.dtype}")
    rates = Table(f"scaled_dot_product_attention, {args.dtype}", "TFLOP/s", True)
    for name, shape in SHAPES:
        for causal in (False, True):
            for backward in (False, True):
                case = f"{name} {'causal' if causal else 'full'} {'fwd+bwd' if backward else 'fwd'}"
                cl_fused = _timed(
                    cudalite, "FLASH_ATTENTION", shape, args.dtype, causal, backward, args.iters
                )
                cl_math = _timed(cudalite, "MATH", shape, args.dtype, causal, backward, args.iters)
                tflash = None
                if torch is not None and torch.cuda.is_available():
                    tflash = _timed(
                        torch, "FLASH_ATTENTION", shape, args.dtype, causal, backward, args.iters
                    )
                times.add(case, cudalite=cl_fused, **{"cl math": cl_math, "torch flash": tflash})
                fl = _flops(shape, causal, backward) / 1e12
                rates.add(
                    case,
                    cudalite=fl / cl_fused if cl_fused else None,
                    **{
                        "cl math": fl / cl_math if cl_math else None,
                        "torch flash": fl / tflash if tflash else None,
                    },
                )
                print(case, "done", flush=True)
    print(times.render())
    print(rates.render())


if __name__ == "__main__":
    main()
