"""cudalite.utils.data: Dataset, TensorDataset, samplers, collation and the DataLoader
(expected values are what torch.utils.data gives for the same calls)."""

import collections
import threading
import warnings

import numpy as np
import pytest

import cudalite
from cudalite.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    default_convert,
)
from cudalite.utils.data._prefetch import Prefetcher

HAS_CUDA = cudalite.cuda.is_available()


def as_list(t):
    return t.tolist()


# ---- datasets ----


def test_tensor_dataset():
    x = cudalite.arange(10)
    y = cudalite.arange(10) * 2
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    a, b = ds[3]
    assert a.item() == 3 and b.item() == 6
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(cudalite.zeros(3), cudalite.zeros(4))


def test_subset_and_concat():
    ds = TensorDataset(cudalite.arange(10))
    sub = Subset(ds, [1, 3, 5])
    assert len(sub) == 3 and sub[1][0].item() == 3
    cat = ConcatDataset([sub, ds])
    assert len(cat) == 13 and cat[3][0].item() == 0 and cat[-1][0].item() == 9
    assert len(sub + ds) == 13


def test_dataset_base_needs_getitem():
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_module_paths_like_torch():
    assert cudalite.utils.data.DataLoader is DataLoader
    from cudalite.utils.data._utils.pin_memory import pin_memory

    assert callable(pin_memory)


# ---- collation ----


def test_collate_numbers_and_strings():
    t = default_collate([True, False])
    assert t.dtype == cudalite.bool and t.tolist() == [True, False]
    t = default_collate([1.5, 2])
    assert t.dtype == cudalite.float64 and t.tolist() == [1.5, 2.0]
    t = default_collate([1, 2])
    assert t.dtype == cudalite.int64 and t.tolist() == [1, 2]
    assert default_collate(["a", "b"]) == ["a", "b"]


def test_collate_tuples_become_lists():
    out = default_collate([(1, 2.0), (3, 4.0)])
    assert isinstance(out, list) and len(out) == 2
    assert out[0].tolist() == [1, 3] and out[1].dtype == cudalite.float64


def test_collate_tensors_stack():
    out = default_collate([cudalite.ones(2), cudalite.zeros(2)])
    assert out.shape == (2, 2) and out.tolist() == [[1.0, 1.0], [0.0, 0.0]]


def test_collate_dicts_and_nested_lists():
    out = default_collate(
        [{"a": cudalite.ones(2), "b": [1, 2]}, {"a": cudalite.zeros(2), "b": [3, 4]}]
    )
    assert set(out) == {"a", "b"}
    assert out["a"].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert [t.tolist() for t in out["b"]] == [[1, 3], [2, 4]]


def test_collate_namedtuple():
    Point = collections.namedtuple("Point", ["x", "y"])
    out = default_collate([Point(1, 2), Point(3, 4)])
    assert isinstance(out, Point) and out.x.tolist() == [1, 3]


def test_collate_numpy():
    out = default_collate([np.float32(1), np.float32(2)])
    assert out.dtype == cudalite.float32
    out = default_collate([np.array([1, 2], dtype=np.int16)] * 2)
    assert out.dtype == cudalite.int16 and out.shape == (2, 2)
    assert default_convert(np.array([0, 1])).tolist() == [0, 1]
    assert default_convert(0) == 0


def test_collate_errors():
    with pytest.raises(
        TypeError,
        match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
        "lists; found <class 'object'>",
    ):
        default_collate([object()])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])


# ---- samplers ----


def test_batch_sampler():
    bs = BatchSampler(SequentialSampler(range(10)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(bs) == 4
    bs = BatchSampler(SequentialSampler(range(10)), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(bs) == 3
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 1, 1)


def test_random_sampler_is_a_permutation_following_the_seed():
    cudalite.manual_seed(0)
    a = list(RandomSampler(range(50)))
    cudalite.manual_seed(0)
    b = list(RandomSampler(range(50)))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))
    assert len(list(RandomSampler(range(5), num_samples=12))) == 12
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(5), num_samples=0)


# ---- the loader ----


def test_batches_and_len():
    dl = DataLoader(TensorDataset(cudalite.arange(10)), batch_size=3)
    batches = list(dl)
    assert len(dl) == 4 and len(batches) == 4
    assert [b[0].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


def test_drop_last():
    dl = DataLoader(TensorDataset(cudalite.arange(10)), batch_size=3, drop_last=True)
    assert len(dl) == 3 and [b[0].tolist() for b in dl][-1] == [6, 7, 8]


def test_shuffle_visits_everything_and_reshuffles():
    dl = DataLoader(TensorDataset(cudalite.arange(20)), batch_size=4, shuffle=True)
    cudalite.manual_seed(1)
    first = [v for b in dl for v in b[0].tolist()]
    second = [v for b in dl for v in b[0].tolist()]
    assert sorted(first) == list(range(20)) == sorted(second)
    assert first != second
    cudalite.manual_seed(1)
    assert [v for b in dl for v in b[0].tolist()] == first


def test_seed_loop_pattern_on_cpu():
    # for i, x in enumerate(train_loader): x = x.to(device)
    device = cudalite.device("cpu")
    train_loader = DataLoader(cudalite.randn(10, 3), batch_size=4)
    shapes = []
    for _, x in enumerate(train_loader):
        x = x.to(device)
        shapes.append(tuple(x.shape))
    assert shapes == [(4, 3), (4, 3), (2, 3)]


def test_batch_size_none_converts_samples():
    out = list(DataLoader(list(range(3)), batch_size=None))
    assert out == [0, 1, 2]


def test_dict_samples():
    class Dicts(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"x": cudalite.full((2,), float(i)), "label": i}

    (batch,) = list(DataLoader(Dicts(), batch_size=4))
    assert batch["label"].tolist() == [0, 1, 2, 3]
    assert batch["x"].shape == (4, 2)


def test_iterable_dataset():
    class Count(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    dl = DataLoader(Count(), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(dl) == 3
    dl = DataLoader(Count(), batch_size=3, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]] and len(dl) == 2
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Count(), shuffle=True)


def test_argument_errors_like_torch():
    ds = TensorDataset(cudalite.arange(4))
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=BatchSampler(range(4), 2, False), batch_size=2)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching"):
        DataLoader(ds, batch_size=None, drop_last=True)


def test_worker_threads_keep_order():
    class Slow(Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            return cudalite.tensor([i])

    dl = DataLoader(Slow(), batch_size=3, num_workers=4)
    assert [v for b in dl for v in b[:, 0].tolist()] == list(range(40))
    assert len(dl) == 14


def test_worker_init_fn_runs_per_worker():
    ids = []
    lock = threading.Lock()

    def init(worker_id):
        with lock:
            ids.append(worker_id)

    dl = DataLoader(
        TensorDataset(cudalite.arange(8)), batch_size=2, num_workers=3, worker_init_fn=init
    )
    assert len(list(dl)) == 4
    assert sorted(ids) == [0, 1, 2]


def test_worker_exception_surfaces_in_order():
    class Bad(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 3:
                raise KeyError("sample 3")
            return i

    it = iter(DataLoader(Bad(), batch_size=1, num_workers=2))
    assert next(it).tolist() == [0]
    assert next(it).tolist() == [1]
    assert next(it).tolist() == [2]
    with pytest.raises(KeyError, match="sample 3"):
        next(it)
    assert next(it).tolist() == [4]


@pytest.mark.skipif(HAS_CUDA, reason="checks the behaviour without a GPU")
def test_pin_memory_without_accelerator_warns_and_loads_unpinned():
    dl = DataLoader(TensorDataset(cudalite.arange(4)), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator"):
        batches = list(dl)
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3]]
    assert not batches[0][0].is_pinned()


# ---- the prefetching threads ----


def test_prefetcher_runs_ahead_in_order():
    items = iter(range(10))
    fetched = []

    def fetch(i):
        fetched.append(i)
        return i * i

    p = Prefetcher(lambda: next(items), fetch, threads=3, depth=4)
    assert [p.next() for _ in range(10)] == [i * i for i in range(10)]
    with pytest.raises(StopIteration):
        p.next()
    assert sorted(fetched) == list(range(10))


def test_prefetcher_is_bounded_and_closes():
    started = []
    release = threading.Event()
    counter = iter(range(1000))

    def fetch(i):
        started.append(i)
        release.wait(5)
        return i

    p = Prefetcher(lambda: next(counter), fetch, threads=2, depth=2)
    # Two results may be outstanding; nothing beyond that is fetched.
    for _ in range(50):
        if len(started) == 2:
            break
        threading.Event().wait(0.01)
    assert len(started) == 2
    release.set()
    assert p.next() == 0
    p.close()
    assert len(started) <= 6


def test_abandoned_iterator_stops_its_threads():
    dl = DataLoader(TensorDataset(cudalite.arange(100)), batch_size=1, num_workers=2)
    before = threading.active_count()
    it = iter(dl)
    next(it)
    del it
    for _ in range(100):
        if threading.active_count() <= before:
            break
        threading.Event().wait(0.01)
    assert threading.active_count() <= before


# ---- pinned batches on a GPU ----


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU visible")
def test_pin_memory_loader_overlaps_and_copies_correctly():
    n = 64
    ds = TensorDataset(cudalite.arange(n * 1000, dtype=cudalite.float32).reshape(n, 1000))
    dl = DataLoader(ds, batch_size=8, pin_memory=True)
    cuda0 = cudalite.device("cuda:0")
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in dl:
            (x_cpu,) = x
            assert x_cpu.is_pinned()
            g = x_cpu.to(cuda0, non_blocking=True)
            total += g.sum().item()
    assert total == float(sum(range(n * 1000)))
