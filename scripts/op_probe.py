#!/usr/bin/env python3
"""Element-wise and activation ops on one f32[1,128,1024] tensor: nrt against torch eager, one thread.

nrt runs a chain (relu, gelu, sigmoid, mul + add, tanh, silu, sum) with `nrt-run --profile`, whose
per-target means are the nrt column; torch times each op alone on the same tensor. By hand only
(needs torch):

  OPENBLAS_NUM_THREADS=1 python3 scripts/op_probe.py [--nrt-run bazel-bin/cli/nrt-run] [--repeat 200]

--model-ops times the kernels that segmentation, MoE, video and MaxViT models brought (einsum,
conv3d, adaptive_avg_pool3d, index_put with accumulate, grouped_mm_fallback, upsample_bilinear2d,
sort, topk, histc), each at a size such models use, against torch eager the same way.

--philox times torch's stateless draws instead (torch.func._random: _philox_uniform_ and
_philox_normal_ on 2^24 float32 elements, one thread) against nrt-run's kernels for the same
exported program (issue 26's comparison with torch; bench/random/philox_bench compares with memset).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nrt-run", default=os.environ.get("NRT_RUN", os.path.join(ROOT, "bazel-bin", "cli", "nrt-run")))
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--philox", action="store_true", help="time torch's stateless random draws instead")
    parser.add_argument("--model-ops", action="store_true", help="time the kernels of segmentation, MoE, video and MaxViT models instead")
    args = parser.parse_args()
    if args.philox:
        return probe_philox(args)
    if args.model_ops:
        return probe_model_ops(args)
    try:
        import numpy as np
        import torch
        import torch.nn.functional as F
    except ImportError:
        sys.exit("op_probe: torch and numpy are needed (pip install torch numpy)")
    torch.set_num_threads(1)

    class Chain(torch.nn.Module):
        def forward(self, x):
            a = F.relu(x)
            b = F.gelu(a)
            c = torch.sigmoid(b)
            d = c * a + b
            e = torch.tanh(d)
            return F.silu(e).sum()

    x = torch.randn(1, 128, 1024)
    ops = {
        "aten::relu.default": lambda: F.relu(x),
        "aten::gelu.default": lambda: F.gelu(x),
        "aten::sigmoid.default": lambda: torch.sigmoid(x),
        "aten::mul.Tensor": lambda: x * x,
        "aten::tanh.default": lambda: torch.tanh(x),
        "aten::silu.default": lambda: F.silu(x),
    }
    torch_ms = {}
    for target, fn in ops.items():
        fn()
        start = time.perf_counter()
        for _ in range(args.repeat):
            fn()
        torch_ms[target] = (time.perf_counter() - start) / args.repeat * 1e3

    with tempfile.TemporaryDirectory(prefix="nrt_probe_") as scratch:
        ep = torch.export.export(Chain(), (x,)).run_decompositions({})
        torch.export.save(ep, os.path.join(scratch, "probe.pt2"))
        np.save(os.path.join(scratch, "x.npy"), x.numpy())
        name = ep.graph_signature.user_inputs[0]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        report = json.loads(subprocess.run(
            [args.nrt_run, "-q", os.path.join(scratch, "probe.pt2"), "--input", f"{name}={scratch}/x.npy",
             "--repeat", str(args.repeat), "--profile", "--json"],
            capture_output=True, text=True, env=env, check=True).stdout)  # fmt: skip
    nrt_ms = {row["name"]: row["mean_ms"] for row in report["profile"]["by_target"]}
    print(f"{'op on f32[1,128,1024]':24} {'nrt ms':>9} {'torch ms':>9} {'ratio':>7} {'nrt ns/elt':>11}")
    for target in ops:
        if target in nrt_ms:
            n = nrt_ms[target]
            print(f"{target:24} {n:9.4f} {torch_ms[target]:9.4f} {n / torch_ms[target]:7.2f} {n * 1e6 / x.numel():11.3f}")


def probe_model_ops(args):
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    try:
        import transformers.integrations.moe  # noqa: F401  registers transformers::grouped_mm_fallback
    except ImportError:
        sys.exit("op_probe: --model-ops needs transformers (its grouped_mm_fallback op)")
    grouped = torch.ops.transformers.grouped_mm_fallback
    q, k = torch.randn(1, 4, 128, 64), torch.randn(1, 4, 128, 64)
    video, kernel3d = torch.randn(1, 8, 8, 32, 32), torch.randn(16, 8, 3, 3, 3)
    volume = torch.randn(1, 32, 8, 28, 28)
    table, rows, values = torch.randn(4096, 64), torch.randint(0, 4096, (4096,)), torch.randn(4096, 64)
    tokens, experts = torch.randn(256, 64), torch.randn(8, 64, 128)
    offs = torch.tensor([32 * (i + 1) for i in range(8)], dtype=torch.int32)
    image, lines, scores, samples = torch.randn(1, 16, 64, 64), torch.randn(64, 1024), torch.randn(4096, 64), torch.randn(1 << 20)
    ops = {
        "aten::einsum.default": lambda q, k, *_: torch.einsum("bhqd,bhkd->bhqk", q, k),
        "aten::conv3d.default": lambda q, k, video, *_: F.conv3d(video, kernel3d, padding=1),
        "aten::adaptive_avg_pool3d.default": lambda q, k, video, volume, *_: F.adaptive_avg_pool3d(volume, (2, 7, 7)),
        "aten::index_put.default": lambda q, k, video, volume, table, rows, values, *_: table.index_put((rows,), values, accumulate=True),
        "transformers::grouped_mm_fallback.default": lambda *a: grouped(a[7], experts, offs),
        "aten::upsample_bilinear2d.vec": lambda *a: F.interpolate(a[8], scale_factor=2.0, mode="bilinear"),
        "aten::sort.default": lambda *a: torch.sort(a[9], dim=-1)[0],
        "aten::topk.default": lambda *a: torch.topk(a[10], 8, dim=-1)[0],
        "aten::histc.default": lambda *a: torch.histc(a[11], bins=100, min=-3.0, max=3.0),
    }
    inputs = (q, k, video, volume, table, rows, values, tokens, image, lines, scores, samples)

    class Ops(torch.nn.Module):
        def forward(self, *a):
            return tuple(fn(*a) for fn in ops.values())

    torch_ms = {}
    for target, fn in ops.items():
        fn(*inputs)
        start = time.perf_counter()
        for _ in range(args.repeat):
            fn(*inputs)
        torch_ms[target] = (time.perf_counter() - start) / args.repeat * 1e3
    with tempfile.TemporaryDirectory(prefix="nrt_probe_") as scratch:
        ep = torch.export.export(Ops(), inputs).run_decompositions({})
        torch.export.save(ep, os.path.join(scratch, "ops.pt2"))
        command = [args.nrt_run, "-q", os.path.join(scratch, "ops.pt2"), "--repeat", str(args.repeat), "--profile", "--json"]
        for i, (name, tensor) in enumerate(zip(ep.graph_signature.user_inputs, inputs)):
            np.save(os.path.join(scratch, f"{i}.npy"), tensor.numpy())
            command += ["--input", f"{name}={scratch}/{i}.npy"]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        report = json.loads(subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout)
    nrt_ms = {row["name"]: row["mean_ms"] for row in report["profile"]["by_target"]}
    print(f"{'op':42} {'nrt ms':>9} {'torch ms':>9} {'nrt/torch':>10}")
    for target in ops:
        if target in nrt_ms:
            print(f"{target:42} {nrt_ms[target]:9.3f} {torch_ms[target]:9.3f} {nrt_ms[target] / torch_ms[target]:10.2f}")
        else:
            print(f"{target:42} (not a node of the exported program)")


def probe_philox(args):
    import numpy as np
    import torch
    import torch.func._random as stateless

    torch.set_num_threads(1)
    n = 1 << 24

    class Draws(torch.nn.Module):
        def forward(self, key):
            return stateless.uniform(key, n), stateless.normal(key, n)

    key = stateless.key(2026)
    out = torch.empty(n)
    ops = {
        "aten::_philox_uniform.default": lambda: torch.ops.aten._philox_uniform_(out, key, 0.0, 1.0),
        "aten::_philox_normal.default": lambda: torch.ops.aten._philox_normal_(out, key, 0.0, 1.0),
    }
    repeat = max(3, min(args.repeat, 20))
    torch_ms = {}
    for target, fn in ops.items():
        fn()
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        torch_ms[target] = (time.perf_counter() - start) / repeat * 1e3
    with tempfile.TemporaryDirectory(prefix="nrt_probe_") as scratch:
        ep = torch.export.export(Draws(), (key,)).run_decompositions({})
        torch.export.save(ep, os.path.join(scratch, "draws.pt2"))
        np.save(os.path.join(scratch, "key.npy"), key.numpy())
        name = ep.graph_signature.user_inputs[0]
        report = json.loads(subprocess.run(
            [args.nrt_run, "-q", os.path.join(scratch, "draws.pt2"), "--input", f"{name}={scratch}/key.npy",
             "--repeat", str(repeat), "--profile", "--json"],
            capture_output=True, text=True, check=True).stdout)  # fmt: skip
    nrt_ms = {row["name"]: row["mean_ms"] for row in report["profile"]["by_target"]}
    print(f"{'draw of 2^24 f32':30} {'nrt ms':>9} {'torch ms':>9} {'torch/nrt':>10}")
    for target in ops:
        if target in nrt_ms:
            print(f"{target:30} {nrt_ms[target]:9.2f} {torch_ms[target]:9.2f} {torch_ms[target] / nrt_ms[target]:10.2f}")


if __name__ == "__main__":
    main()
