"""Datasets, samplers, loaders, iterators and the bundled digits dataset.

Two faces over one :class:`Dataset`: PyTorch's ``torch.utils.data`` (``DataLoader``,
samplers, ``default_collate``, ``random_split``, worker processes) and Chainer's
(``SerialIterator``, ``concat_examples``, ``TupleDataset``). Shuffling draws from
portagrad's default generator unless told otherwise, so ``pg.manual_seed(n)`` makes
batches repeat.

Examples
--------
>>> import portagrad as pg
>>> train, test = pg.data.load_digits()
>>> it = pg.data.SerialIterator(train, batch_size=32, seed=0)
>>> x, t = pg.data.concat_examples(next(it))
>>> x.shape, t.shape
((32, 64), (32,))
>>> loader = pg.data.DataLoader(train, batch_size=32, shuffle=True)
>>> x, t = next(iter(loader))
>>> x.shape, t.shape
((32, 64), (32,))
"""

from ._collate import default_collate as default_collate
from ._collate import default_convert as default_convert
from ._dataset import Dataset as Dataset
from ._dataset import SubDataset as SubDataset
from ._dataset import TransformDataset as TransformDataset
from ._dataset import TupleDataset as TupleDataset
from ._dataset import concat_examples as concat_examples
from ._dataset import split_dataset as split_dataset
from ._dataset import split_dataset_random as split_dataset_random
from ._datasets import DatasetNotFoundError as DatasetNotFoundError
from ._datasets import default_data_dir as default_data_dir
from ._datasets import load_digits as load_digits
from ._datasets import load_fashion_mnist as load_fashion_mnist
from ._datasets import load_mnist as load_mnist
from ._datasets import read_idx as read_idx
from ._iterators import PrefetchIterator as PrefetchIterator
from ._iterators import SerialIterator as SerialIterator
from ._loader import DataLoader as DataLoader
from ._loader import DataLoaderError as DataLoaderError
from ._sampler import BatchSampler as BatchSampler
from ._sampler import DistributedSampler as DistributedSampler
from ._sampler import RandomSampler as RandomSampler
from ._sampler import Sampler as Sampler
from ._sampler import SequentialSampler as SequentialSampler
from ._sampler import SubsetRandomSampler as SubsetRandomSampler
from ._sampler import WeightedRandomSampler as WeightedRandomSampler
from ._torch_datasets import ChainDataset as ChainDataset
from ._torch_datasets import ConcatDataset as ConcatDataset
from ._torch_datasets import IterableDataset as IterableDataset
from ._torch_datasets import StackDataset as StackDataset
from ._torch_datasets import Subset as Subset
from ._torch_datasets import TensorDataset as TensorDataset
from ._torch_datasets import random_split as random_split
from ._worker import WorkerInfo as WorkerInfo
from ._worker import get_worker_info as get_worker_info
