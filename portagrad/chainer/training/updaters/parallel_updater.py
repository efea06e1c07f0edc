"""Chainer's ``ParallelUpdater`` (data parallelism over the devices of one host) and
``MultiprocessParallelUpdater`` (which needs NCCL and GPUs)."""

from __future__ import annotations

import copy
from typing import Any

from ...._errors import PortagradValueError
from ...config import force_backprop_mode
from ...dataset.convert import call_converter, concat_examples
from ...device import DeviceUnavailableError, get_device
from .standard_updater import StandardUpdater

__all__ = ["ParallelUpdater", "MultiprocessParallelUpdater"]


class ParallelUpdater(StandardUpdater):
    """Split each batch over copies of the model on several devices, sum their
    gradients into the main model, update it, and copy its parameters back.

    Parameters
    ----------
    iterator, optimizer, converter, loss_func, loss_scale, auto_new_epoch
        As for :class:`StandardUpdater`.
    models
        ``{name: model}`` already placed; else made from ``devices``.
    devices
        ``{name: device}``, with a ``'main'`` entry (the optimizer's target goes there,
        copies of it to the others). On a CPU-only host every entry may be ``-1`` or
        ``'@numpy'`` (or another Array API namespace): the split, the summed
        gradients and the update are the same as on GPUs.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import iterators, links as L, optimizers, training
    >>> data = [(np.ones(3, np.float32), np.int32(1)) for _ in range(8)]
    >>> model = L.Classifier(L.Linear(3, 2))
    >>> up = training.updaters.ParallelUpdater(
    ...     iterators.SerialIterator(data, 4), optimizers.SGD().setup(model),
    ...     devices={"main": -1, "second": -1})
    >>> up.update(); up.iteration
    1
    """

    def __init__(self, iterator: Any, optimizer: Any, converter: Any = concat_examples,
                 models: dict[str, Any] | None = None,
                 devices: dict[str, Any] | None = None, loss_func: Any = None,
                 loss_scale: float | None = None, auto_new_epoch: bool = True) -> None:
        super().__init__(iterator=iterator, optimizer=optimizer, converter=converter,
                         loss_func=loss_func, loss_scale=loss_scale,
                         auto_new_epoch=auto_new_epoch)
        if models is None:
            if devices is None:
                raise PortagradValueError("ParallelUpdater(models, devices): either "
                                          "models or devices must be given")
            if "main" not in devices:
                raise KeyError("ParallelUpdater(devices): 'devices' must contain a "
                               "'main' key")
            devices = {k: get_device(v) for k, v in devices.items()}
            models = {"main": optimizer.target}
            for name in devices:
                if name == "main":
                    continue
                model = copy.deepcopy(optimizer.target)
                model.to_device(devices[name])
                models[name] = model
            optimizer.target.to_device(devices["main"])
        elif devices is None:
            raise PortagradValueError("ParallelUpdater(devices): give the device of "
                                      "each model too")
        else:
            devices = {k: get_device(v) for k, v in devices.items()}
        self._devices = devices
        self._models = models

    def connect_trainer(self, trainer: Any) -> None:
        main = self.get_optimizer("main").target
        for name, model in self._models.items():
            if model is not main:
                trainer.reporter.add_observer(name, model)

    def update_core(self) -> None:
        optimizer = self.get_optimizer("main")
        main = optimizer.target
        others = {k: m for k, m in self._models.items() if m is not main}
        iterator = self.get_iterator("main")
        batch = iterator.next()
        n = len(self._models)
        in_arrays = {key: call_converter(self.converter, batch[i::n], self._devices[key])
                     for i, key in enumerate(self._models)}
        for model in self._models.values():
            model.cleargrads()
        losses = []
        for key, model in self._models.items():
            args = in_arrays[key]
            loss_func = self.loss_func or model
            with force_backprop_mode():
                if isinstance(args, tuple):
                    loss = loss_func(*args)
                elif isinstance(args, dict):
                    loss = loss_func(**args)
                else:
                    loss = loss_func(args)
            losses.append(loss)
        for model in self._models.values():
            model.cleargrads()
        for loss in losses:
            if self.loss_scale is None:
                loss.backward()
            else:
                loss.backward(loss_scale=self.loss_scale)
        for model in others.values():
            main.addgrads(model)
        optimizer.update()
        for model in others.values():
            model.copyparams(main)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)


class MultiprocessParallelUpdater(StandardUpdater):
    """Chainer's NCCL multi-process updater: needs CuPy and NCCL, which this host does
    not have; it raises :class:`~portagrad.chainer.device.DeviceUnavailableError` with
    the alternatives.

    Parameters
    ----------
    iterators, optimizer, converter, devices, auto_new_epoch
        As in Chainer.

    Examples
    --------
    >>> from portagrad.chainer.training.updaters import MultiprocessParallelUpdater
    >>> MultiprocessParallelUpdater([], None)
    Traceback (most recent call last):
    ...
    portagrad.chainer.device.DeviceUnavailableError: ...
    """

    def __init__(self, iterators: Any, optimizer: Any, converter: Any = concat_examples,
                 devices: Any = None, auto_new_epoch: bool = True) -> None:
        raise DeviceUnavailableError(
            "MultiprocessParallelUpdater: needs CuPy GPUs and NCCL (Chainer's "
            "requirement), which are not available; use ParallelUpdater for several "
            "devices of one process, or portagrad.chainermn under mpiexec for several "
            "processes")

    @staticmethod
    def available() -> bool:
        """False: no NCCL here."""
        return False
