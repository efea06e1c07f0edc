"""The evaluator extensions report what the metrics compute, inside a Trainer too."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.data import SerialIterator
from portagrad.vision import evaluations as E
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.extensions import (
    DetectionCOCOEvaluator,
    DetectionVOCEvaluator,
    SemanticSegmentationEvaluator,
)


class _NoisyDetector:
    """Predicts each image's true boxes, jittered, plus one false alarm."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.calls = 0

    def predict(self, imgs):
        self.calls += 1
        rng = np.random.default_rng(self.calls)
        bboxes, labels, scores = [], [], []
        for img in imgs:
            i = next(k for k in range(len(self.dataset))
                     if np.array_equal(self.dataset[k][0], img))
            _, bbox, label = self.dataset[i]
            bboxes.append(np.concatenate([bbox + rng.normal(0, 1, bbox.shape),
                                          [[0.0, 0.0, 5.0, 5.0]]]).astype(np.float32))
            labels.append(np.concatenate([label, [0]]).astype(np.int32))
            scores.append(rng.uniform(size=len(label) + 1).astype(np.float32))
        return bboxes, labels, scores


def test_detection_evaluators_report_the_metrics():
    data = SyntheticShapesDataset(6, size=32, object_size=(8, 14), seed=2)
    det = _NoisyDetector(data)
    ev = DetectionVOCEvaluator(SerialIterator(data, 4, repeat=False, shuffle=False), det,
                               label_names=data.label_names, batch_size=2)
    obs = {}
    with pg.training.report_scope(obs):
        result = ev()
    det.calls = 0
    preds = det.predict([data[i][0] for i in range(2)])
    preds2 = det.predict([data[i][0] for i in range(2, 4)])
    preds3 = det.predict([data[i][0] for i in range(4, 6)])
    pb, pl, ps = (a + b + c for a, b, c in zip(preds, preds2, preds3))
    ref = E.eval_detection_voc(pb, pl, ps, [data[i][1] for i in range(6)],
                               [data[i][2] for i in range(6)])
    assert obs["validation/main/map"] == pytest.approx(ref["map"])
    assert result["main/ap/rectangle"] == pytest.approx(ref["ap"][0], nan_ok=True)
    det.calls = 0
    coco = DetectionCOCOEvaluator(SerialIterator(data, 4, repeat=False, shuffle=False), det,
                                  batch_size=2)()
    ref = E.eval_detection_coco(pb, pl, ps, [data[i][1] for i in range(6)],
                                [data[i][2] for i in range(6)])
    key = "map/iou=0.50:0.95/area=all/max_dets=100"
    assert coco["main/" + key] == pytest.approx(ref[key])
    with pytest.raises(ValueError, match="repeat=False"):
        DetectionVOCEvaluator(SerialIterator(data, 2), det)()


class _Segmenter:
    def predict(self, imgs):
        return [(img[0] > 128).astype(np.int32) for img in imgs]


def test_semantic_segmentation_evaluator_inside_a_trainer(tmp_path):
    data = SyntheticShapesDataset(5, size=16, object_size=(4, 8), task="semantic")
    seg = _Segmenter()
    truth = [data[i][1] for i in range(5)]
    ref = E.eval_semantic_segmentation(seg.predict([data[i][0] for i in range(5)]), truth,
                                       n_class=4)

    class _Nothing(pg.nn.Module):
        def __init__(self):
            self.w = pg.nn.Parameter(np.zeros(1, np.float32))

        def forward(self, *arrays):
            return pg.ops.sum(self.w * self.w)

    model = _Nothing()
    updater = pg.training.StandardUpdater(SerialIterator([(np.zeros(1),)] * 4, 2, seed=0),
                                          pg.optim.SGD(model, lr=0.1))
    trainer = pg.training.Trainer(updater, (2, "epoch"), out=str(tmp_path))
    trainer.extend(SemanticSegmentationEvaluator(
        SerialIterator(data, 2, repeat=False, shuffle=False), seg,
        label_names=data.semantic_label_names))
    trainer.extend(pg.training.extensions.LogReport())
    trainer.run()
    log = trainer.get_extension("LogReport").log[-1]
    assert log["validation/main/miou"] == pytest.approx(ref["miou"])
    assert log["validation/main/pixel_accuracy"] == pytest.approx(ref["pixel_accuracy"])
