"""A learnable token file for loss-curve checks (nanoGPT .bin layout: flat little-endian uint16).
Tokens follow a fixed sparse Markov chain over the vocabulary (each token has 4 likely
successors), so a model's loss falls well below ln(vocab) within a few hundred steps.
    python3 make_token_file.py OUT.bin --tokens 4000000 --vocab 32000"""
import argparse
import numpy as np

p = argparse.ArgumentParser()
p.add_argument("out"); p.add_argument("--tokens", type=int, default=4_000_000)
p.add_argument("--vocab", type=int, default=32000); p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
rng = np.random.default_rng(a.seed)
succ = rng.integers(0, a.vocab, size=(a.vocab, 4), dtype=np.int64)
choice = rng.choice(4, size=a.tokens, p=[0.7, 0.15, 0.1, 0.05])
out = np.empty(a.tokens, dtype=np.uint16)
t = 0
for i in range(a.tokens):  # 4M steps of a tiny loop: a few seconds
    t = succ[t, choice[i]]
    out[i] = t
out.tofile(a.out)
print(f"wrote {a.tokens} tokens to {a.out}")
