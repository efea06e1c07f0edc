"""Local-folder datasets on generated layouts, and the synthetic shapes dataset."""

import json

import numpy as np
import pytest
from PIL import Image

from portagrad.data import DatasetNotFoundError
from portagrad.vision import datasets as D
from portagrad.vision.utils import (
    assert_is_bbox_dataset,
    assert_is_instance_segmentation_dataset,
    assert_is_label_dataset,
    assert_is_semantic_segmentation_dataset,
    mask_to_bbox,
    write_image,
)


def _jpg(path, h=20, w=30, seed=0):
    img = np.random.default_rng(seed).integers(0, 256, (h, w, 3)).astype(np.uint8)
    Image.fromarray(img).save(path, quality=95)


def _voc(tmp_path):
    root = tmp_path / "VOC2012"
    for d in ("Annotations", "ImageSets/Main", "ImageSets/Segmentation", "JPEGImages",
              "SegmentationClass", "SegmentationObject"):
        (root / d).mkdir(parents=True)
    objects = [("dog", (3, 4, 10, 12), 0), ("person", (1, 1, 20, 30), 1), ("car", (5, 6, 7, 8), 0)]
    xml = "<annotation>" + "".join(
        f"<object><name>{n}</name><difficult>{d}</difficult><bndbox><xmin>{b[0]}</xmin>"
        f"<ymin>{b[1]}</ymin><xmax>{b[2]}</xmax><ymax>{b[3]}</ymax></bndbox></object>"
        for n, b, d in objects) + "</annotation>"
    (root / "Annotations" / "a.xml").write_text(xml)
    (root / "ImageSets/Main/train.txt").write_text("a\n")
    (root / "ImageSets/Segmentation/val.txt").write_text("a\n")
    _jpg(root / "JPEGImages" / "a.jpg")
    cls = np.zeros((20, 30), np.uint8)
    cls[2:6, 3:9] = 12  # dog
    cls[10:15, 10:20] = 15  # person
    cls[0, :] = 255
    inst = np.zeros((20, 30), np.uint8)
    inst[2:6, 3:9] = 1
    inst[10:15, 10:20] = 2
    inst[0, :] = 255
    Image.fromarray(cls).convert("P").save(root / "SegmentationClass" / "a.png")
    Image.fromarray(inst).convert("P").save(root / "SegmentationObject" / "a.png")
    return root


def test_voc_bbox_dataset(tmp_path):
    root = _voc(tmp_path)
    ds = D.VOCBboxDataset(root, split="train")
    img, bbox, label = ds[0]
    assert len(ds) == 1 and img.shape == (3, 20, 30) and img.dtype == np.float32
    # 1-based (xmin, ymin, xmax, ymax) -> 0-based (ymin, xmin, ymax, xmax).
    np.testing.assert_array_equal(bbox, [[3, 2, 11, 9], [5, 4, 7, 6]])
    assert [D.voc_bbox_label_names[k] for k in label] == ["dog", "car"]
    img, bbox, label, difficult = D.VOCBboxDataset(root, use_difficult=True,
                                                   return_difficult=True)[0]
    assert label.tolist() == [11, 14, 6] and difficult.tolist() == [False, True, False]
    assert_is_bbox_dataset(ds, len(D.voc_bbox_label_names))


def test_voc_segmentation_datasets(tmp_path):
    root = _voc(tmp_path)
    img, label = D.VOCSemanticSegmentationDataset(root, split="val")[0]
    assert label.dtype == np.int32 and label[0, 0] == -1 and label[3, 4] == 12
    assert set(np.unique(label).tolist()) == {-1, 0, 12, 15}
    img, mask, label = D.VOCInstanceSegmentationDataset(root, split="val")[0]
    assert mask.shape == (2, 20, 30) and label.tolist() == [11, 14]
    np.testing.assert_array_equal(mask_to_bbox(mask), [[2, 3, 6, 9], [10, 10, 15, 20]])
    assert_is_semantic_segmentation_dataset(D.VOCSemanticSegmentationDataset(root, split="val"),
                                            len(D.voc_semantic_segmentation_label_names))
    assert_is_instance_segmentation_dataset(D.VOCInstanceSegmentationDataset(root, split="val"),
                                            len(D.voc_bbox_label_names))


def test_missing_voc_says_where_files_go(tmp_path):
    with pytest.raises(DatasetNotFoundError, match=r"(?s)never downloads.*Annotations"):
        D.VOCBboxDataset(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="split"):
        D.VOCBboxDataset(tmp_path, split="training")


def test_coco_bbox_dataset(tmp_path):
    (tmp_path / "annotations").mkdir()
    (tmp_path / "val2017").mkdir()
    for name in ("x.png", "y.png"):
        write_image(np.zeros((3, 10, 12)), tmp_path / "val2017" / name)
    ann = {"images": [{"id": 7, "file_name": "y.png"}, {"id": 3, "file_name": "x.png"}],
           "categories": [{"id": 18, "name": "dog"}, {"id": 1, "name": "person"}],
           "annotations": [
               {"id": 1, "image_id": 3, "category_id": 18, "bbox": [1, 2, 3, 4], "area": 9.0,
                "iscrowd": 0},
               {"id": 2, "image_id": 3, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 20.0,
                "iscrowd": 1},
               {"id": 3, "image_id": 7, "category_id": 1, "bbox": [2, 2, 2, 2], "area": 4.0,
                "iscrowd": 0}]}
    (tmp_path / "annotations" / "instances_val2017.json").write_text(json.dumps(ann))
    ds = D.COCOBboxDataset(tmp_path, split="val")
    assert ds.label_names == ("person", "dog") and ds.category_ids == (1, 18)
    img, bbox, label = ds[0]  # image id 3 comes first
    assert img.shape == (3, 10, 12)
    np.testing.assert_array_equal(bbox, [[2, 1, 6, 4]])
    assert label.tolist() == [1]
    _, bbox, label, area, crowded = D.COCOBboxDataset(
        tmp_path, split="val", use_crowded=True, return_area=True, return_crowded=True)[0]
    assert label.tolist() == [1, 0] and area.tolist() == [9, 20]
    assert crowded.tolist() == [False, True]
    assert_is_bbox_dataset(ds, len(ds.label_names))
    with pytest.raises(DatasetNotFoundError, match="instances_train2017.json"):
        D.COCOBboxDataset(tmp_path, split="train")


def test_directory_parsing_label_dataset(tmp_path):
    for name, n in (("zebra", 2), ("ant", 1)):
        (tmp_path / name).mkdir()
        for k in range(n):
            write_image(np.full((3, 4, 5), 10 * k), tmp_path / name / f"{k}.png")
    (tmp_path / "ant" / "notes.txt").write_text("not an image")
    ds = D.DirectoryParsingLabelDataset(tmp_path)
    assert ds.label_names == ["ant", "zebra"] and len(ds) == 3
    assert [int(ds[i][1]) for i in range(3)] == [0, 1, 1]
    assert ds[2][0].shape == (3, 4, 5) and ds[2][0].max() == 10
    assert D.DirectoryParsingLabelDataset(tmp_path, color=False)[0][0].shape == (1, 4, 5)
    assert_is_label_dataset(ds, len(ds.label_names))
    assert_is_label_dataset(D.DirectoryParsingLabelDataset(tmp_path, color=False), 2, color=False)
    with pytest.raises(FileNotFoundError, match="found none"):
        (tmp_path / "empty").mkdir()
        D.DirectoryParsingLabelDataset(tmp_path / "empty")


def test_synthetic_shapes_annotations_are_exact():
    ds = D.SyntheticShapesDataset(30, size=48, n_objects=(1, 4), object_size=(6, 20),
                                  task="all", seed=1)
    counts = set()
    for i in range(len(ds)):
        img, bbox, label, mask, label_map = ds[i]
        assert img.shape == (3, 48, 48) and img.dtype == np.float32
        assert 0 <= img.min() and img.max() <= 255
        np.testing.assert_array_equal(bbox, mask_to_bbox(mask))
        assert mask.sum(axis=0).max() <= 1  # objects never overlap
        np.testing.assert_array_equal(label_map > 0, mask.any(axis=0))
        for m, k in zip(mask, label):
            assert (label_map[m] == k + 1).all()
            # The object's pixels have one colour, unlike the background around it.
            assert img[:, m].std(axis=1).max() < 20
        counts.add(len(label))
    assert counts <= {1, 2, 3, 4} and len(counts) > 1
    a, b = D.SyntheticShapesDataset(5, seed=3)[2], D.SyntheticShapesDataset(50, seed=3)[2]
    np.testing.assert_array_equal(a[0], b[0])
    img, label_map = D.SyntheticShapesDataset(2, task="semantic")[0]
    assert label_map.dtype == np.int32 and img.shape == (3, 64, 64)
    with pytest.raises(ValueError, match="task"):
        D.SyntheticShapesDataset(task="depth")
