"""DataLoader (torch.utils.data.dataloader): batches from a dataset, optionally pinned.

Differences from torch, by design: ``num_workers > 0`` loads with threads, not processes
(Note [DataLoader threads] in _prefetch.py), and with ``pin_memory=True`` the next batches
are fetched and pinned by a background thread even when ``num_workers=0``.

Workers follow torch's semantics where threads allow it: ``get_worker_info()`` gives each
worker its ``WorkerInfo`` (``None`` in the main thread); with an ``IterableDataset`` each
worker iterates the dataset on its own (so, unless ``__iter__`` shards with
``get_worker_info()``, every sample comes ``num_workers`` times) and batches come
round-robin over the workers; ``timeout`` bounds the wait for each batch. What differs:
the workers share the dataset object (``WorkerInfo.dataset`` is the loader's dataset, not a
copy, so state changed in one worker is seen by all), the worker's RNG is not re-seeded
with ``WorkerInfo.seed``, an exception raised in a worker is re-raised as is (torch wraps it
as "Caught ... in DataLoader worker process N"), and with unequal IterableDataset workers
the order is the strict round-robin (torch's depends on timing).
"""

import warnings

from cudalite.utils.data._prefetch import IterablePrefetcher, Prefetcher
from cudalite.utils.data._utils.collate import default_collate, default_convert
from cudalite.utils.data._utils.pin_memory import pin_memory as _pin_memory
from cudalite.utils.data._utils.worker import WorkerInfo, _set_worker_info
from cudalite.utils.data.dataset import IterableDataset
from cudalite.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


class DataLoader:
    r"""Data loader: combines a dataset and a sampler, and provides an iterable over the
    given dataset.

    Args:
        dataset (Dataset): dataset from which to load the data.
        batch_size (int, optional): how many samples per batch to load (default: ``1``).
        shuffle (bool, optional): set to ``True`` to have the data reshuffled at every
            epoch (default: ``False``); the order follows ``cudalite.manual_seed``.
        sampler (Sampler or Iterable, optional): defines the strategy to draw samples from
            the dataset. If specified, :attr:`shuffle` must not be specified.
        batch_sampler (Sampler or Iterable, optional): like :attr:`sampler`, but returns a
            batch of indices at a time. Mutually exclusive with :attr:`batch_size`,
            :attr:`shuffle`, :attr:`sampler`, and :attr:`drop_last`.
        num_workers (int, optional): how many loader threads to use (default: ``0``,
            loading in the main thread).
        collate_fn (Callable, optional): merges a list of samples to form a mini-batch.
        pin_memory (bool, optional): if ``True``, the data loader copies tensors into
            page-locked memory before returning them, on a background thread that prepares
            the next batch while the current one is used.
        drop_last (bool, optional): set to ``True`` to drop the last incomplete batch, if
            the dataset size is not divisible by the batch size (default: ``False``).
        prefetch_factor (int, optional): batches loaded in advance by each worker.
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set "
                "prefetch_factor to None."
            )
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive "
                    "with batch_size, shuffle, sampler, and "
                    "drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching "
                "and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        return _DataLoaderIter(self)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _Source:
    """Where a loader iterator's batches come from. Kept apart from the iterator: the loader
    threads hold this, not the iterator, so dropping the iterator stops them."""

    def __init__(self, loader, iterate=True):
        self.dataset = loader.dataset
        self.iterable = loader._iterable
        self.auto_collation = loader._auto_collation
        self.batch_size = loader.batch_size
        self.drop_last = loader.drop_last
        self.collate_fn = loader.collate_fn
        # Drawn here, in the caller's thread (see sampler.py).
        self.index_iter = iter(loader._index_sampler)
        # With workers, each worker iterates the dataset itself (IterablePrefetcher).
        self.dataset_iter = iter(self.dataset) if self.iterable and iterate else None

    def take(self):
        """The next batch's indices (map-style) or samples (iterable); StopIteration at the
        end. Runs in order."""
        if not self.iterable:
            return next(self.index_iter)
        return self.samples(self.dataset_iter)

    def samples(self, dataset_iter):
        """The samples of the next batch from an iterator over an IterableDataset."""
        if not self.auto_collation:
            return [next(dataset_iter)]
        batch = []
        for _ in range(self.batch_size):
            try:
                batch.append(next(dataset_iter))
            except StopIteration:
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return batch

    def fetch(self, task):
        if self.iterable:
            return self.collate_fn(task if self.auto_collation else task[0])
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(task) if getitems else [self.dataset[i] for i in task]
            return self.collate_fn(data)
        return self.collate_fn(self.dataset[task])


def _pinned_fetch(source):
    def fetch(task):
        return _pin_memory(source.fetch(task))

    return fetch


def _worker_init(device, init_fn, info=None):
    def init(worker_id):
        if info is not None:
            _set_worker_info(info(worker_id))
        if device >= 0:
            import cudalite

            cudalite.cuda.set_device(device)
        if init_fn is not None:
            init_fn(worker_id)

    return init


class _DataLoaderIter:
    def __init__(self, loader):
        import cudalite

        workers = loader.num_workers
        # torch draws the workers' base seed from the loader's generator for every iterator
        # (with or without workers), before the sampler draws anything.
        base_seed = (
            cudalite.empty((), dtype=cudalite.int64).random_(generator=loader.generator).item()
        )
        if workers == 0 and loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._loader = loader
        self._source = source = _Source(loader, iterate=workers == 0)
        if loader.pin_memory and not cudalite.cuda.is_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        pin = loader.pin_memory and cudalite.cuda.is_available()
        self._prefetcher = None
        if not pin and workers == 0:
            return
        fetch = _pinned_fetch(source) if pin else source.fetch
        info = None
        if workers > 0:

            def info(worker_id):
                return WorkerInfo(
                    id=worker_id,
                    num_workers=workers,
                    seed=base_seed + worker_id,
                    dataset=loader.dataset,
                )

        init = _worker_init(
            cudalite.cuda.current_device() if pin else -1, loader.worker_init_fn, info
        )
        if source.iterable and workers > 0:
            self._prefetcher = IterablePrefetcher(
                lambda worker_id: iter(source.dataset),
                lambda it: fetch(source.samples(it)),
                threads=workers,
                depth=max(1, loader.prefetch_factor or 0),
                init=init,
                timeout=loader.timeout,
            )
            return
        self._prefetcher = Prefetcher(
            source.take,
            fetch,
            threads=max(1, workers),
            depth=max(2, (loader.prefetch_factor or 0) * workers),
            init=init,
            timeout=loader.timeout if workers > 0 else 0,
        )

    def __iter__(self):
        return self

    def __next__(self):
        if self._prefetcher is not None:
            return self._prefetcher.next()
        return self._source.fetch(self._source.take())

    def __len__(self):
        return len(self._loader)

    def __del__(self):
        if getattr(self, "_prefetcher", None) is not None:
            self._prefetcher.close()


__all__ = ["DataLoader"]
