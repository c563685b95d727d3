"""Background threads that prepare a DataLoader's next batches while the current one is used.

Note [DataLoader threads]
With ``pin_memory=True`` (and a GPU) a loader thread fetches, collates and pins the next
batches while the training loop works on the current one, so in

    for x in loader:
        x = x.to(cuda, non_blocking=True)

the copy is asynchronous and loading, pinning, copying and compute all overlap. With
``num_workers=N`` there are N such threads (torch uses processes; cudalite's ops release the
GIL in their C++ core, and threads share the pinned allocator). Batch order is the sampler's
order whatever the thread timing, and indices are drawn in the order batches are yielded.
"""

import threading


class Prefetcher:
    """Runs ``fetch(take())`` ahead of the consumer on ``threads`` threads, in order.

    ``take`` runs under a lock, in sequence (it draws the next indices, or raises
    StopIteration at the end); ``fetch`` runs concurrently. At most ``depth`` results wait
    for the consumer. Exceptions are re-raised by :meth:`next` in sequence.
    """

    def __init__(self, take, fetch, threads=1, depth=2, init=None):
        self._take = take
        self._fetch = fetch
        self._init = init
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
        with self._cond:
            while self._next_yield not in self._results:
                if self._end is not None and self._next_yield >= self._end:
                    raise StopIteration
                self._cond.wait()
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
