"""Store ChainerCV 0.13.1's Faster R-CNN (VGG-16) and Mask R-CNN (FPN, ResNet-50) results on
the inputs of tests/vision/_two_stage_cases.py.

Runs in the venv described in scripts/make_chainercv_fixtures.py, with OpenCV added
(``cv/bin/pip install opencv-python-headless``: ChainerCV then resizes as OpenCV does,
like portagrad.vision.transforms.resize)::

    cv/bin/python scripts/make_chainercv_model_fixtures_two_stage.py

Every parameter is set from ``param_array(npz_name, shape)``, so the tests rebuild the same
weights and write them in ChainerCV's npz layout; only the names, shapes and ChainerCV's
outputs are stored, in tests/vision/fixtures/chainercv_0.13.1_two_stage.npz.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent / "tests" / "vision"
sys.path.insert(0, str(HERE))

import _two_stage_cases as cases  # noqa: E402


def npz_layout(link) -> dict[str, tuple[int, ...]]:
    from chainer.serializers import DictionarySerializer

    s = DictionarySerializer()
    s.save(link)
    return {k: np.asarray(v).shape for k, v in s.target.items()}


def set_params(link) -> None:
    import chainer.links as L

    for name, p in link.namedparams():
        p.array[...] = cases.param_array(name[1:], p.shape)
    for path, sub in link.namedlinks():
        if isinstance(sub, L.BatchNormalization):
            for leaf in ("avg_mean", "avg_var"):
                arr = getattr(sub, leaf)
                arr[...] = cases.param_array(f"{path[1:]}/{leaf}", arr.shape)


def store_layout(stored: dict, prefix: str, link) -> None:
    layout = npz_layout(link)
    names = sorted(layout)
    stored[f"{prefix}|names"] = np.array(names)
    stored[f"{prefix}|shapes"] = np.array(
        [",".join(str(d) for d in layout[n]) for n in names])


def vgg_case(stored: dict) -> None:
    import chainer
    import chainer.links as L
    from chainer import reporter as reporter_module
    from chainercv.links import FasterRCNNVGG16
    from chainercv.links.model.faster_rcnn import FasterRCNNTrainChain

    H = cases.VGG_HIDDEN
    model = FasterRCNNVGG16(n_fg_class=cases.N_FG_CLASS, min_size=cases.VGG_MIN_SIZE,
                            max_size=cases.VGG_MAX_SIZE,
                            anchor_scales=list(cases.VGG_ANCHOR_SCALES),
                            proposal_creator_params=cases.VGG_PROPOSALS)
    model.extractor(np.zeros((1, 3, 32, 32), np.float32))  # the lazy convolutions
    store_layout(stored, "vgg16_full", model)
    head = model.head
    n_class = cases.N_FG_CLASS + 1
    for name in ("fc6", "fc7", "cls_loc", "score"):
        delattr(head, name)
    with head.init_scope():
        head.fc6 = L.Linear(512 * 7 * 7, H)
        head.fc7 = L.Linear(H, H)
        head.cls_loc = L.Linear(H, n_class * 4)
        head.score = L.Linear(H, n_class)
    set_params(model)
    store_layout(stored, "vgg16", model)
    imgs = cases.images(cases.VGG_IMAGE_SIZES)
    x = model.prepare(imgs[0])[None]
    scale = x.shape[3] / imgs[0].shape[2]
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        h = model.extractor(x)
        rpn_locs, rpn_scores, rois, roi_indices, anchor = model.rpn(h, x.shape[2:], [scale])
        roi_cls_locs, roi_scores = model.head(h, rois, roi_indices)
    for k, v in (("rpn_locs", rpn_locs.array), ("rpn_scores", rpn_scores.array),
                 ("rois", rois), ("roi_cls_locs", roi_cls_locs.array),
                 ("roi_scores", roi_scores.array), ("anchor", anchor)):
        stored[f"vgg16|{k}"] = np.asarray(v)
    model.score_thresh = cases.VGG_SCORE_THRESH
    bboxes, labels, scores = model.predict(imgs)
    for i in range(len(imgs)):
        stored[f"vgg16|predict_bbox_{i}"] = bboxes[i]
        stored[f"vgg16|predict_label_{i}"] = labels[i]
        stored[f"vgg16|predict_score_{i}"] = scores[i]
    # one training step's losses and gradients, numpy.random seeded for the samplers
    gt_bboxes, gt_labels, _ = cases.annotations([x.shape[2:], (1, 1)])
    np.random.seed(0)
    chain = FasterRCNNTrainChain(model)
    observation = {}
    reporter = reporter_module.Reporter()
    reporter.add_observer("main", chain)
    with reporter.scope(observation):
        loss = chain(x, gt_bboxes[0][None], gt_labels[0][None], np.array([scale]))
    chain.cleargrads()
    loss.backward()
    for k in ("rpn_loc_loss", "rpn_cls_loss", "roi_loc_loss", "roi_cls_loss", "loss"):
        stored[f"vgg16|train_{k}"] = np.asarray(float(observation[f"main/{k}"].array))
    stored["vgg16|grad_rpn_loc_W"] = model.rpn.loc.W.grad
    stored["vgg16|grad_head_score_W"] = model.head.score.W.grad
    stored["vgg16|grad_conv5_3_b"] = model.extractor.conv5_3.conv.b.grad


def fpn_case(stored: dict) -> None:
    import chainer
    from chainercv.links import MaskRCNNFPNResNet50
    from chainercv.links.model.fpn import (
        bbox_head_loss_post,
        bbox_head_loss_pre,
        mask_head_loss_post,
        mask_head_loss_pre,
        rpn_loss,
    )

    model = MaskRCNNFPNResNet50(
        n_fg_class=cases.N_FG_CLASS, min_size=cases.FPN_MIN_SIZE,
        max_size=cases.FPN_MAX_SIZE,
        return_values=["rois", "bboxes", "labels", "scores", "masks"])
    for k, v in cases.FPN_NMS_LIMITS.items():
        setattr(model.rpn, k, v)
    imgs = cases.images(cases.FPN_IMAGE_SIZES)
    x, scales = model.prepare([img.copy() for img in imgs])
    sizes = [tuple(int(v * s) for v in img.shape[1:]) for img, s in zip(imgs, scales)]
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        hs = model.extractor(x)  # creates the lazy parameters
        model.rpn(hs)
        dummy = [np.array([[0, 0, 16, 16]], np.float32)] + [
            np.zeros((0, 4), np.float32)] * (len(hs) - 1)
        dummy_i = [np.array([0], np.int32)] + [np.zeros((0,), np.int32)] * (len(hs) - 1)
        model.bbox_head(hs, dummy, dummy_i)
        model.mask_head(hs, dummy, dummy_i)
    set_params(model)
    store_layout(stored, "fpn50", model)
    stored["fpn50|scales"] = np.asarray(scales)
    stored["fpn50|x"] = x
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        hs, rpn_rois, rpn_roi_indices = model(x)
        rpn_locs, rpn_confs = model.rpn(hs)
        rois, roi_indices = model.bbox_head.distribute(rpn_rois, rpn_roi_indices)
        head_locs, head_confs = model.bbox_head(hs, rois, roi_indices)
    for level, (loc, conf) in enumerate(zip(rpn_locs, rpn_confs)):
        stored[f"fpn50|rpn_locs_{level}"] = loc.array
        stored[f"fpn50|rpn_confs_{level}"] = conf.array
    stored["fpn50|rpn_rois"] = rpn_rois
    stored["fpn50|rpn_roi_indices"] = rpn_roi_indices
    stored["fpn50|head_locs"] = head_locs.array
    stored["fpn50|head_confs"] = head_confs.array
    model.score_thresh = cases.FPN_SCORE_THRESH
    out = model.predict(imgs)
    for i in range(len(imgs)):
        for key, values in zip(("rois", "bbox", "label", "score", "mask"), out):
            stored[f"fpn50|predict_{key}_{i}"] = values[i]
    # the training losses of ChainerCV's FPN example, numpy.random seeded for the samplers
    np.random.seed(0)
    bboxes, labels, masks = cases.annotations(sizes)
    with chainer.using_config("train", False):
        hs = model.extractor(x)
    rpn_locs, rpn_confs = model.rpn(hs)
    anchors = model.rpn.anchors(h.shape[2:] for h in hs)
    rpn_loc_loss, rpn_conf_loss = rpn_loss(rpn_locs, rpn_confs, anchors, sizes, bboxes)
    rois, roi_indices = model.rpn.decode(rpn_locs, rpn_confs, anchors, x.shape)
    rois = np.vstack([rois] + bboxes)
    roi_indices = np.hstack([roi_indices] + [np.array((i,) * len(b), np.int32)
                                             for i, b in enumerate(bboxes)])
    rois, roi_indices = model.bbox_head.distribute(rois, roi_indices)
    rois, roi_indices, gt_locs, gt_labels = bbox_head_loss_pre(
        rois, roi_indices, model.bbox_head.std, bboxes, labels)
    head_locs, head_confs = model.bbox_head(hs, rois, roi_indices)
    head_loc_loss, head_conf_loss = bbox_head_loss_post(
        head_locs, head_confs, roi_indices, gt_locs, gt_labels, len(imgs))
    pad = []
    for m in masks:
        p = np.zeros((len(m),) + x.shape[2:], bool)
        p[:, :m.shape[1], :m.shape[2]] = m
        pad.append(p)
    mask_rois, mask_roi_indices, gt_segms, gt_mask_labels = mask_head_loss_pre(
        rois, roi_indices, pad, bboxes, gt_labels, model.mask_head.segm_size)
    segms = model.mask_head(hs, mask_rois, mask_roi_indices)
    mask_loss = mask_head_loss_post(segms, mask_roi_indices, gt_segms, gt_mask_labels,
                                    len(imgs))
    for k, v in (("rpn_loc_loss", rpn_loc_loss), ("rpn_conf_loss", rpn_conf_loss),
                 ("head_loc_loss", head_loc_loss), ("head_conf_loss", head_conf_loss),
                 ("mask_loss", mask_loss)):
        stored[f"fpn50|train_{k}"] = np.asarray(float(v.array))
    stored["fpn50|train_gt_labels"] = np.hstack(gt_labels)
    stored["fpn50|train_gt_locs"] = np.vstack(gt_locs)
    stored["fpn50|train_rois"] = np.vstack(rois)
    stored["fpn50|train_gt_segms"] = np.vstack(gt_segms)
    stored["fpn50|train_gt_mask_labels"] = np.hstack(gt_mask_labels)


def layouts(stored: dict) -> None:
    from chainercv.links import FasterRCNNFPNResNet101, MaskRCNNFPNResNet101

    for prefix, cls in (("fpn101_faster", FasterRCNNFPNResNet101),
                        ("fpn101_mask", MaskRCNNFPNResNet101)):
        import chainer

        model = cls(n_fg_class=cases.N_FG_CLASS, min_size=64, max_size=64)
        x, _ = model.prepare([np.zeros((3, 64, 64), np.float32)])
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            hs = model.extractor(x)
            model.rpn(hs)
            dummy = [np.array([[0, 0, 16, 16]], np.float32)] + [
                np.zeros((0, 4), np.float32)] * (len(hs) - 1)
            dummy_i = [np.array([0], np.int32)] + [np.zeros((0,), np.int32)] * (len(hs) - 1)
            model.bbox_head(hs, dummy, dummy_i)
            if hasattr(model, "mask_head"):
                model.mask_head(hs, dummy, dummy_i)
        store_layout(stored, prefix, model)


def main() -> None:
    import chainercv

    assert chainercv.__version__ == "0.13.1", chainercv.__version__
    if not hasattr(np, "bool"):
        np.bool = np.bool_
    # ChainerCV's FPN losses stack generators, which NumPy >= 1.24 refuses
    def listing(f):
        return lambda tup, *args, **kwargs: f(list(tup), *args, **kwargs)

    np.hstack, np.vstack = listing(np.hstack), listing(np.vstack)
    stored: dict[str, np.ndarray] = {}
    import time

    for step in (vgg_case, fpn_case, layouts):
        t = time.time()
        step(stored)
        print(f"{step.__name__}: {time.time() - t:.1f} s", flush=True)
    out = HERE / "fixtures" / cases.FIXTURE
    np.savez_compressed(out, **stored)
    print(f"wrote {len(stored)} arrays to {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
