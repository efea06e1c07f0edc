"""Chainer's datasets (``chainer.datasets``): the 31 of Chainer 7.8 whose data is local.

The getters (``get_mnist``...) read Chainer's dataset cache under
``CHAINER_DATASET_ROOT`` and never download; the pickle datasets are refused with the
reason (portagrad never unpickles).

Examples
--------
>>> import numpy as np
>>> from portagrad.chainer import datasets
>>> train, test = datasets.split_dataset(datasets.TupleDataset(np.arange(4), np.arange(4)), 3)
>>> len(train), test[0]
(3, (np.int64(3), np.int64(3)))
"""

from ._basic import ConcatenatedDataset as ConcatenatedDataset
from ._basic import DictDataset as DictDataset
from ._basic import SubDataset as SubDataset
from ._basic import TransformDataset as TransformDataset
from ._basic import TupleDataset as TupleDataset
from ._basic import get_cross_validation_datasets as get_cross_validation_datasets
from ._basic import (
    get_cross_validation_datasets_random as get_cross_validation_datasets_random,
)
from ._basic import split_dataset as split_dataset
from ._basic import split_dataset_n as split_dataset_n
from ._basic import split_dataset_n_random as split_dataset_n_random
from ._basic import split_dataset_random as split_dataset_random
from ._files import ImageDataset as ImageDataset
from ._files import LabeledImageDataset as LabeledImageDataset
from ._files import LabeledZippedImageDataset as LabeledZippedImageDataset
from ._files import MultiZippedImageDataset as MultiZippedImageDataset
from ._files import PickleDataset as PickleDataset
from ._files import PickleDatasetWriter as PickleDatasetWriter
from ._files import PickleRefusedError as PickleRefusedError
from ._files import TextDataset as TextDataset
from ._files import ZippedImageDataset as ZippedImageDataset
from ._files import open_pickle_dataset as open_pickle_dataset
from ._files import open_pickle_dataset_writer as open_pickle_dataset_writer
from ._loaders import get_cifar10 as get_cifar10
from ._loaders import get_cifar100 as get_cifar100
from ._loaders import get_fashion_mnist as get_fashion_mnist
from ._loaders import get_fashion_mnist_labels as get_fashion_mnist_labels
from ._loaders import get_kuzushiji_mnist as get_kuzushiji_mnist
from ._loaders import get_kuzushiji_mnist_labels as get_kuzushiji_mnist_labels
from ._loaders import get_mnist as get_mnist
from ._loaders import get_ptb_words as get_ptb_words
from ._loaders import get_ptb_words_vocabulary as get_ptb_words_vocabulary
from ._loaders import get_svhn as get_svhn

__all__ = ["ConcatenatedDataset", "DictDataset", "SubDataset", "TransformDataset",
           "TupleDataset", "get_cross_validation_datasets",
           "get_cross_validation_datasets_random", "split_dataset", "split_dataset_n",
           "split_dataset_n_random", "split_dataset_random", "ImageDataset",
           "LabeledImageDataset", "LabeledZippedImageDataset", "MultiZippedImageDataset",
           "PickleDataset", "PickleDatasetWriter", "TextDataset", "ZippedImageDataset",
           "open_pickle_dataset", "open_pickle_dataset_writer", "get_cifar10",
           "get_cifar100", "get_fashion_mnist", "get_fashion_mnist_labels",
           "get_kuzushiji_mnist", "get_kuzushiji_mnist_labels", "get_mnist",
           "get_ptb_words", "get_ptb_words_vocabulary", "get_svhn", "PickleRefusedError"]
