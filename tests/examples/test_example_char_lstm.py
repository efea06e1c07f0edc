"""The character-level LSTM example, shortened: perplexity falls; checkpoint and sampling."""

import numpy as np

import portagrad as pg


def test_char_lstm_learns(load_example, backend, tmp_path):
    ex = load_example("char_lstm")
    strict = backend[0] == "array_api_strict"
    r = ex.train(steps=12 if strict else 60, batch_size=16, bptt=16, embed=16, hidden=32,
                 lr=1e-2, max_chars=12000, backend_name=backend[0], device=backend[1],
                 log_every=0, out=str(tmp_path))
    # Untrained, the perplexity is about the vocabulary's size (~70 characters).
    assert r["initial_perplexity"] > 0.6 * len(r["vocab"])
    # Measured: 0.46 (12 updates) and 0.33 (60 updates) of the untrained perplexity.
    assert r["perplexity"] < (0.6 if strict else 0.45) * r["initial_perplexity"]
    assert np.mean(r["losses"][-5:]) < np.mean(r["losses"][:5]) - 0.5
    assert r["sample"].startswith("def ") and len(r["sample"]) == 4 + 300


def test_checkpoint_round_trip_and_truncation(load_example, tmp_path):
    ex = load_example("char_lstm")
    r = ex.train(steps=3, batch_size=4, bptt=8, embed=8, hidden=8, max_chars=3000,
                 log_every=0, out=str(tmp_path))
    xp, dev = ex.backend("numpy")
    model, vocab = ex.load_model(str(tmp_path / "model.safetensors"), xp, dev)
    assert vocab == r["vocab"]
    ids = ex.encode("import portagrad", vocab)[:, None]
    a, _ = model(ids)
    b, _ = r["model"](ids)
    np.testing.assert_array_equal(a.array, b.array)
    # A detached state starts a new graph: the next chunk's loss does not reach back
    # into the parameters through the previous chunk.
    data = ex.asarray(ex.streams(ex.encode("abcdefgh" * 40, vocab), 2), xp, dev)
    _, state = ex.chunk_loss(model, data, 0, 8, None)
    h, c = ex.detach(state)
    assert h.creator is None and c.creator is None
    loss, _ = ex.chunk_loss(model, data, 8, 8, (h, c))
    assert pg.grad(loss, state[0], allow_unused=True) == (None,)
    # Without detaching, it would.
    loss, _ = ex.chunk_loss(model, data, 8, 8, state)
    (g,) = pg.grad(loss, state[0])
    assert float(np.abs(g.array).sum()) > 0
