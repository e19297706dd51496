"""The Python layer's cost: nrt.Runner called from Python against the same runs made in C++ in the
same process (Runner._time_native_runs, the GIL released, a C++ loop over Session::run).

  1. a one-add program (two f32[16] inputs): the Python layer's added time per call, in µs
     (target <= 5 µs), and the ratio of the two per-call times;
  2. a model (--model DIR: model.pt2, manifest.json and its input .npy files, as the torch corpus
     lays them out; default the corpus's bert_mask__default): Python's per-call time over C++'s
     (target <= 1.05 for a bert-sized run, >= 10 ms; the corpus's models are tiny).

Medians of interleaved rounds (Python, C++, Python, ...), so the machine's noise hits both sides
alike. Prints one `target:` line per target (bench/bench_target.h's format). Run with the installed
package:   python bench/python/runner_bench.py [--smoke] [--model DIR]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import nrt

# A run this long is bert-sized: the Python layer's few µs are then noise, and the target holds.
BERT_SIZED_SECONDS = 0.010

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def report_target(name, value, goal, bound):
    met = value == value and (value >= bound if goal == ">=" else value <= bound)
    print(f"target: {name} {value:.3g} (target {goal} {bound:.3g}): {'met' if met else 'MISSED'}", flush=True)


def tensor_meta(n):
    return {"dtype": "FLOAT32", "sizes": [{"literal": n}], "strides": [{"literal": 1}], "storage_offset": {}, "device": {}}


def one_add_program(n=16):
    """out = x + y over f32[n], as nrt's JSON form."""
    value = lambda name: {"name": name, "kind": "TENSOR", "tensor": tensor_meta(n)}  # noqa: E731
    ref = lambda i: {"arg_type": "TensorArg", "arg": {"value": i} if i else {}}  # noqa: E731
    node = {
        "name": "add",
        "op": 0,
        "inputs": [
            {"name": "self", "kind": "POSITIONAL", **ref(0)},
            {"name": "other", "kind": "POSITIONAL", **ref(1)},
        ],
        "outputs": [ref(2)],
    }
    graph = {
        "name": "main",
        "values": [value("x"), value("y"), value("add")],
        "nodes": [node],
        "inputs": [ref(0), ref(1)],
        "outputs": [ref(2)],
        "signature": {
            "inputs": [{"kind": "USER_INPUT", "value": 0}, {"kind": "USER_INPUT", "value": 1}],
            "outputs": [{"kind": "USER_OUTPUT", "value": 2}],
        },
    }
    return {
        "schema_version": {"major": 1, "minor": 0},
        "producer": "bench/python/runner_bench.py",
        "graphs": [graph],
        "entry_points": [0],
        "operators": [{"name": "aten::add", "overload": "Tensor"}],
    }


def python_calls(runner, inputs, calls):
    start = time.perf_counter()
    for _ in range(calls):
        runner(**inputs)
    return (time.perf_counter() - start) / calls


def native_calls(runner, inputs, calls):
    return statistics.fmean(runner._time_native_runs(calls, **inputs))


def interleaved(runner, inputs, calls, rounds):
    py, cpp = [], []
    python_calls(runner, inputs, max(1, calls // 10))  # warm both paths
    native_calls(runner, inputs, max(1, calls // 10))
    for _ in range(rounds):
        py.append(python_calls(runner, inputs, calls))
        cpp.append(native_calls(runner, inputs, calls))
    return statistics.median(py), statistics.median(cpp)


def corpus_inputs(runner, model_dir):
    with open(os.path.join(model_dir, "manifest.json"), encoding="utf-8") as f:
        entries = json.load(f)["inputs"]
    names = [i["name"] for i in runner.inputs]
    return {n: np.load(os.path.join(model_dir, e["file"])) for n, e in zip(names, entries)}


def default_model():
    corpus = os.path.join(REPO, "testdata", "torch")
    candidates = [os.path.join(corpus, "bert_mask__default")]
    return next(d for d in candidates if os.path.exists(os.path.join(d, "model.pt2")))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="a few rounds: checks that it runs, not the figures")
    parser.add_argument("--model", help="the corpus folder of the model for the second figure")
    args = parser.parse_args()
    rounds, add_calls, model_calls = (3, 2000, 5) if args.smoke else (15, 20000, 50)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "add.nrt.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(one_add_program(), f)
        runner = nrt.Runner(nrt.load(path))
    x = np.arange(16, dtype=np.float32)
    inputs = {"x": x, "y": x}
    np.testing.assert_array_equal(runner(**inputs)["add"], x + x)
    py, cpp = interleaved(runner, inputs, add_calls, rounds)
    added_us = (py - cpp) * 1e6
    print(f"one add, f32[16]: Python {py * 1e6:.2f} µs per call, C++ {cpp * 1e6:.2f} µs per run "
          f"(ratio {py / cpp:.2f}); the Python layer adds {added_us:.2f} µs")
    report_target("runner_bench/python_layer_us_per_call", added_us, "<=", 5.0)

    model_dir = args.model or default_model()
    runner = nrt.Runner(nrt.load(os.path.join(model_dir, "model.pt2")))
    inputs = corpus_inputs(runner, model_dir)
    py, cpp = interleaved(runner, inputs, model_calls, rounds)
    print(f"{os.path.basename(model_dir)}: Python {py * 1e3:.3f} ms per call, C++ {cpp * 1e3:.3f} ms per run "
          f"(ratio {py / cpp:.3f})")
    if cpp >= BERT_SIZED_SECONDS:
        report_target("runner_bench/model_python_over_cpp", py / cpp, "<=", 1.05)
    else:
        print(f"(the 5% target is for bert-sized runs, >= {BERT_SIZED_SECONDS * 1e3:.0f} ms; pass --model with one: "
              "docs/PYTHON.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
