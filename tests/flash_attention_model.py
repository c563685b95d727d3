"""A NumPy model of the fused attention kernels (kernels/flash_attention.cu), tile for tile:
the same tile sizes, loop bounds, causal tile skipping, online softmax in log2 units, rounding
of P and dS to the input dtype before the tensor-core products, and the backward's
recurrences. tests/test_nn_attention.py checks it against the composition on the CPU, so the
algorithm is tested without a GPU; the kernels are checked against the composition on CUDA.
"""

from __future__ import annotations

import numpy as np

BQ = 64  # queries per tile (kBQ)
BK = 64  # keys per tile (kBK)
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
SLACK = 8.0  # kSlack: how far (log2 units) a tile's max may pass a row's m before rescaling


def round_bf16(x):
    """float32 -> bfloat16 -> float32, rounding to nearest even (as __float2bfloat16_rn)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def rounder(dtype):
    """What storing a float32 value in the kernel's 16-bit type does to it."""
    if dtype == "bfloat16":
        return round_bf16
    if dtype == "float16":
        return lambda x: np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)
    return lambda x: np.asarray(x, dtype=np.float32)


def _mask(q0, k0, L, S, causal):
    """The (BQ, BK) tile of keys each query sees: key in range, and key <= query if causal."""
    qi = q0 + np.arange(BQ)[:, None]
    kj = k0 + np.arange(BK)[None, :]
    keep = kj < S
    if causal:
        keep = keep & (kj <= qi)
    return keep


def _tile(x, r0, n):
    """Rows [r0, r0 + 64) of x, zeros past its n rows (load_tile)."""
    t = np.zeros((BQ, x.shape[1]), dtype=np.float32)
    rows = x[r0 : min(r0 + BQ, n)]
    t[: len(rows)] = rows
    return t


def kv_tiles(q0, S, causal):
    """The key tiles a query tile reads in the forward (kv_end)."""
    end = min(S, q0 + BQ) if causal else S
    return range(0, end, BK)


def q_tiles(k0, L, causal):
    """The query tiles a key tile reads in the backward (q_begin)."""
    return range(k0 if causal else 0, L, BQ)


def forward_head(q, k, v, causal, scale, dtype, stats=None):
    """One (batch, head): q (L, D), k and v (S, D), already in the input dtype's values.
    Returns out (L, D) rounded to the dtype and lse (L,) float32. ``stats["rescales"]``
    counts the tiles after a row's first on which its accumulator was rescaled."""
    rnd = rounder(dtype)
    L, D = q.shape
    S = k.shape[0]
    out = np.zeros((L, D), dtype=np.float32)
    lse = np.zeros(L, dtype=np.float32)
    sl2 = np.float32(scale * LOG2E)
    for q0 in range(0, L, BQ):
        qt = _tile(q, q0, L)
        acc = np.zeros((BQ, D), dtype=np.float32)
        m = np.full(BQ, -np.inf, dtype=np.float32)
        l = np.zeros(BQ, dtype=np.float32)
        for k0 in kv_tiles(q0, S, causal):
            kt, vt = _tile(k, k0, S), _tile(v, k0, S)
            s = (qt @ kt.T) * sl2  # WMMA, float32 accumulators
            s = np.where(_mask(q0, k0, L, S, causal), s, -np.inf).astype(np.float32)
            # lazy rescaling: a row's m moves only when the tile's max passes m + SLACK
            mx = s.max(axis=1)
            grow = mx > m + SLACK
            with np.errstate(invalid="ignore"):
                alpha = np.where(grow, np.exp2(m - mx), 1.0).astype(np.float32)
            if stats is not None:
                stats["rescales"] = stats.get("rescales", 0) + int((grow & (m > -np.inf)).sum())
            m = np.where(grow, mx, m).astype(np.float32)
            base = np.where(m == -np.inf, 0.0, m).astype(np.float32)
            p = np.exp2(s - base[:, None])
            l = l * alpha + p.sum(axis=1)
            acc = acc * alpha[:, None] + rnd(p) @ vt  # P stored in the input dtype
        with np.errstate(divide="ignore"):
            inv = np.where(l > 0, 1.0 / l, 0.0).astype(np.float32)
            row_lse = np.where(l > 0, (m + np.log2(l)) * LN2, -np.inf)
        n = min(BQ, L - q0)
        out[q0 : q0 + n] = (acc * inv[:, None])[:n]
        lse[q0 : q0 + n] = row_lse[:n]
    return rnd(out), lse


def backward_head(do, q, k, v, out, lse, causal, scale, dtype):
    """The gradients (dq, dk, dv) of one (batch, head), as the backward kernels compute them:
    delta = rowsum(dO * O), then per key tile and query tile P, dP, dS, with dQ accumulated in
    float32 across key tiles (the atomics) and dK, dV in float32 across query tiles."""
    rnd = rounder(dtype)
    L, D = q.shape
    S = k.shape[0]
    delta = (do * out).sum(axis=1, dtype=np.float32)
    dq = np.zeros((L, D), dtype=np.float32)
    dk = np.zeros((S, D), dtype=np.float32)
    dv = np.zeros((S, D), dtype=np.float32)
    sl2 = np.float32(scale * LOG2E)
    for k0 in range(0, S, BK):
        kt, vt = _tile(k, k0, S), _tile(v, k0, S)
        dk_acc = np.zeros((BK, D), dtype=np.float32)
        dv_acc = np.zeros((BK, D), dtype=np.float32)
        for q0 in q_tiles(k0, L, causal):
            qt, dot = _tile(q, q0, L), _tile(do, q0, L)
            rows = q0 + np.arange(BQ)
            lse_t = np.where(rows < L, lse[np.minimum(rows, L - 1)] * LOG2E, 0.0)
            delta_t = np.where(rows < L, delta[np.minimum(rows, L - 1)], 0.0)
            keep = _mask(q0, k0, L, S, causal) & (rows < L)[:, None]
            s = qt @ kt.T
            p = np.where(keep, np.exp2(s * sl2 - lse_t[:, None]), 0.0).astype(np.float32)
            dp = dot @ vt.T
            ds = (p * (dp - delta_t[:, None])).astype(np.float32)
            p16, ds16 = rnd(p), rnd(ds)
            n = min(BQ, L - q0)
            dq[q0 : q0 + n] += ((ds16 @ kt) * np.float32(scale))[:n]
            dv_acc += p16.T @ dot
            dk_acc += ds16.T @ qt
        n = min(BK, S - k0)
        dk[k0 : k0 + n] = (dk_acc * np.float32(scale))[:n]
        dv[k0 : k0 + n] = dv_acc[:n]
    return rnd(dq), rnd(dk), rnd(dv)


def forward(q, k, v, causal, scale, dtype):
    """(B, H, L, D) arrays: the kernels' out and lse for every (batch, head)."""
    B, H, L, D = q.shape
    out = np.zeros((B, H, L, D), dtype=np.float32)
    lse = np.zeros((B, H, L), dtype=np.float32)
    for b in range(B):
        for h in range(H):
            out[b, h], lse[b, h] = forward_head(q[b, h], k[b, h], v[b, h], causal, scale, dtype)
    return out, lse


def backward(do, q, k, v, out, lse, causal, scale, dtype):
    grads = [np.zeros(t.shape, dtype=np.float32) for t in (q, k, v)]
    B, H = q.shape[:2]
    for b in range(B):
        for h in range(H):
            r = backward_head(
                do[b, h], q[b, h], k[b, h], v[b, h], out[b, h], lse[b, h], causal, scale, dtype
            )
            for g, x in zip(grads, r, strict=True):
                g[b, h] = x
    return tuple(grads)
