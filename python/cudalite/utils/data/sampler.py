"""Samplers (torch.utils.data.sampler): the order in which a DataLoader visits indices.

``iter()`` of RandomSampler and BatchSampler draws the permutation at once, in the thread
that asks for the iterator, so a DataLoader whose batches are fetched by a background
thread still consumes random numbers at a fixed point of the main thread's sequence
(``cudalite.manual_seed`` keeps whole programs reproducible).
"""


class Sampler:
    r"""Base class for samplers: ``__iter__`` yields dataset indices (or lists of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    r"""Samples elements sequentially, always in the same order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    r"""Samples elements randomly, without replacement (or with, when ``replacement``)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        """Indices drawn as torch draws them: without a generator, a fresh CPU generator
        seeded from the default one; with replacement, batches of 32 randint draws."""
        import cudalite

        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(cudalite.empty((), dtype=cudalite.int64).random_().item())
            generator = cudalite.Generator().manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from cudalite.randint(
                    high=n, size=(32,), dtype=cudalite.int64, generator=generator
                ).tolist()
            yield from cudalite.randint(
                high=n, size=(self.num_samples % 32,), dtype=cudalite.int64, generator=generator
            ).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from cudalite.randperm(n, generator=generator).tolist()
            yield from cudalite.randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    r"""Wraps another sampler to yield a mini-batch of indices.

    Args:
        sampler (Sampler or Iterable): base sampler.
        batch_size (int): size of mini-batch.
        drop_last (bool): if ``True``, the sampler will drop the last batch if its size
            would be less than ``batch_size``.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        return self._batches(iter(self.sampler))

    def _batches(self, indices):
        batch = []
        for idx in indices:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler"]
