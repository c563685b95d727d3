"""Worker information (torch.utils.data._utils.worker): ``get_worker_info()``.

cudalite's DataLoader workers are threads (Note [DataLoader threads] in ../_prefetch.py), so
the information is kept per thread: ``get_worker_info()`` returns ``None`` in the main
thread (and in the pinning thread of a loader without workers), and a :class:`WorkerInfo`
in a worker thread, from the moment ``worker_init_fn`` runs.
"""

import threading

_local = threading.local()


class WorkerInfo:
    r"""``id``, ``num_workers``, ``seed`` and ``dataset`` of a DataLoader worker; read-only
    once built, as in torch."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    r"""The :class:`WorkerInfo` of the DataLoader worker calling it, or ``None`` outside of
    workers.

    In a worker it has :attr:`id` (the worker id, ``0 .. num_workers - 1``),
    :attr:`num_workers`, :attr:`seed` (the loader's base seed, drawn from the main thread's
    RNG or the loader's ``generator`` for every iterator, plus the worker id) and
    :attr:`dataset`. Use it in an :class:`~cudalite.utils.data.IterableDataset`'s
    ``__iter__`` (or in ``worker_init_fn``) to give each worker its own part of the data.
    Unlike torch, :attr:`dataset` is the loader's dataset itself (threads share it, torch's
    worker processes have copies), and the worker's RNG is not re-seeded with :attr:`seed`.
    """
    return getattr(_local, "info", None)


def _set_worker_info(info):
    _local.info = info


__all__ = ["WorkerInfo", "get_worker_info"]
