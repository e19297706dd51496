#!/usr/bin/env python3
"""Regenerates the end-to-end goldens of the executor with NumPy.

For each model it reads the weights from the program's .nrt.json form (inline storage bytes),
draws an input with a fixed seed, computes the forward pass in float64 with NumPy, and writes
  tests/executor/data/e2e/<model>/inputs/<input>.npy     (float32)
  tests/executor/data/e2e/<model>/expected/<output>.npy  (float32)
which tests/executor/nrt_run_test.cc feeds to `nrt-run --input ... --expect ...` (tolerance 1e-5).

Models:
  mlp                testdata/mlp.nrt(.json): linear(16->32), relu, linear(32->4)
  transformer_block  tests/executor/data/transformer_block.nrt(.json), written by
                     make_transformer_block.cc (pre-LN attention with a causal mask + GELU MLP)

Run from the repository root (numpy: python3-numpy or pip install numpy):
  python3 tests/executor/make_goldens.py
"""
import json
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "executor", "data", "e2e")

DTYPES = {"FLOAT32": np.float32, "FLOAT64": np.float64}


def load_weights(json_path):
    """fqn -> float64 array, from the .nrt.json form (strided views of inline storages)."""
    with open(json_path) as f:
        program = json.load(f)
    storages = [bytes(s.get("inline_data", [])) for s in program.get("storages", [])]
    weights = {}
    for w in program.get("weights", []):
        meta = w["meta"]
        dtype = np.dtype(DTYPES[meta["dtype"]])
        sizes = [d.get("literal", 0) for d in meta.get("sizes", [])]
        strides = [d.get("literal", 0) * dtype.itemsize for d in meta.get("strides", [])]
        offset = meta.get("storage_offset", {}).get("literal", 0) * dtype.itemsize
        data = np.frombuffer(storages[w.get("storage", 0)], dtype=dtype)
        view = np.lib.stride_tricks.as_strided(data[offset // dtype.itemsize:], shape=sizes, strides=strides)
        weights[w["fqn"]] = view.astype(np.float64)
    return weights


def linear(x, w, b):
    return x @ w.T + b


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def mlp(weights, x):
    h = np.maximum(linear(x, weights["fc1.weight"], weights["fc1.bias"]), 0.0)
    return {"linear_1": linear(h, weights["fc2.weight"], weights["fc2.bias"])}


def transformer_block(weights, x):
    batch, seq, dim = x.shape
    heads, head_dim = 4, dim // 4

    def split_heads(t):
        return t.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

    h = layer_norm(x, weights["ln1.weight"], weights["ln1.bias"])
    qkv = linear(h, weights["attn.qkv.weight"], weights["attn.qkv.bias"])
    q, k, v = (split_heads(t) for t in np.split(qkv, 3, axis=-1))
    scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(head_dim)) + weights["attn.causal_mask"]
    context = softmax(scores, -1) @ v
    context = context.transpose(0, 2, 1, 3).reshape(batch, seq, dim)
    h = x + linear(context, weights["attn.proj.weight"], weights["attn.proj.bias"])
    m = layer_norm(h, weights["ln2.weight"], weights["ln2.bias"])
    m = linear(gelu(linear(m, weights["mlp.fc1.weight"], weights["mlp.fc1.bias"])),
               weights["mlp.fc2.weight"], weights["mlp.fc2.bias"])
    return {"add_1": h + m}


MODELS = [
    # name, program .nrt.json, input name, input shape, seed, forward
    ("mlp", os.path.join(ROOT, "testdata", "mlp.nrt.json"), "x", (8, 16), 1, mlp),
    ("transformer_block", os.path.join(ROOT, "tests", "executor", "data", "transformer_block.nrt.json"), "x",
     (2, 8, 32), 2, transformer_block),
]


def main():
    for name, program, input_name, shape, seed, forward in MODELS:
        weights = load_weights(program)
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        outputs = forward(weights, x.astype(np.float64))
        os.makedirs(os.path.join(OUT, name, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(OUT, name, "expected"), exist_ok=True)
        np.save(os.path.join(OUT, name, "inputs", input_name + ".npy"), x)
        for output_name, value in outputs.items():
            np.save(os.path.join(OUT, name, "expected", output_name + ".npy"), value.astype(np.float32))
        print(f"{name}: {', '.join(outputs)}")


if __name__ == "__main__":
    main()
