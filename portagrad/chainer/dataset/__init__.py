"""Chainer's ``chainer.dataset``: converters, the dataset folder and cache, the iterator
base and ``DatasetMixin``.

Examples
--------
>>> import numpy as np
>>> from portagrad.chainer import dataset
>>> x, t = dataset.concat_examples([(np.zeros(3), 0), (np.ones(3), 1)], device=-1)
>>> x.shape, t.tolist()
((2, 3), [0, 1])
"""

from . import tabular as tabular
from .convert import ConcatWithAsyncTransfer as ConcatWithAsyncTransfer
from .convert import Converter as Converter
from .convert import concat_examples as concat_examples
from .convert import converter as converter
from .convert import to_device as to_device
from .dataset_mixin import DatasetMixin as DatasetMixin
from .download import DatasetNotFoundError as DatasetNotFoundError
from .download import cache_or_load_file as cache_or_load_file
from .download import cached_download as cached_download
from .download import get_dataset_directory as get_dataset_directory
from .download import get_dataset_root as get_dataset_root
from .download import set_dataset_root as set_dataset_root
from .iterator import Iterator as Iterator
from .tabular import TabularDataset as TabularDataset

__all__ = ["ConcatWithAsyncTransfer", "Converter", "concat_examples", "converter",
           "to_device", "DatasetMixin", "DatasetNotFoundError", "cache_or_load_file",
           "cached_download", "get_dataset_directory", "get_dataset_root",
           "set_dataset_root", "Iterator", "TabularDataset", "tabular"]
