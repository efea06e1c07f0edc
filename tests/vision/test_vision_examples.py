"""Shortened runs of the vision examples: the losses fall and the metrics rise."""

import importlib.util
import pathlib

import numpy as np
import pytest

pytest.importorskip("matplotlib")

_EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, _EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_detection_example_learns(tmp_path):
    ex = _load("vision_detection_shapes")
    r = ex.train(iterations=40, batch_size=16, n_val=40, log_every=0, out=str(tmp_path))
    loss = np.sum(r["history"], axis=1)
    assert loss[-8:].mean() < 0.7 * loss[:8].mean()
    untrained = ex.evaluate(ex.build_model(3), ex.SyntheticShapesDataset(40, seed=1000))
    assert r["map"] > untrained["map"] + 0.02
    assert (tmp_path / "detections.png").stat().st_size > 0
    assert isinstance(r["drawn"], int) and r["drawn"] >= 0  # main() says when it is 0


@pytest.mark.slow
def test_segmentation_example_learns(tmp_path):
    ex = _load("vision_segmentation_shapes")
    r = ex.train(iterations=40, batch_size=4, width=8, n_val=20, log_every=0,
                 out=str(tmp_path))
    h = np.asarray(r["history"])
    assert h[-8:].mean() < 0.9 * h[:8].mean()
    import portagrad as pg

    pg.random.seed(0)
    untrained = ex.evaluate(ex.SegNetBasic(4, width=8),
                            ex.SyntheticShapesDataset(20, task="semantic", seed=1000))
    assert r["miou"] > untrained["miou"] + 0.03
    assert r["pixel_accuracy"] > untrained["pixel_accuracy"] + 0.1
    assert (tmp_path / "segmentation.png").stat().st_size > 0


def test_astronaut_demo_draws_predictions(tmp_path):
    pytest.importorskip("skimage")
    import portagrad as pg

    shapes = _load("vision_detection_shapes")
    pg.random.seed(0)
    model = shapes.build_model(3)
    ckpt = tmp_path / "model.safetensors"
    pg.io.save(ckpt, model)
    demo = _load("vision_demo_astronaut")
    path = demo.main(["--checkpoint", str(ckpt), "--score-thresh", "0.0", "--max-boxes", "5",
                      "--out", str(tmp_path / "demo")])
    from portagrad.vision.utils import read_image

    img = read_image(path, alpha="ignore")  # Matplotlib writes RGBA
    assert img.shape[0] == 3 and img.shape[2] > img.shape[1]  # two panels side by side


@pytest.mark.slow
def test_instance_segmentation_example_learns(tmp_path):
    ex = _load("vision_instance_segmentation_shapes")
    r = ex.train(iterations=60, batch_size=2, width=16, n_val=4, log_every=0,
                 out=str(tmp_path))
    loss = np.array([h["loss"] for h in r["history"]])
    mask = np.array([h["loss/mask_head"] for h in r["history"]])
    assert loss[-10:].mean() < 0.6 * loss[:10].mean()
    assert mask[-10:].mean() < 0.9 * mask[:10].mean()
    assert {"map", "box_map", "n_predicted", "cpu_seconds"} <= set(r)
    assert (tmp_path / "model.safetensors").stat().st_size > 0
