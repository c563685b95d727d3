"""A NumPy model of torch's CUDA random layouts (docs/random.md), to check cudalite's CUDA
kernels without torch: curand's Philox4x32-10 streams (thread `i` is subsequence `i`, started
at the generator's offset), curand_uniform4's floats, and where torch's kernels put each draw
(the grid-stride random fills, randperm, multinomial with replacement, fused dropout).
Not collected by pytest (helpers of test_cuda_random_layout.py)."""

from __future__ import annotations

import math

import numpy as np

_M32 = np.uint64(0xFFFFFFFF)
_MUL = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_WEYL = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter, key):
    """Philox4x32-10 of counters (an [n, 4] array of 32-bit words) under key (two 32-bit
    words): an [n, 4] uint32 array."""
    c = [np.asarray(counter, dtype=np.uint64)[:, i] for i in range(4)]
    k0, k1 = int(key[0]), int(key[1])
    for r in range(10):
        if r:
            k0, k1 = (k0 + _WEYL[0]) & 0xFFFFFFFF, (k1 + _WEYL[1]) & 0xFFFFFFFF
        p0, p1 = _MUL[0] * c[0], _MUL[1] * c[2]
        c = [
            (p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0),
            p1 & _M32,
            (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1),
            p0 & _M32,
        ]
    return np.stack(c, axis=1).astype(np.uint32)


def draws(seed, threads, offset, step):
    """The `step`-th curand4 draw (four 32-bit words) of curand_init(seed, thread, offset) for
    each thread in `threads` (offset a multiple of 4, as torch's always are)."""
    threads = np.asarray(threads, dtype=np.uint64)
    steps = np.broadcast_to(np.asarray(step, dtype=np.uint64), threads.shape)
    count = np.uint64(offset // 4) + steps
    ctr = np.stack(
        [count & _M32, count >> np.uint64(32), threads & _M32, threads >> np.uint64(32)], axis=1
    )
    return philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32))


def uniform_floats(words):
    """curand_uniform of 32-bit words: (0, 1] floats, x * 2^-32 + 2^-33 in float32."""
    return np.asarray(words, dtype=np.uint32).astype(np.float32) * np.float32(
        2.0**-32
    ) + np.float32(2.0**-33)


def launch(n, sms, threads_per_sm, unroll=4):
    """torch's calc_execution_policy: (grid, offset increment) of a random fill of n."""
    grid = min((n + 255) // 256, sms * (threads_per_sm // 256))
    return grid, ((n - 1) // (256 * grid * unroll) + 1) * 4


def round4(n):
    """CUDAGeneratorImpl::philox_cuda_state's rounding of an offset increment."""
    return (n + 3) // 4 * 4


def fill_words(seed, offset, n, grid, unroll):
    """The draw behind each element of a grid-stride random fill: for unroll 4 the 32-bit
    word, for unroll 2 the 64-bit value (two words, high first)."""
    e = np.arange(n, dtype=np.int64)
    stride = grid * 256
    thread, lane, step = e % stride, (e // stride) % unroll, e // (stride * unroll)
    w = draws(seed, thread, offset, step).astype(np.uint64)
    rows = np.arange(n)
    if unroll == 4:
        return w[rows, lane]
    return (w[rows, 2 * lane] << np.uint64(32)) | w[rows, 2 * lane + 1]


def random_keys(seed, offset, n, grid, bits):
    """randperm's keys: random_(int min, int max) of int32 (bits <= 32) or int64, which draws
    64 bits per element (the range is 2^32 - 1 or 2^64 - 1)."""
    v = fill_words(seed, offset, n, grid, 2)
    if bits <= 32:
        return ((v % np.uint64(2**32 - 1)).astype(np.int64) - 2**31).astype(np.int32)
    low = v % np.uint64(2**64 - 1)
    return (low + np.uint64(2**63)).view(np.int64)  # + int64 min, wrapping


def randperm_bits(n):
    """How many low key bits torch's CUDA randperm sorts by."""
    return min(64, math.ceil(math.log2(n - (6 * n * n + 1) / (math.log(0.9) * 12))))


def randperm_islands(seed, n, offset, sms, threads_per_sm):
    """How many runs of equal keys torch's randperm shuffles for (seed, offset)."""
    bits = randperm_bits(n)
    grid, _ = launch(n, sms, threads_per_sm, unroll=2)
    keys = random_keys(seed, offset, n, grid, bits).astype(np.int64)
    masked = np.sort(keys & ((1 << bits) - 1 if bits < 64 else -1))
    same = masked[1:] == masked[:-1]
    return int(np.count_nonzero(same & ~np.concatenate([[False], same[:-1]])))


def randperm(seed, n, offset, sms, threads_per_sm):
    """torch.randperm(n, device='cuda') from (seed, offset): (permutation, offset after)."""
    bits = randperm_bits(n)
    grid, inc = launch(n, sms, threads_per_sm, unroll=2)
    keys = random_keys(seed, offset, n, grid, bits)
    offset += inc
    width = 32 if bits <= 32 else 64
    u = keys.view(np.uint32 if width == 32 else np.uint64).astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    sort_key = (u ^ sign) & mask  # CUB's order of signed keys, on their low bits
    order = np.argsort(sort_key, kind="stable")
    perm = order.astype(np.int64)
    masked = (u & mask)[order]
    same = masked[1:] == masked[:-1]
    for start in np.flatnonzero(same & ~np.concatenate([[False], same[:-1]])):
        size = 1
        while start + size < n and masked[start + size] == masked[start]:
            size += 1
        words = draws(seed, np.full(size, start), offset, np.arange(size)).reshape(-1)
        seg = perm[start : start + size]
        for j, i in enumerate(range(size - 1, 0, -1)):
            r = int(words[j]) % (i + 1)
            seg[i], seg[r] = seg[r], seg[i]
    return perm, offset + round4(n)


def _warp_sums(v):
    """Lane 0 of a shuffle-down tree over each row of 32 lanes (torch's WarpReduceSum)."""
    v = v.copy()
    for off in (16, 8, 4, 2, 1):
        v[:, : 32 - off] = v[:, : 32 - off] + v[:, off:]
    return v[:, 0]


def renorm_row(p):
    """A row divided by its sum, summed as torch's renormRowsL1 sums it, in p's dtype."""
    n = p.size
    block = min(1024, (n + 31) // 32 * 32)
    partial = np.zeros(block, dtype=p.dtype)
    for c in range(0, n, block):
        chunk = p[c : c + block]
        partial[: chunk.size] = partial[: chunk.size] + chunk
    warps = _warp_sums(partial.reshape(-1, 32))
    lanes = np.zeros(32, dtype=p.dtype)
    lanes[: warps.size] = warps
    total = _warp_sums(lanes.reshape(1, 32))[0]
    return p / total if total > 0 else p.copy()


def scan_log_threads_x(rows, cols):
    """torch's get_log_num_threads_x_inner_scan, in its unsigned 32-bit arithmetic."""
    lx = ly = 0
    while (1 << lx) < cols:
        lx += 1
    while (1 << ly) < rows:
        ly += 1
    return min(max(4, ((9 + lx - ly) % 2**32) // 2), 9)


def scan_rows(dist):
    """Prefix sums of each row as torch's Sklansky scan of several rows computes them."""
    rows, n = dist.shape
    log_x = scan_log_threads_x(rows, n)
    nx = 1 << log_x
    t = np.arange(nx)
    out = np.empty_like(dist)
    for r in range(rows):
        total = dist.dtype.type(0)
        for col in range(0, n, 2 * nx):
            buf = np.zeros(2 * nx, dtype=dist.dtype)
            chunk = dist[r, col : col + 2 * nx]
            buf[: chunk.size] = chunk
            buf[0] = buf[0] + total
            for m in range(log_x + 1):
                a = ((t >> m) << (m + 1)) | (1 << m)
                ti, si = a + t % (1 << m), a - 1
                buf[ti] = buf[ti] + buf[si]
            out[r, col : col + chunk.size] = buf[: chunk.size]
            total = buf[2 * nx - 1]
    return out


def multinomial(seed, probs, samples, offset, dtype=np.float32):
    """torch.multinomial(probs, samples, replacement=True) on CUDA from (seed, offset), for
    float32 or float16 probabilities: (indices, offset after). Several rows are normalised
    and prefix-summed in torch's order; one row (which torch scans with CUB) only where its
    prefix sums are exact (dyadic probabilities)."""
    probs = np.atleast_2d(np.asarray(probs, dtype=dtype))
    rows, cats = probs.shape
    dist = np.stack([renorm_row(r) for r in probs])
    cum = np.cumsum(dist, axis=1, dtype=dtype) if rows == 1 else scan_rows(dist)
    grid_y = min(rows, 65535)
    grid_x = (samples - 1) // 128 + 1
    out = np.empty((rows, samples), dtype=np.int64)
    for r in range(rows):
        threads = (r % grid_y) * grid_x * 128 + np.arange(samples)
        u = uniform_floats(draws(seed, threads, offset, r // grid_y)[:, 0]).astype(dtype)
        idx = np.searchsorted(cum[r].astype(np.float64), u.astype(np.float64), side="left")
        idx = np.minimum(idx, cats - 1)
        for s in range(samples):
            while idx[s] >= 1 and dist[r, idx[s]] == 0:
                idx[s] -= 1
        out[r] = idx
    return out, offset + ((rows - 1) // grid_y + 1) * 4


def dropout_vec(nbytes_aligned, itemsize, numel):
    """torch's vector width for a dense input at an address aligned to nbytes_aligned."""
    vec = next(v for v in (8, 4, 2, 1) if nbytes_aligned % (v * itemsize) == 0)
    vec = min(vec, 16 // itemsize)
    while vec > 1 and numel % vec:
        vec //= 2
    return vec


def dropout_kept(seed, offset, n, grid, vec, keep):
    """The mask of torch's fused dropout of n elements (memory order for vec > 1)."""
    e = np.arange(n, dtype=np.int64)
    if vec == 1:
        stride = grid * 256
        thread, lane, step = e % stride, (e // stride) % 4, e // (stride * 4)
    else:
        per = (vec + 3) // 4
        chunk = e // vec
        q = e % vec
        thread = chunk % (grid * 256)
        step = (chunk // (grid * 256)) * per + q // 4
        lane = q % 4
    u = uniform_floats(draws(seed, thread, offset, step)[np.arange(n), lane])
    return u < keep


def dropout(seed, offset, x, p, sms, threads_per_sm, vec):
    """F.dropout(x, p) of a contiguous float32/float16 CUDA tensor as torch computes it, from
    (seed, offset): (output, offset after)."""
    x = np.asarray(x)
    n = x.size
    grid, inc = launch(n, sms, threads_per_sm)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    keep = acc(1.0 - p)
    scale = acc(1.0 / float(keep))
    kept = dropout_kept(seed, offset, n, grid, vec, keep).astype(np.float32)
    out = (x.reshape(-1).astype(acc) * kept.astype(acc) * scale).astype(x.dtype)
    return out.reshape(x.shape), offset + inc
