"""The model of the npz compatibility tests, written once for Chainer and portagrad:
``build(chainer, L, F)`` with either library's modules."""

from __future__ import annotations


def build(chainer, L, F):
    class Block(chainer.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.conv = L.Convolution2D(3, 4, 3, pad=1)
                self.bn = L.BatchNormalization(4)

        def forward(self, x):
            return F.relu(self.bn(self.conv(x)))

    class Net(chainer.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.block = Block()
                self.heads = chainer.ChainList(L.Linear(None, 5), L.Linear(5, 2))
                self.emb = L.EmbedID(3, 2)

        def forward(self, x):
            h = F.max_pooling_2d(self.block(x), 2)
            h = F.tanh(self.heads[0](h))
            return self.heads[1](h) + F.sum(self.emb.W)

    return Net()
