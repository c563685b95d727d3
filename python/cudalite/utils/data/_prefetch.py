"""Background threads that prepare a DataLoader's next batches while the current one is used.

Note [DataLoader threads]
With ``pin_memory=True`` (and a GPU) a loader thread fetches, collates and pins the next
batches while the training loop works on the current one, so in

    for x in loader:
        x = x.to(cuda, non_blocking=True)

the copy is asynchronous and loading, pinning, copying and compute all overlap. With
``num_workers=N`` there are N such threads (torch uses processes; cudalite's large ops,
copies and pinning run without the GIL, and threads share the pinned allocator). Batch
order is the sampler's order whatever the thread timing, and indices are drawn in the
order batches are yielded.
"""

import collections
import threading
import time


def _wait(cond, timeout, deadline):
    """``cond.wait()``, raising torch's error once ``deadline`` (when ``timeout``) passes."""
    if not timeout:
        cond.wait()
        return
    left = deadline - time.monotonic()
    if left <= 0 or not cond.wait(left) and deadline - time.monotonic() <= 0:
        raise RuntimeError(f"DataLoader timed out after {timeout} seconds")


class Prefetcher:
    """Runs ``fetch(take())`` ahead of the consumer on ``threads`` threads, in order.

    ``take`` runs under a lock, in sequence (it draws the next indices, or raises
    StopIteration at the end); ``fetch`` runs concurrently. At most ``depth`` results wait
    for the consumer. Exceptions are re-raised by :meth:`next` in sequence.
    """

    def __init__(self, take, fetch, threads=1, depth=2, init=None, timeout=0):
        self._take = take
        self._fetch = fetch
        self._init = init
        self._timeout = timeout
        self._depth = max(1, depth)
        self._cond = threading.Condition()
        self._results = {}
        self._next_take = 0
        self._next_yield = 0
        self._end = None  # sequence number at which the source ran out
        self._stop = False
        self._threads = [
            threading.Thread(target=self._work, args=(i,), daemon=True, name="cudalite_data")
            for i in range(max(1, threads))
        ]
        for t in self._threads:
            t.start()

    def _work(self, worker_id):
        if self._init is not None:
            self._init(worker_id)
        while True:
            with self._cond:
                while (
                    not self._stop
                    and self._end is None
                    and self._next_take - self._next_yield >= self._depth
                ):
                    self._cond.wait()
                if self._stop or self._end is not None:
                    return
                seq = self._next_take
                try:
                    task = self._take()
                except StopIteration:
                    self._end = seq
                    self._cond.notify_all()
                    return
                except BaseException as e:  # the source failed: report it, then stop
                    self._results[seq] = (False, e)
                    self._next_take += 1
                    self._end = seq + 1
                    self._cond.notify_all()
                    return
                self._next_take += 1
            try:
                result = (True, self._fetch(task))
            except BaseException as e:
                result = (False, e)
            with self._cond:
                self._results[seq] = result
                self._cond.notify_all()

    def next(self):
        deadline = time.monotonic() + self._timeout if self._timeout else None
        with self._cond:
            while self._next_yield not in self._results:
                if self._end is not None and self._next_yield >= self._end:
                    raise StopIteration
                _wait(self._cond, self._timeout, deadline)
            ok, value = self._results.pop(self._next_yield)
            self._next_yield += 1
            self._cond.notify_all()
        if not ok:
            raise value
        return value

    def close(self):
        """Stops the threads after the batch each is working on."""
        with self._cond:
            self._stop = True
            self._results.clear()
            self._cond.notify_all()


class IterablePrefetcher:
    """The workers of a DataLoader over an IterableDataset: as torch's worker processes each
    iterate their own copy of the dataset, each thread here calls ``make_iter(worker_id)``
    (after ``init``) and turns what it yields into batches with ``next_batch(it)`` (which
    raises StopIteration at the end). Batches are returned round-robin over the workers
    that still have data, as torch does (in order with equal lengths), and at most
    ``depth`` of each worker's batches wait for the consumer."""

    def __init__(self, make_iter, next_batch, threads, depth=2, init=None, timeout=0):
        self._cond = threading.Condition()
        self._queues = [collections.deque() for _ in range(threads)]
        self._active = list(range(threads))
        self._turn = 0
        self._depth = max(1, depth)
        self._timeout = timeout
        self._stop = False
        self._threads = [
            threading.Thread(
                target=self._work,
                args=(i, make_iter, next_batch, init),
                daemon=True,
                name="cudalite_data",
            )
            for i in range(threads)
        ]
        for t in self._threads:
            t.start()

    def _work(self, worker_id, make_iter, next_batch, init):
        q = self._queues[worker_id]
        try:
            if init is not None:
                init(worker_id)
            it = make_iter(worker_id)
            while True:
                with self._cond:
                    while not self._stop and len(q) >= self._depth:
                        self._cond.wait()
                    if self._stop:
                        return
                try:
                    item = (True, next_batch(it))
                except StopIteration:
                    item = None
                except BaseException as e:
                    item = (False, e)
                with self._cond:
                    q.append(item)
                    self._cond.notify_all()
                if item is None:
                    return
        except BaseException as e:  # init or iter() failed
            with self._cond:
                q.append((False, e))
                q.append(None)
                self._cond.notify_all()

    def next(self):
        deadline = time.monotonic() + self._timeout if self._timeout else None
        with self._cond:
            while True:
                if not self._active:
                    raise StopIteration
                self._turn %= len(self._active)
                q = self._queues[self._active[self._turn]]
                if not q:
                    _wait(self._cond, self._timeout, deadline)
                    continue
                item = q.popleft()
                self._cond.notify_all()
                if item is None:  # this worker is done
                    del self._active[self._turn]
                    continue
                self._turn += 1
                break
        ok, value = item
        if not ok:
            raise value
        return value

    def close(self):
        with self._cond:
            self._stop = True
            for q in self._queues:
                q.clear()
            self._cond.notify_all()
