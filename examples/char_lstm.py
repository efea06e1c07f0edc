"""Character-level LSTM language model on text that ships with the code: truncated BPTT.

The corpus is portagrad's own source (every ``.py`` file of the package, in sorted order;
the last tenth is held out for validation), or any text file or folder given with
``--corpus``. The text is cut into ``--batch-size`` parallel streams; each update runs the
LSTM over the next ``--bptt`` characters of every stream, starting from the state the
previous chunk ended in, detached, so gradients flow back ``--bptt`` steps and no further
(truncated backpropagation through time). At the end it reports the validation perplexity,
saves a checkpoint with ``portagrad.io`` and samples text from the model.

    python examples/char_lstm.py                        # about 5 minutes on 2 CPU cores
    python examples/char_lstm.py --steps 50 --hidden 64 --backend array_api_strict
    python examples/char_lstm.py --sample-from result/char_lstm/model.safetensors
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend, host

import portagrad as pg
from portagrad import ops

UNKNOWN = "\x00"  # stands for characters too rare to get an embedding of their own


def read_corpus(spec: str) -> str:
    """The text of ``spec``: ``portagrad`` (the package's source), a file or a folder."""
    if spec == "portagrad":
        root = Path(pg.__file__).resolve().parent
        files = sorted(root.rglob("*.py"))
    else:
        p = Path(spec)
        files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
    parts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    text = "\n".join(parts)
    if len(text) < 1000:
        raise SystemExit(f"--corpus {spec}: expected at least 1000 characters, got "
                         f"{len(text)}")
    return text


def make_vocab(text: str, min_count: int = 5) -> str:
    counts = Counter(text)
    return UNKNOWN + "".join(sorted(c for c, n in counts.items() if n >= min_count))


def encode(text: str, vocab: str) -> np.ndarray:
    index = {c: i for i, c in enumerate(vocab)}
    return np.array([index.get(c, 0) for c in text], dtype=np.int64)


class CharLM(pg.nn.Module):
    """Embedding -> LSTM -> Linear over a time-major batch of character ids."""

    def __init__(self, vocab_size: int, embed: int, hidden: int) -> None:
        self.embed = pg.nn.Embedding(vocab_size, embed)
        pg.nn.init.normal_(self.embed.weight, std=0.1)
        self.lstm = pg.nn.LSTM(embed, hidden)
        self.out = pg.nn.Linear(hidden, vocab_size)

    def forward(self, ids: Any, state: Any = None) -> tuple[pg.Variable, Any]:
        """``ids`` ``(T, N)`` -> logits ``(T, N, V)`` and the final ``(h, c)``."""
        ys, state = self.lstm(self.embed(ids), state)
        return self.out(ys), state


def streams(ids: np.ndarray, n: int) -> np.ndarray:
    """``ids`` cut into ``n`` equal contiguous streams, time-major ``(L, n)``."""
    length = len(ids) // n
    return np.ascontiguousarray(ids[:length * n].reshape(n, length).T)


def chunk_loss(model: CharLM, data: Any, t: int, bptt: int, state: Any) -> tuple[Any, Any]:
    """Mean cross entropy of predicting ``data[t+1 : t+1+bptt]`` from ``data[t : t+bptt]``."""
    xp = pg.xp.namespace_of(data)
    x, y = data[t:t + bptt, ...], data[t + 1:t + 1 + bptt, ...]
    logits, state = model(x, state)
    v = logits.shape[-1]
    loss = ops.softmax_cross_entropy(ops.reshape(logits, (-1, v)), xp.reshape(y, (-1,)))
    return loss, state


def detach(state: Any) -> Any:
    # Truncation: the next chunk starts from these values but does not backpropagate
    # into the chunk that produced them.
    return tuple(s.detach() for s in state)


def evaluate(model: CharLM, data: Any, bptt: int) -> float:
    """Perplexity over a ``(L, N)`` stream array (state carried across chunks)."""
    total, count, state = 0.0, 0, None
    with pg.no_grad():
        for t in range(0, data.shape[0] - 1, bptt):
            n = min(bptt, data.shape[0] - 1 - t)
            loss, state = chunk_loss(model, data, t, n, state)
            total += float(loss.array) * n
            count += n
    return math.exp(total / count)


def sample(model: CharLM, vocab: str, xp: Any, device: Any, prompt: str = "def ",
           length: int = 300, temperature: float = 0.8, seed: int = 0) -> str:
    """Text continued from ``prompt``, one character at a time, carrying the state."""
    rng = np.random.default_rng(seed)
    ids = encode(prompt, vocab)
    out, state = [], None
    with pg.no_grad():
        logits, state = model(asarray(ids[:, None], xp, device), state)
        for _ in range(length):
            z = host(logits[-1, 0, :]).astype(np.float64) / temperature
            p = np.exp(z - z.max())
            nxt = int(rng.choice(len(vocab), p=p / p.sum()))
            out.append(vocab[nxt] if nxt else "?")
            logits, state = model(asarray(np.array([[nxt]]), xp, device), state)
    return prompt + "".join(out)


def train(corpus: str = "portagrad", steps: int = 1200, batch_size: int = 32,
          bptt: int = 64, embed: int = 32, hidden: int = 256, lr: float = 3e-3,
          clip: float = 5.0, max_chars: int | None = None, backend_name: str = "numpy",
          device: str = "cpu", seed: int = 0, log_every: int = 100,
          out: str | None = "result/char_lstm") -> dict:
    """Train, evaluate and sample; returns losses, perplexities, times and the sample."""
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    text = read_corpus(corpus)
    if max_chars:
        text = text[:max_chars]
    split = int(len(text) * 0.9)
    vocab = make_vocab(text[:split])
    train_ids, val_ids = encode(text[:split], vocab), encode(text[split:], vocab)
    train_data = asarray(streams(train_ids, batch_size), xp, dev)
    val_data = asarray(streams(val_ids, 32), xp, dev)

    model = CharLM(len(vocab), embed, hidden).to_device(dev, xp)
    opt = pg.optim.Adam(model, lr=lr)
    opt.add_hook(pg.optim.GradientClipping(clip))
    if log_every:
        print(f"{len(text)} characters, vocabulary {len(vocab)}; {train_data.shape[0]} "
              f"steps per stream, {batch_size} streams")
    initial = evaluate(model, val_data, bptt)
    timer, losses, state, t = Timer(), [], None, 0
    for step in range(1, steps + 1):
        if t + bptt + 1 > train_data.shape[0]:
            t, state = 0, None  # a new epoch starts every stream from its beginning
        opt.zero_grad()
        loss, state = chunk_loss(model, train_data, t, bptt, state)
        loss.backward()
        opt.step()
        state = detach(state)
        t += bptt
        losses.append(float(loss.array))
        if log_every and step % log_every == 0:
            print(f"step {step:5d}  train loss {np.mean(losses[-log_every:]):.3f}  "
                  f"{float(timer):6.0f} s")
    train_seconds = float(timer)
    perplexity = evaluate(model, val_data, bptt)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        pg.io.save(Path(out) / "model.safetensors",
                   {"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "vocab": vocab, "embed": embed, "hidden": hidden})
    return {"losses": losses, "initial_perplexity": initial, "perplexity": perplexity,
            "seconds": train_seconds, "vocab": vocab,
            "sample": sample(model, vocab, xp, dev, seed=seed), "model": model}


def load_model(path: str, xp: Any, device: Any) -> tuple[CharLM, str]:
    state = pg.io.load(path)
    model = CharLM(len(state["vocab"]), int(state["embed"]), int(state["hidden"]))
    model.load_state_dict(state["model"])
    return model.to_device(device, xp), state["vocab"]


def main(argv: list[str] | None = None) -> dict | None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="portagrad",
                    help="portagrad (the package's source) or a text file or folder")
    ap.add_argument("--steps", type=int, default=1200, help="updates (default 1200)")
    ap.add_argument("--batch-size", type=int, default=32, help="parallel streams")
    ap.add_argument("--bptt", type=int, default=64, help="characters per truncated chunk")
    ap.add_argument("--embed", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--max-chars", type=int, help="use only the first N characters")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="result/char_lstm", help="checkpoint folder")
    ap.add_argument("--sample-from", metavar="CHECKPOINT",
                    help="only sample from a saved model")
    ap.add_argument("--prompt", default="def ")
    ap.add_argument("--temperature", type=float, default=0.8)
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    if args.sample_from:
        xp, dev = backend(args.backend, args.device)
        model, vocab = load_model(args.sample_from, xp, dev)
        print(sample(model, vocab, xp, dev, args.prompt, temperature=args.temperature,
                     seed=args.seed))
        return None
    r = train(args.corpus, args.steps, args.batch_size, args.bptt, args.embed, args.hidden,
              args.lr, max_chars=args.max_chars, backend_name=args.backend,
              device=args.device, seed=args.seed, out=args.out)
    print(f"validation perplexity {r['perplexity']:.2f} (untrained {r['initial_perplexity']:.1f},"
          f" {math.log2(r['perplexity']):.2f} bits per character) after {args.steps} updates,"
          f" {r['seconds']:.0f} s")
    print("sample:\n" + r["sample"])
    return r


if __name__ == "__main__":
    main()
