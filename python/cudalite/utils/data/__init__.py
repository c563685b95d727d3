"""cudalite.utils.data: datasets, samplers and the DataLoader (torch.utils.data)."""

from cudalite.utils.data import _utils
from cudalite.utils.data._utils.collate import default_collate, default_convert
from cudalite.utils.data._utils.worker import get_worker_info
from cudalite.utils.data.dataloader import DataLoader
from cudalite.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from cudalite.utils.data.distributed import DistributedSampler
from cudalite.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "TensorDataset",
    "_utils",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
