#!/usr/bin/env python3
"""Exports a zoo of small models with torch.export on the CPU into testdata/torch/<name>/.

Each folder receives:
  model.pt2       torch.export.save() of the exported program (weights as raw storages)
  input_<i>.npy   eager inputs, output_<i>.npy eager outputs of the original nn.Module
  manifest.json   torch version, the dtype of every .npy (bfloat16 is stored as its uint16 bits,
                  numpy has no bfloat16), node count, op histogram and signature kinds of the
                  serialized graph (models/model.json as Python's json reads it)

These files are the import tests of record for nrt's torch.export importer; CI never runs this
script (torch is several GB). Run it by hand:

  python3 scripts/torch_corpus.py [--out testdata/torch] [--only NAME ...] [--install]
  python3 scripts/torch_corpus.py --check DIR   # torch.export.load archives nrt wrote

--install runs `pip install torch numpy` first when torch is missing.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import zipfile


def ensure_torch(install):
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        if not install:
            sys.exit("torch_corpus: torch and numpy are needed (pip install torch numpy, or pass --install)")
        subprocess.check_call([sys.executable, "-m", "pip", "install", "torch", "numpy"])


def build_zoo():
    """name -> (module, example inputs, export kwargs). Everything small: the corpus is committed."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    zoo = {}

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 8)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    zoo["mlp"] = (Mlp(), (torch.randn(4, 16),), {})

    class SmallCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.bn(self.conv(x))))
            x = F.adaptive_avg_pool2d(x, 1).flatten(1)
            return self.head(x)

    cnn = SmallCnn()
    with torch.no_grad():  # non-trivial running statistics
        cnn.bn.running_mean.uniform_(-0.5, 0.5)
        cnn.bn.running_var.uniform_(0.5, 1.5)
    zoo["cnn"] = (cnn.eval(), (torch.randn(2, 3, 8, 8),), {})

    class TransformerBlock(nn.Module):
        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.ln2 = nn.LayerNorm(dim)
            self.ff1 = nn.Linear(dim, 4 * dim)
            self.ff2 = nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
            return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))

    zoo["transformer_block"] = (TransformerBlock().eval(), (torch.randn(2, 6, 32),), {})

    class TiedWeights(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(20, 12)
            self.out = nn.Linear(12, 20, bias=False)
            self.out.weight = self.embed.weight  # one parameter, two uses

        def forward(self, tokens):
            return self.out(self.embed(tokens))

    zoo["tied_weights"] = (TiedWeights(), (torch.randint(0, 20, (2, 5)),), {})

    class BufferMutation(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(1))
            self.register_buffer("scale", torch.full((4,), 0.5), persistent=False)
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            self.calls.add_(1)
            return self.lin(x) * self.scale + self.calls

    zoo["buffer_mutation"] = (BufferMutation(), (torch.randn(3, 4),), {})

    class DynamicBatch(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(x).softmax(-1) * x.shape[0]

    batch = torch.export.Dim("batch", min=1, max=64)
    zoo["dynamic_batch"] = (DynamicBatch(), (torch.randn(5, 8),), {"dynamic_shapes": ({0: batch},)})

    class Cond(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            def positive(x):
                return self.lin(x).relu()

            def negative(x):
                return (x - 1.0).tanh()

            return torch.cond(x.sum() > 0, positive, negative, (x,))

    zoo["cond"] = (Cond(), (torch.randn(2, 4).abs(),), {})

    class Dtypes(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(6, 6).to(torch.bfloat16))
            self.register_buffer("offsets", torch.arange(6, dtype=torch.int8))

        def forward(self, q, mask):
            h = (q + self.offsets).to(torch.bfloat16) @ self.w
            return torch.where(mask, h, torch.zeros_like(h)), (q > 0) & mask

    zoo["dtypes"] = (
        Dtypes(),
        (torch.randint(-8, 8, (3, 6), dtype=torch.int8), torch.rand(3, 6) > 0.5),
        {},
    )

    lib = torch.library.Library("nrt_corpus", "DEF")
    lib.define(
        "enum_probe(Tensor x, ScalarType dtype, Layout layout, MemoryFormat memory_format, Device device) -> Tensor"
    )

    def enum_probe(x, dtype, layout, memory_format, device):
        return x.to(dtype=dtype, device=device).contiguous(memory_format=memory_format) * 2

    lib.impl("enum_probe", enum_probe, "CompositeExplicitAutograd")
    torch.library.register_fake("nrt_corpus::enum_probe", lib=lib)(
        lambda x, dtype, layout, memory_format, device: torch.empty_like(x, dtype=dtype).contiguous(
            memory_format=memory_format
        )
    )

    class CustomOpEnums(nn.Module):
        def forward(self, x):
            y = torch.ops.nrt_corpus.enum_probe(x, torch.float64, torch.strided, torch.channels_last, torch.device("cpu"))
            z = torch.ops.nrt_corpus.enum_probe(x, torch.int8, torch.strided, torch.contiguous_format, torch.device("cpu"))
            return y, z

    zoo["custom_op_enums"] = (CustomOpEnums(), (torch.randn(1, 2, 3, 3),), {})
    zoo["_library"] = lib  # kept alive while exporting

    # Functional collectives name their process group by string; torch's fake process group lets
    # one process export them (its eager results are not meaningful, so none are saved).
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)

    class Collectives(nn.Module):
        def forward(self, x):
            y = funcol.all_reduce(x, "sum", dist.group.WORLD)
            return funcol.all_gather_single(y, 0, dist.group.WORLD) * 2

    zoo["collectives"] = (Collectives(), (torch.randn(2, 3),), {"no_eager_reference": True})
    return zoo


def to_numpy(tensor):
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.uint16).numpy(), "bfloat16", "uint16 bits"
    return tensor.numpy(), str(tensor.dtype).replace("torch.", ""), "native"


def flatten(outputs):
    import torch

    if isinstance(outputs, torch.Tensor):
        return [outputs]
    flat = []
    for item in outputs:
        flat.extend(flatten(item))
    return flat


def export_one(name, module, inputs, kwargs, out_dir):
    import numpy as np
    import torch

    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    eager_reference = not kwargs.pop("no_eager_reference", False)
    state = {k: v.clone() for k, v in module.state_dict().items()}
    expected = []
    if eager_reference:
        with torch.no_grad():
            expected = flatten(module(*inputs))
    module.load_state_dict(state)  # the eager run may have mutated buffers
    # run_decompositions({}) functionalizes (buffer mutations become outputs) without decomposing.
    ep = torch.export.export(module, inputs, **kwargs).run_decompositions({})
    torch.export.save(ep, os.path.join(folder, "model.pt2"))

    manifest = {"torch_version": torch.__version__, "inputs": [], "outputs": []}
    if not eager_reference:
        manifest["note"] = "no eager outputs: the fake process group computes nothing meaningful"
    for kind, tensors in (("input", list(inputs)), ("output", expected)):
        for i, tensor in enumerate(tensors):
            array, dtype, stored = to_numpy(tensor)
            file = f"{kind}_{i}.npy"
            np.save(os.path.join(folder, file), array)
            manifest[kind + "s"].append({"file": file, "dtype": dtype, "stored_as": stored, "shape": list(tensor.shape)})

    # Node count from the exported graph; op histogram and signature as the archive spells them
    # (the serialized targets an importer sees), read back with Python's own JSON parser.
    manifest["fx_call_function_nodes"] = sum(1 for node in ep.graph.nodes if node.op == "call_function")
    with zipfile.ZipFile(os.path.join(folder, "model.pt2")) as archive:
        root = archive.namelist()[0].split("/")[0]
        program = json.loads(archive.read(f"{root}/models/model.json"))
    graph_module = program["graph_module"]
    histogram = collections.Counter(node["target"] for node in graph_module["graph"]["nodes"])
    manifest["op_histogram"] = dict(sorted(histogram.items()))
    manifest["nodes"] = sum(histogram.values())  # serialized nodes (getitem nodes fold into outputs)
    manifest["input_specs"] = [next(iter(spec)) for spec in graph_module["signature"]["input_specs"]]
    manifest["output_specs"] = [next(iter(spec)) for spec in graph_module["signature"]["output_specs"]]
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(folder, "torch_version.txt"), "w") as f:
        f.write(torch.__version__ + "\n")
    size = sum(os.path.getsize(os.path.join(folder, p)) for p in os.listdir(folder))
    print(f"torch_corpus: {name}: {manifest['nodes']} nodes, {size} bytes")


def load_array(folder, entry):
    import numpy as np
    import torch

    tensor = torch.from_numpy(np.load(os.path.join(folder, entry["file"])))
    return tensor.view(torch.bfloat16) if entry["dtype"] == "bfloat16" else tensor


def model_json(path):
    with zipfile.ZipFile(path) as archive:
        root = archive.namelist()[0].split("/")[0]
        return json.loads(archive.read(f"{root}/models/model.json"))


def check_exports(corpus, exports, only):
    import torch

    ok = True
    for name in sorted(os.listdir(corpus)):
        folder = os.path.join(corpus, name)
        candidate = os.path.join(exports, name + ".pt2")
        if (only and name not in only) or not os.path.isfile(os.path.join(folder, "manifest.json")):
            continue
        if not os.path.isfile(candidate):
            print(f"torch_corpus: {name}: {candidate} missing")
            ok = False
            continue
        manifest = json.load(open(os.path.join(folder, "manifest.json")))
        same_json = model_json(os.path.join(folder, "model.pt2")) == model_json(candidate)
        outputs = "no eager reference"
        try:
            module = torch.export.load(candidate).module()
            if manifest["outputs"]:
                result = module(*[load_array(folder, e) for e in manifest["inputs"]])
                result = [result] if isinstance(result, torch.Tensor) else flatten(result)
                expected = [load_array(folder, e) for e in manifest["outputs"]]
                match = len(result) == len(expected) and all(
                    torch.allclose(r.float(), e.float(), atol=1e-5, rtol=1e-5) for r, e in zip(result, expected)
                )
                outputs = "outputs match" if match else "OUTPUTS DIFFER"
                ok &= match
        except Exception as error:  # report every model, not just the first failure
            outputs = f"LOAD FAILED: {type(error).__name__}: {str(error)[:200]}"
            ok = False
        ok &= same_json
        print(f"torch_corpus: {name}: model.json {'equal' if same_json else 'DIFFERS'}; {outputs}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "testdata", "torch"))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--install", action="store_true")
    parser.add_argument(
        "--check",
        metavar="DIR",
        help="instead of exporting: load DIR/<name>.pt2 (archives nrt wrote, e.g. by converting each "
        "model.pt2 to .nrt and back) with torch.export.load, run the saved inputs and compare with the "
        "saved outputs and with the original models/model.json",
    )
    args = parser.parse_args()
    ensure_torch(args.install)

    zoo = build_zoo()  # also registers the corpus' custom op, which --check needs to load
    if args.check:
        sys.exit(0 if check_exports(args.out, args.check, args.only) else 1)
    for name, entry in zoo.items():
        if name.startswith("_") or (args.only and name not in args.only):
            continue
        module, inputs, kwargs = entry
        export_one(name, module, inputs, kwargs, args.out)


if __name__ == "__main__":
    main()
