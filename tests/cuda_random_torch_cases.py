"""CUDA draws compared with torch's on the same GPU model (test_cuda_random_recorded.py, and
live in test_cuda_random_torch.py where torch is importable): randperm, multinomial,
dropout, normal with tensor arguments, and sequences of them (each op must advance the
Philox offset as torch's does, or the ops after it draw other numbers).

Each case is a function of the torch-like module ``T`` (torch, or cudalite) returning a CUDA
tensor; gen_cuda_random_torch.py records torch's results, with the generator's state after
the case, into tests/data/cuda_random_torch.json.
"""

from __future__ import annotations

BIG = 2**20 + 3


def _seeded(T, seed=0):
    T.manual_seed(seed)
    return None


def _randperm_cases(cases):
    # Sizes on both sides of torch's key widths: int32 keys below n = 30084 (all 32 bits of
    # them from n = 21273), int64 keys from it; runs of equal keys are common for small n.
    for n in (1, 2, 3, 10, 100, 1000, 5000, 25000, 30083, 30084, 100_000, BIG):
        cases[f"randperm-{n}"] = lambda T, n=n: (
            _seeded(T, 3),
            T.randperm(n, device="cuda"),
        )[1]
    for n in (1000, 40000, BIG):
        cases[f"randperm-int32-{n}"] = lambda T, n=n: (
            _seeded(T, 4),
            T.randperm(n, dtype=T.int32, device="cuda"),
        )[1]
    cases["randperm-float32-777"] = lambda T: (
        _seeded(T, 5),
        T.randperm(777, dtype=T.float32, device="cuda"),
    )[1]
    cases["randperm-generator"] = lambda T: (
        _seeded(T, 9),
        T.randperm(3000, device="cuda", generator=T.Generator(device="cuda").manual_seed(9)),
    )[1]
    cases["randperm-twice"] = lambda T: (
        _seeded(T, 6),
        T.cat([T.randperm(50, device="cuda"), T.randperm(50, device="cuda")]),
    )[1]


def _probs(T, rows, cats, dtype):
    """Probabilities from the same stream (so the case also checks that draw); rows 0: one
    row as a 1-d tensor."""
    shape = (rows, cats) if rows else (cats,)
    return T.rand(*shape, device="cuda", dtype=getattr(T, dtype))


def _multinomial(rows, cats, samples, dtype, replacement, seed):
    def case(T):
        _seeded(T, seed)
        return T.multinomial(_probs(T, rows, cats, dtype), samples, replacement=replacement)

    return case


def _multinomial_cases(cases):
    shapes = [(0, 10, 5), (0, 1000, 300), (3, 100, 1000), (200, 7, 20)]
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        for rows, cats, samples in shapes:
            name = f"{rows or 1}x{cats}-{samples}" + ("" if rows else "-1d")
            cases[f"multinomial-repl-{dtype}-{name}"] = _multinomial(
                rows, cats, samples, dtype, True, 7
            )
    # Many short rows (torch's scan gives each 512 threads), and more rows than a grid holds
    # (rows 65535 on take the next draw of the first rows' threads).
    cases["multinomial-repl-float32-8192x8-3"] = _multinomial(8192, 8, 3, "float32", True, 7)
    cases["multinomial-repl-float32-70000x3-2"] = _multinomial(70000, 3, 2, "float32", True, 7)
    # No 16-bit floats: p / q rounded to 16 bits ties often, and torch's top-k orders ties
    # its own way.
    for dtype in ("float32", "float64"):
        for rows, cats, samples in [(0, 100, 10), (4, 1000, 50), (2, 30, 30)]:
            name = f"{rows or 1}x{cats}-{samples}"
            cases[f"multinomial-norepl-{dtype}-{name}"] = _multinomial(
                rows, cats, samples, dtype, False, 8
            )
    cases["multinomial-one-sample"] = lambda T: (
        _seeded(T, 9),
        T.multinomial(_probs(T, 5, 40, "float32"), 1, replacement=True),
    )[1]
    cases["multinomial-zeros-in-row"] = lambda T: (
        _seeded(T, 10),
        T.multinomial(
            T.tensor([0.0, 0.25, 0.0, 0.5, 0.0, 0.25, 0.0], device="cuda"), 500, replacement=True
        ),
    )[1]
    cases["multinomial-generator"] = lambda T: (
        _seeded(T, 11),
        T.multinomial(
            T.tensor([0.1, 0.2, 0.3, 0.4], device="cuda"),
            64,
            replacement=True,
            generator=T.Generator(device="cuda").manual_seed(11),
        ),
    )[1]


def _dropout_cases(cases):
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        for n in (1, 3, 15, 16, 17, 1000, 12288, BIG):
            cases[f"dropout-{dtype}-{n}"] = lambda T, n=n, d=dtype: (
                _seeded(T, 12),
                T.nn.functional.dropout(T.randn(n, device="cuda", dtype=getattr(T, d)), 0.1),
            )[1]
    cases["dropout-p0.5-2d"] = lambda T: (
        _seeded(T, 13),
        T.nn.functional.dropout(T.randn(64, 129, device="cuda"), 0.5),
    )[1]
    # Addresses that allow shorter vectors, or none (the grid-stride layout).
    for start in (1, 2, 4):
        cases[f"dropout-offset-{start}"] = lambda T, s=start: (
            _seeded(T, 14),
            T.nn.functional.dropout(T.randn(1024 + s, device="cuda")[s:], 0.2),
        )[1]
    cases["dropout-f16-offset-2"] = lambda T: (
        _seeded(T, 14),
        T.nn.functional.dropout(T.randn(4098, device="cuda", dtype=T.float16)[2:], 0.2),
    )[1]
    cases["dropout-transposed"] = lambda T: (
        _seeded(T, 15),
        T.nn.functional.dropout(T.randn(64, 33, device="cuda").t(), 0.3),
    )[1]
    cases["dropout-transposed-odd"] = lambda T: (
        _seeded(T, 15),
        T.nn.functional.dropout(T.randn(63, 33, device="cuda").t(), 0.3),
    )[1]
    cases["dropout-sliced"] = lambda T: (
        _seeded(T, 16),
        T.nn.functional.dropout(T.randn(40, 50, device="cuda")[:, :31], 0.3),
    )[1]
    cases["dropout-inplace"] = lambda T: (
        _seeded(T, 17),
        T.nn.functional.dropout(T.randn(3000, device="cuda"), 0.2, inplace=True),
    )[1]
    cases["dropout-module"] = lambda T: (
        _seeded(T, 18),
        T.nn.Dropout(0.25)(T.randn(8, 100, device="cuda")),
    )[1]
    cases["dropout-grad"] = lambda T: _dropout_grad(T)


def _dropout_grad(T):
    _seeded(T, 19)
    x = T.randn(2000, device="cuda", requires_grad=True)
    y = T.nn.functional.dropout(x, 0.4)
    (y * T.arange(2000, device="cuda")).sum().backward()
    return T.cat([y.detach(), x.grad])


def _normal_cases(cases):
    cases["normal-tensor-tensor-broadcast"] = lambda T: (
        _seeded(T, 20),
        T.normal(
            T.arange(3, dtype=T.float32, device="cuda").reshape(3, 1),
            T.full((1, 4), 0.5, device="cuda"),
        ),
    )[1]
    cases["normal-tensor-float"] = lambda T: (
        _seeded(T, 21),
        T.normal(T.arange(1000, dtype=T.float32, device="cuda"), 2.5),
    )[1]
    cases["normal-float-tensor"] = lambda T: (
        _seeded(T, 22),
        T.normal(1.5, T.linspace(0, 3, 1001, device="cuda")),
    )[1]
    cases["normal-tensor-tensor-f64"] = lambda T: (
        _seeded(T, 23),
        T.normal(T.zeros(17, dtype=T.float64, device="cuda"), T.ones(17, device="cuda")),
    )[1]


def _sequence(T):
    """Ops one after another: each must leave the offset where torch's leaves it."""
    _seeded(T, 24)
    F = T.nn.functional  # noqa: N806
    parts = [
        T.rand(1000, device="cuda"),
        T.randperm(5000, device="cuda"),
        F.dropout(T.randn(3000, device="cuda"), 0.2),
        T.multinomial(T.rand(4, 30, device="cuda"), 100, replacement=True),
        T.randperm(100_000, device="cuda"),
        T.multinomial(T.rand(30, device="cuda"), 10),
        F.dropout(T.randn(BIG, device="cuda", dtype=T.float16), 0.1),
        T.normal(T.zeros(5, device="cuda"), T.ones(5, device="cuda")),
        T.randn(17, device="cuda"),
    ]
    return T.cat([p.reshape(-1).double() for p in parts])


def _case_table():
    cases = {}
    _randperm_cases(cases)
    _multinomial_cases(cases)
    _dropout_cases(cases)
    _normal_cases(cases)
    cases["sequence"] = _sequence
    return cases


CASES = _case_table()


def canonical_bytes(value):
    """The values' exact bits: floating tensors widened to float64, others to int64."""
    v = value.detach().cpu()
    v = v.double() if v.dtype.is_floating_point else v.long()
    return v.contiguous().numpy().tobytes()


def head(value, k=6):
    import numpy as np

    floating = value.dtype.is_floating_point
    flat = np.frombuffer(canonical_bytes(value), dtype=np.float64 if floating else np.int64)
    return [float(v).hex() if floating else int(v) for v in flat[:k]]


def state_after(T):
    """The CUDA generator's state (seed, offset) after a case, as a list of 16 bytes."""
    return [int(b) for b in T.cuda.get_rng_state().tolist()]
