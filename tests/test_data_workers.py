"""cudalite.utils.data workers (threads here, processes in torch): get_worker_info,
IterableDataset with workers, timeout; and random_split. Expected values are torch's."""

import time
import warnings

import pytest

import cudalite
from cudalite.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    get_worker_info,
    random_split,
)
from cudalite.utils.data._utils.worker import WorkerInfo


class Range(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class Sharded(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(10))
        return iter(range(info.id, 10, info.num_workers))


def batches(loader):
    return [b.tolist() if isinstance(b, cudalite.Tensor) else b for b in loader]


def test_get_worker_info_in_main_thread_is_none():
    assert get_worker_info() is None
    # the pinning thread of a loader without workers is not a worker either
    seen = []

    class D(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            seen.append(get_worker_info())
            return i

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert batches(DataLoader(D(), batch_size=2, pin_memory=True)) == [[0, 1]]
    assert seen == [None, None]


def test_worker_info_in_workers():
    infos = []

    def init(worker_id):
        info = get_worker_info()
        infos.append((worker_id, info.id, info.num_workers, info.dataset, info.seed))

    ds = Range(4)
    g = cudalite.Generator()
    g.manual_seed(3)
    loader = DataLoader(ds, batch_size=2, num_workers=2, worker_init_fn=init, generator=g)
    assert batches(loader) == [[0, 1], [0, 1], [2, 3], [2, 3]]
    infos.sort(key=lambda i: i[0])
    assert [i[:4] for i in infos] == [(0, 0, 2, ds), (1, 1, 2, ds)]
    assert infos[1][4] == infos[0][4] + 1 and isinstance(infos[0][4], int)

    class Map(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return -1 if info is None else info.num_workers

    assert batches(DataLoader(Map(), batch_size=2, num_workers=2)) == [[2, 2], [2, 2]]
    assert batches(DataLoader(Map(), batch_size=2)) == [[-1, -1], [-1, -1]]


def test_worker_info_is_read_only():
    info = WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    assert repr(info) == "WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)"
    with pytest.raises(RuntimeError) as e:
        info.id = 3
    assert str(e.value) == "Cannot assign attributes to WorkerInfo objects"


def test_iterable_dataset_is_iterated_by_every_worker():
    assert batches(DataLoader(Range(5), batch_size=2, num_workers=2)) == [
        [0, 1], [0, 1], [2, 3], [2, 3], [4], [4]
    ]  # fmt: skip
    assert batches(DataLoader(Range(5), batch_size=2, num_workers=2, drop_last=True)) == [
        [0, 1], [0, 1], [2, 3], [2, 3]
    ]  # fmt: skip
    assert batches(DataLoader(Range(3), batch_size=None, num_workers=3)) == [
        0, 0, 0, 1, 1, 1, 2, 2, 2
    ]  # fmt: skip


def test_iterable_dataset_sharded_with_worker_info():
    assert batches(DataLoader(Sharded(), batch_size=2, num_workers=2)) == [
        [0, 2], [1, 3], [4, 6], [5, 7], [8], [9]
    ]  # fmt: skip
    assert batches(DataLoader(Sharded(), batch_size=2, num_workers=3)) == [
        [0, 3], [1, 4], [2, 5], [6, 9], [7], [8]
    ]  # fmt: skip
    assert batches(DataLoader(Sharded(), batch_size=4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_iterable_workers_of_unequal_length():
    class Uneven(IterableDataset):
        def __iter__(self):
            return iter(range(5 if get_worker_info().id == 0 else 1))

    loader = DataLoader(Uneven(), batch_size=1, num_workers=2, prefetch_factor=1)
    assert batches(loader) == [[0], [0], [1], [2], [3], [4]]


def test_iterable_worker_error_is_raised():
    class Bad(IterableDataset):
        def __iter__(self):
            yield 1
            raise ValueError("boom")

    it = iter(DataLoader(Bad(), num_workers=1))
    assert next(it).tolist() == [1]
    with pytest.raises(ValueError, match="boom"):
        next(it)


def test_timeout():
    class Slow(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(1.0)
            return i

    with pytest.raises(RuntimeError) as e:
        list(DataLoader(Slow(), num_workers=1, timeout=0.3))
    assert str(e.value) == "DataLoader timed out after 0.3 seconds"

    class SlowIt(IterableDataset):
        def __iter__(self):
            time.sleep(1.0)
            yield 1

    with pytest.raises(RuntimeError) as e:
        list(DataLoader(SlowIt(), num_workers=1, timeout=0.3))
    assert str(e.value) == "DataLoader timed out after 0.3 seconds"
    assert batches(DataLoader(Range(2), num_workers=1, timeout=5)) == [[0], [1]]
    with pytest.raises(ValueError) as e:
        DataLoader(Range(2), timeout=-1)
    assert str(e.value) == "timeout option should be non-negative"
    loader = DataLoader(Range(2), timeout=1)  # torch: only checked when iterating
    with pytest.raises(AssertionError) as e:
        iter(loader)
    assert str(e.value) == "_SingleProcessDataLoaderIter requires timeout == 0"


def test_random_split_lengths():
    ds = TensorDataset(cudalite.arange(5))
    a, b = random_split(ds, [3, 2])
    assert isinstance(a, Subset) and (len(a), len(b)) == (3, 2)
    assert sorted(a.indices + b.indices) == [0, 1, 2, 3, 4]
    assert [len(s) for s in random_split(ds, [0.5, 0.5])] == [3, 2]
    assert [len(s) for s in random_split(ds, [0.3, 0.3, 0.4])] == [2, 1, 2]
    with pytest.warns(UserWarning) as w:
        assert [len(s) for s in random_split(ds, [0.0, 1.0])] == [0, 5]
    assert [str(x.message) for x in w] == [
        "Length of split at index 0 is 0. This might result in an empty dataset."
    ]
    with pytest.raises(ValueError) as e:
        random_split(ds, [1.2, -0.2])
    assert str(e.value) == "Fraction at index 0 is not between 0 and 1"
    with pytest.raises(ValueError) as e:
        random_split(ds, [3, 3])
    assert str(e.value) == "Sum of input lengths does not equal the length of the input dataset!"


def test_random_split_generator():
    ds = TensorDataset(cudalite.arange(10))
    g = cudalite.Generator()
    g.manual_seed(0)
    first = [s.indices for s in random_split(ds, [0.5, 0.5], generator=g)]
    g.manual_seed(0)
    assert [s.indices for s in random_split(ds, [5, 5], generator=g)] == first
    g.manual_seed(0)
    assert sum(first, []) == cudalite.randperm(10, generator=g).tolist()
    cudalite.manual_seed(1)
    default = [s.indices for s in random_split(ds, [5, 5])]
    cudalite.manual_seed(1)
    assert sum(default, []) == cudalite.randperm(10).tolist()
