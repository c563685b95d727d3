"""Random draws compared bit for bit with torch's CPU streams (test_random_torch.py).

Each case is a function of the torch-like module ``T`` (torch, or cudalite) returning a tensor
(or a list of ints); gen_random_torch.py records torch's results into
tests/data/random_torch.json, and test_random_torch.py replays every case with cudalite.
"""

from __future__ import annotations

BIG = 2**20 + 3
SIZES = [1, 3, 15, 16, 17, 1000, BIG]


def _seeded(T, seed=0):
    T.manual_seed(seed)
    return None


def _gen(T, seed):
    return T.Generator().manual_seed(seed)


def _case_table():
    cases = {}
    # rand / randn: every float dtype at every size, with the default generator.
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for n in SIZES:
            cases[f"rand-{dt}-{n}"] = lambda T, dt=dt, n=n: (
                _seeded(T),
                T.rand(n, dtype=getattr(T, dt)),
            )[1]
            cases[f"randn-{dt}-{n}"] = lambda T, dt=dt, n=n: (
                _seeded(T),
                T.randn(n, dtype=getattr(T, dt)),
            )[1]
    # With a Generator object and another seed; two draws in a row (the normal cache).
    for n in (1, 3, 15, 16, 17, 1000):
        cases[f"randn-gen-twice-{n}"] = lambda T, n=n: (
            lambda g: T.cat([T.randn(n, generator=g), T.randn(n, generator=g)])
        )(_gen(T, 1234))
        cases[f"randn-f64-twice-{n}"] = lambda T, n=n: (
            lambda g: T.cat(
                [
                    T.randn(n, generator=g, dtype=T.float64),
                    T.randn(n, generator=g, dtype=T.float64),
                ]
            )
        )(_gen(T, 7))
    cases["randn-2d-17x3"] = lambda T: (_seeded(T, 3), T.randn(17, 3))[1]
    cases["randn-noncontig"] = lambda T: (
        _seeded(T, 5),
        T.zeros(40, 2).t().normal_(1.5, 2.0),
    )[1]
    cases["rand-then-randn"] = lambda T: (
        _seeded(T),
        T.cat([T.rand(5), T.randn(3), T.rand(5), T.randn(1), T.randn(20)]),
    )[1]
    cases["normal_-mean-std-f32-1000"] = lambda T: (
        _seeded(T, 9),
        T.empty(1000).normal_(-2.0, 0.5),
    )[1]
    cases["normal_-f64-3"] = lambda T: (
        _seeded(T, 9),
        T.empty(3, dtype=T.float64).normal_(4.0, 3.0),
    )[1]
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for n in (5, 40):
            cases[f"normal_-odd-{dt}-{n}"] = lambda T, dt=dt, n=n: (
                _seeded(T, 12),
                T.empty(n, dtype=getattr(T, dt)).normal_(0.3, 1.7),
            )[1]
        cases[f"uniform_-odd-{dt}-1000"] = lambda T, dt=dt: (
            _seeded(T, 13),
            T.empty(1000, dtype=getattr(T, dt)).uniform_(-1.7, 2.3),
        )[1]
    cases["normal_-odd-noncontig-f32"] = lambda T: (
        _seeded(T, 14),
        T.zeros(20, 3).t().normal_(0.3, 1.7),
    )[1]
    cases["normal-fn-tensors"] = lambda T: (
        _seeded(T, 15),
        T.normal(T.arange(40, dtype=T.float32), T.tensor([0.5 + 0.0625 * i for i in range(40)])),
    )[1]
    cases["normal-fn-broadcast"] = lambda T: (
        _seeded(T, 15),
        T.normal(T.arange(3, dtype=T.float32).reshape(3, 1), T.full((1, 4), 0.5)),
    )[1]
    cases["normal-fn-tensor-float"] = lambda T: (
        _seeded(T, 15),
        T.normal(T.arange(20, dtype=T.float32), 2.5),
    )[1]
    cases["normal-fn-float-tensor"] = lambda T: (
        _seeded(T, 15),
        T.normal(1.5, T.linspace(0, 3, 33)),
    )[1]
    cases["normal-fn-f64-mean-f32-std"] = lambda T: (
        _seeded(T, 15),
        T.normal(T.zeros(17, dtype=T.float64), T.ones(17)),
    )[1]
    cases["like-forms"] = lambda T: (
        _seeded(T, 16),
        T.cat(
            [
                T.rand_like(T.zeros(20)),
                T.randn_like(T.zeros(20)),
                T.randint_like(T.zeros(20), 3, 50),
            ]
        ),
    )[1]
    cases["normal-fn-size"] = lambda T: (_seeded(T, 11), T.normal(1.0, 2.0, size=(33,)))[1]
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for n in (3, 1000):
            cases[f"uniform_-{dt}-{n}"] = lambda T, dt=dt, n=n: (
                _seeded(T, 2),
                T.empty(n, dtype=getattr(T, dt)).uniform_(-3.0, 5.0),
            )[1]
    # Integers: 32-bit and 64-bit range paths, every integer dtype, random_ forms.
    for dt in ("int64", "int32", "int16", "int8", "uint8"):
        cases[f"randint-{dt}-1000"] = lambda T, dt=dt: (
            _seeded(T),
            T.randint(-5 if dt != "uint8" else 0, 100, (1000,), dtype=getattr(T, dt)),
        )[1]
    cases["randint-int64-wide"] = lambda T: (_seeded(T), T.randint(-(2**40), 2**40, (17,)))[1]
    cases["randint-int64-2^32"] = lambda T: (_seeded(T), T.randint(0, 2**32, (17,)))[1]
    cases["randint-int64-2^32-1"] = lambda T: (_seeded(T), T.randint(0, 2**32 - 1, (17,)))[1]
    cases["randint-float32-wide"] = lambda T: (
        _seeded(T),
        T.randint(0, 2**33, (15,), dtype=T.float32),
    )[1]
    cases["randint-float64-wide"] = lambda T: (
        _seeded(T),
        T.randint(0, 2**33, (15,), dtype=T.float64),
    )[1]
    cases["randint-float16-big"] = lambda T: (
        _seeded(T),
        T.randint(0, 2048, (BIG,), dtype=T.float16),
    )[1]
    cases["randint-gen-1000"] = lambda T: T.randint(3, 10, (1000,), generator=_gen(T, 99))
    for dt in ("int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"):
        cases[f"random_-{dt}-16"] = lambda T, dt=dt: (
            _seeded(T, 4),
            T.empty(16, dtype=getattr(T, dt)).random_(),
        )[1]
    cases["random_-float16-16"] = lambda T: (_seeded(T, 4), T.empty(16, dtype=T.float16).random_())[
        1
    ]
    cases["random_-bfloat16-16"] = lambda T: (
        _seeded(T, 4),
        T.empty(16, dtype=T.bfloat16).random_(),
    )[1]
    cases["random_-full-int64"] = lambda T: (
        _seeded(T, 4),
        T.empty(17, dtype=T.int64).random_(-(2**63), None),
    )[1]
    cases["random_-to-int64"] = lambda T: (_seeded(T, 4), T.empty(17, dtype=T.int64).random_(7))[1]
    # randperm: small n, the default generator and a Generator object.
    for n in (1, 3, 15, 16, 17, 1000, BIG):
        cases[f"randperm-{n}"] = lambda T, n=n: (_seeded(T), T.randperm(n))[1]
    cases["randperm-gen-50-int32"] = lambda T: T.randperm(50, generator=_gen(T, 5), dtype=T.int32)
    cases["randperm-float32-20"] = lambda T: (_seeded(T), T.randperm(20, dtype=T.float32))[1]
    # bernoulli, exponential.
    for dt in ("float32", "float64", "float16", "bfloat16", "int64", "bool"):
        cases[f"bernoulli_-p-{dt}-1000"] = lambda T, dt=dt: (
            _seeded(T),
            T.empty(1000, dtype=getattr(T, dt)).bernoulli_(0.3),
        )[1]
    cases["bernoulli_-p-big"] = lambda T: (_seeded(T), T.empty(BIG).bernoulli_(0.7))[1]
    cases["bernoulli-tensor-f32"] = lambda T: (
        _seeded(T),
        T.bernoulli(T.arange(1000, dtype=T.float32) / 999),
    )[1]
    cases["bernoulli-tensor-f64"] = lambda T: (
        _seeded(T),
        T.bernoulli(T.arange(1000, dtype=T.float64) / 999),
    )[1]
    cases["bernoulli_-tensor-p"] = lambda T: (
        _seeded(T),
        T.empty(5, 17).bernoulli_(T.arange(17, dtype=T.float32) / 16),
    )[1]
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for n in (3, 1000):
            cases[f"exponential_-{dt}-{n}"] = lambda T, dt=dt, n=n: (
                _seeded(T, 6),
                T.empty(n, dtype=getattr(T, dt)).exponential_(2.5),
            )[1]
    # Built on them.
    cases["dropout-1000"] = lambda T: (
        _seeded(T),
        T.nn.functional.dropout(T.ones(1000), 0.25),
    )[1]
    for dt in ("float16", "bfloat16", "float64"):
        cases[f"dropout-{dt}-300"] = lambda T, dt=dt: (
            _seeded(T, 3),
            T.nn.functional.dropout(T.ones(300, dtype=getattr(T, dt)), 0.4),
        )[1]
    cases["dropout-transposed"] = lambda T: (
        _seeded(T, 4),
        T.nn.functional.dropout(T.arange(210, dtype=T.float32).reshape(30, 7).t(), 0.3),
    )[1]
    cases["kaiming_uniform-64x33"] = lambda T: (
        _seeded(T),
        T.nn.init.kaiming_uniform_(T.empty(64, 33)),
    )[1]
    cases["xavier_normal-7x5"] = lambda T: (_seeded(T), T.nn.init.xavier_normal_(T.empty(7, 5)))[1]
    cases["linear-init"] = lambda T: (
        _seeded(T),
        T.cat([p.detach().reshape(-1) for p in T.nn.Linear(20, 30).parameters()]),
    )[1]
    cases["random-sampler-100"] = lambda T: (
        _seeded(T),
        list(T.utils.data.RandomSampler(range(100))),
    )[1]
    cases["random-sampler-replacement"] = lambda T: (
        _seeded(T),
        list(T.utils.data.RandomSampler(range(10), replacement=True, num_samples=25)),
    )[1]
    cases["dataloader-shuffle"] = lambda T: (
        _seeded(T),
        [
            int(i)
            for b in T.utils.data.DataLoader(list(range(30)), batch_size=4, shuffle=True)
            for i in b
        ],
    )[1]
    # multinomial.
    cases["multinomial-repl-1d"] = lambda T: (
        _seeded(T),
        T.multinomial(T.tensor([0.1, 0.2, 0.3, 0.4]), 20, replacement=True),
    )[1]
    cases["multinomial-repl-2d"] = lambda T: (
        _seeded(T),
        T.multinomial(T.tensor([[1.0, 0, 3, 1], [0, 0, 0, 2.0], [5, 1, 1, 1]]), 9, True),
    )[1]
    cases["multinomial-norepl-1d"] = lambda T: (
        _seeded(T),
        T.multinomial(T.arange(1, 101, dtype=T.float32), 30),
    )[1]
    cases["multinomial-norepl-2d-f64"] = lambda T: (
        _seeded(T),
        T.multinomial(T.rand(4, 50, dtype=T.float64), 10),
    )[1]
    cases["multinomial-one"] = lambda T: (
        _seeded(T),
        T.multinomial(T.tensor([[0.5, 0.5, 2.0], [3.0, 0.0, 1.0]]), 1),
    )[1]
    cases["multinomial-method-gen"] = lambda T: T.tensor([1.0, 2, 3, 4, 5]).multinomial(
        12, True, generator=_gen(T, 8)
    )
    cases["multinomial-repl-1000"] = lambda T: (
        _seeded(T, 1),
        T.multinomial(T.rand(1000), 1000, replacement=True),
    )[1]
    return cases


CASES = _case_table()


def canonical_bytes(T, value):
    """The exact values as bytes: floats widened to float64, integers to int64 (exact)."""
    import numpy as np

    if isinstance(value, list):
        return np.asarray(value, dtype=np.int64).tobytes()
    if value.dtype.is_floating_point:
        arr = value.detach().to(T.float64).contiguous().numpy()
    else:
        arr = value.detach().to(T.int64).contiguous().numpy()
    return arr.tobytes()


def head(T, value, k=6):
    import numpy as np

    if isinstance(value, list):
        return value[:k]
    flat = np.frombuffer(
        canonical_bytes(T, value), dtype=np.float64 if value.dtype.is_floating_point else np.int64
    )
    return [float(v).hex() if value.dtype.is_floating_point else int(v) for v in flat[:k]]


def _state_after(T, seed, *draws):
    """Seeds, runs the draws, returns (state, what the next draws give)."""
    g = T.Generator().manual_seed(seed)
    for d in draws:
        d(T, g)
    state = g.get_state()
    after = T.cat(
        [
            T.randn(1, generator=g),
            T.randn(1, generator=g, dtype=T.float64),
            T.rand(5, generator=g).double(),
            T.randn(20, generator=g).double(),
        ]
    )
    return state, after


STATE_SCRIPTS = {
    "seeded": lambda T: _state_after(T, 0),
    "seeded-big": lambda T: _state_after(T, 2**40 + 17),
    "float-cache": lambda T: _state_after(T, 1, lambda T, g: T.randn(1, generator=g)),
    "double-cache": lambda T: _state_after(
        T, 2, lambda T, g: T.randn(3, generator=g, dtype=T.float64)
    ),
    "both-caches": lambda T: _state_after(
        T,
        3,
        lambda T, g: T.randn(1, generator=g, dtype=T.float64),
        lambda T, g: T.randn(1, generator=g),
    ),
    "mid-stream": lambda T: _state_after(
        T, 4, lambda T, g: T.rand(700, generator=g), lambda T, g: T.randint(0, 9, (3,), generator=g)
    ),
}
