"""Datasets, iterators and the bundled digits dataset.

Examples
--------
>>> import portagrad as pg
>>> train, test = pg.data.load_digits()
>>> it = pg.data.SerialIterator(train, batch_size=32, seed=0)
>>> x, t = pg.data.concat_examples(next(it))
>>> x.shape, t.shape
((32, 64), (32,))
"""

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
