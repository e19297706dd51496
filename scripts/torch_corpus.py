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

Zoo (real architectures at small sizes, random weights: torchvision, transformers, torch.nn), each
exported as `default` (training IR), `decomp_empty` (run_decompositions({})) and `core_aten`
(run_decompositions()) into <zoo-dir>/<model>__<form>/ (same layout, plus expect/ for nrt-run), then
run by nrt-run against torch's eager outputs; prints a table (exported, runs, matches, the kernels
nrt misses) and writes it to <zoo-dir>/zoo_table.json:

  python3 scripts/torch_corpus.py --zoo [--zoo-dir /tmp/zoo] [--only 'gpt2*' ...] [--forms core_aten ...]
          [--nrt-run PATH]   # default $NRT_RUN, else bazel-bin/cli/nrt-run
  python3 scripts/torch_corpus.py --commit llama_mask__core_aten lstm [NAME=DEST ...] [--commit-dir DIR]

--commit copies zoo folders into the corpus (testdata/torch) for CI, each only if nrt-run matches
it at CI's tolerance; mind the total size it prints (keep the committed corpus well under 25 MB).
"""

import argparse
import collections
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import warnings
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

    # Attention for sharding by heads (testdata/sharding/attention_*.json): q, k, v colwise, o
    # rowwise; the views split the sharded projection into (heads, head_dim) and merge it back.
    class AttentionHeads(nn.Module):
        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.heads = heads
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)
            self.v = nn.Linear(dim, dim)
            self.o = nn.Linear(dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = (p(x).view(b, t, self.heads, d // self.heads).transpose(1, 2) for p in (self.q, self.k, self.v))
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o(att.transpose(1, 2).reshape(b, t, d))

    zoo["attention_heads"] = (AttentionHeads().eval(), (torch.randn(2, 6, 32),), {})

    # An LM head for sharding over the vocabulary (testdata/sharding/lm_head_*.json): rows v and
    # v + 32 of the head are equal, so row 0's maximum ties across the two vocabulary halves (the
    # first occurrence wins, across shards too); the mask puts a NaN in row 1 at vocabulary 40
    # (NaN is the maximum, and argmin's minimum).
    class LmHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(16, 64, bias=False)
            with torch.no_grad():
                self.head.weight[32:] = self.head.weight[:32]

        def forward(self, x, mask):
            logits = self.head(x) + mask
            values, indices = logits.max(-1)
            low, low_indices = logits.min(-1)
            return logits.argmax(-1), values, indices, logits.argmin(-1), low, low_indices

    lm_mask = torch.zeros(3, 64)
    lm_mask[1, 40] = float("nan")
    zoo["lm_head"] = (LmHead(), (torch.randn(3, 16), lm_mask), {})

    # A block for the sharding rules beyond linear and attention (testdata/sharding/embed_*.json):
    # a token embedding sharded over its vocabulary (masked lookup, then a partial sum), layer and
    # RMS norms over the features, split and cat of the features, a batched score matrix, a
    # matmul, a mean over the sequence, select and unsqueeze, all keeping a batch shard.
    class EmbedBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16)
            self.norm = nn.LayerNorm(16)
            self.rms = nn.RMSNorm(16)
            self.proj = nn.Linear(16, 16)

        def forward(self, tokens):
            h = self.norm(self.emb(tokens))
            a, b = h.split(8, dim=-1)
            s = torch.cat([b, a], dim=-1)
            scores = torch.bmm(s, s.transpose(1, 2)) * 0.25
            ctx = torch.matmul(scores.softmax(-1), s)
            out = self.proj(self.rms(ctx))
            return out, out.mean(dim=1), h.select(1, 2).unsqueeze(1)

    embed_tokens = torch.tensor([[0, 49, 17, 16, 33, 34], [1, 2, 3, 48, 25, 24], [40, 41, 0, 9, 8, 17],
                                 [16, 17, 33, 34, 49, 0]])
    zoo["embed_block"] = (EmbedBlock().eval(), (embed_tokens,), {})

    # Arg reductions over a dim of 5 (sharded over 4 ranks: 2, 2, 1, 0 elements) with ties across
    # shards, a NaN, and bool input compared as integers (torch refuses bool argmax: the bool
    # comparison is argmax of its int cast, which nrt runs on the bool itself).
    class ArgReduce5(nn.Module):
        def forward(self, x, flags):
            values, indices = x.max(-1)
            return x.argmax(-1), x.argmin(-1), values, indices, flags.to(torch.int32).argmax(-1)

    x5 = torch.tensor([[1.0, 3.0, 0.5, 3.0, 3.0], [2.0, float("nan"), 7.0, float("nan"), 1.0],
                       [-1.0, -2.0, -2.0, 4.0, 9.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    flags5 = torch.tensor([[False, False, True, True, False], [False, False, False, False, True],
                           [True, False, False, False, False], [False, False, False, False, False]])
    zoo["argreduce5"] = (ArgReduce5(), (x5, flags5), {})

    # torch's stateless random ops (torch.func._random), compared bit for bit ("exact" in the
    # manifest): every dtype of uniform, normal and randint, key split and fold-in (a negative
    # fold-in wraps the counter), a batched key, a stream that wraps past
    # offset 2^64, 0-d and empty outputs, draws longer than one 256-block chunk. `philox` is
    # run_decompositions({}) (the functional _philox_uniform ...), `philox_inplace` the training
    # IR (_philox_uniform_ in place on aten.empty).
    import torch.func._random as stateless

    class Philox(nn.Module):
        def forward(self, key, wrapping_key, x):
            k1, k2 = stateless.split(key)
            batch = stateless.split(k1, 3).reshape(3, 1, 2)
            folded = stateless.fold_in(k2, 7)
            carried = stateless.fold_in(k2, -1)
            return (
                x + stateless.uniform(k1, (3, 5), low=-1.0, high=2.0),
                stateless.uniform(k2, 3001),
                stateless.uniform(k2, 33, low=-2.5, high=1.25, dtype=torch.float64),
                stateless.uniform(k1, (2, 3, 7), low=-3.0, high=5.0, dtype=torch.float16),
                stateless.uniform(k1, 17, dtype=torch.bfloat16),
                stateless.uniform(wrapping_key, 41),
                stateless.uniform(batch, (3, 10)),
                stateless.uniform(k1, ()),
                stateless.uniform(k1, (0, 3)),
                stateless.normal(k1, (5, 7), mean=1.0, std=0.5),
                stateless.normal(folded, 701, mean=0.5, std=2.0, dtype=torch.float64),
                stateless.normal(carried, 13, dtype=torch.float16),
                stateless.normal(k2, (4, 4), mean=-1.0, dtype=torch.bfloat16),
                stateless.normal(wrapping_key, 11, dtype=torch.float64),
                stateless.randint(k2, 7, low=-3, high=9, dtype=torch.int64),
                stateless.randint(k2, 9, low=-(2**40), high=2**50, dtype=torch.int64),
                stateless.bits(k1, 10, dtype=torch.int32),
                stateless.bits(k1, 6, dtype=torch.uint8),
                stateless.randint(k2, 12, low=-100, high=100, dtype=torch.int8),
                stateless.randint(k2, 5, low=None, high=300, dtype=torch.int16),
                stateless.randint(k1, 8, high=5, dtype=torch.uint64),
                stateless.bits(k2, 8, dtype=torch.uint32),
                stateless.randint(k1, 8, high=2**30, dtype=torch.int32),
                stateless.split(batch, 2),
                folded,
                carried,
            )

    philox_inputs = (stateless.key(20261204), torch.tensor([5, 2**64 - 3], dtype=torch.uint64), torch.randn(3, 5))
    zoo["philox"] = (Philox(), philox_inputs, {"exact": True})
    zoo["philox_inplace"] = (Philox(), philox_inputs, {"exact": True, "training_ir": True})

    # torch's stateful draws as torch.export writes them (rand, randn, randint, normal_, uniform_,
    # normal's overloads, bernoulli, dropout in training): nrt draws them from its own seed
    # (docs/RANDOM.md), so torch's numbers are not the reference; the tests check that they
    # import and run, and tests/python checks the seed's effect.
    class SeededDraws(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.3)

        def forward(self, x):
            return (
                torch.rand(3, 4) + torch.randn(3, 4, dtype=torch.float64).float(),
                torch.rand_like(x) * torch.randn_like(x),
                torch.randint(0, 10, (5,)) + torch.randint(7, (5,)) + torch.randint_like(x, 3, 9).long().sum(),
                torch.empty(3, 4).normal_(1.0, 2.0) + torch.empty(3, 4).uniform_(-1, 1),
                torch.normal(x, 0.5) + torch.normal(0.0, x.abs() + 0.1) + torch.normal(2.0, 3.0, size=(3, 4)),
                torch.bernoulli(torch.full((3, 4), 0.3)) + torch.empty(3, 4).bernoulli_(0.7),
                self.drop(x) + F.dropout(x, 0.2, training=True),
            )

    seeded_note = "no eager outputs: nrt draws from its own seed (docs/RANDOM.md), not torch's generator"
    zoo["seeded_draws"] = (SeededDraws().train(), (torch.randn(3, 4),), {"no_eager_reference": seeded_note})
    zoo["seeded_draws_inplace"] = (SeededDraws().train(), (torch.randn(3, 4),),
                                   {"no_eager_reference": seeded_note, "training_ir": True})

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

    # A collective under data-dependent control flow: ranks whose inputs take different branches
    # leave the all_reduce waiting on the others (the watchdog's test, docs/COLLECTIVES.md).
    class CondCollective(nn.Module):
        def forward(self, x):
            def reduce(x):
                return funcol.all_reduce(x, "sum", dist.group.WORLD) * 1

            def keep(x):
                return x * 1

            return torch.cond(x.sum() > 0, reduce, keep, (x,))

    zoo["cond_collective"] = (CondCollective(), (torch.randn(2, 3).abs(),), {"no_eager_reference": True})
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


def eager_outputs(module, inputs):
    """The module's eager outputs, flattened; its state dict is restored after (the run may mutate buffers)."""
    import torch

    state = module.state_dict()
    saved = collections.OrderedDict((k, v.clone()) for k, v in state.items())
    saved._metadata = getattr(state, "_metadata", None)  # versioned modules (MNASNet) read it when loading
    # Clones: a module may mutate its inputs in place (x.add_(1)); the saved inputs stay unchanged.
    copies = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    with torch.no_grad():
        expected = flatten(module(*copies))
    module.load_state_dict(saved)
    return expected


def write_program(folder, ep, inputs, expected, note=None, extra=None):
    """Writes one corpus folder (model.pt2, input_<i>.npy, output_<i>.npy, manifest.json,
    torch_version.txt) for an exported program; returns the manifest. extra: more manifest keys."""
    import numpy as np
    import torch

    os.makedirs(folder, exist_ok=True)
    torch.export.save(ep, os.path.join(folder, "model.pt2"))

    manifest = {"torch_version": torch.__version__, "inputs": [], "outputs": []}
    if note:
        manifest["note"] = note
    for kind, tensors in (("input", list(inputs)), ("output", expected)):
        for i, tensor in enumerate(tensors):
            array, dtype, stored = to_numpy(tensor)
            file = f"{kind}_{i}.npy"
            np.save(os.path.join(folder, file), array)
            manifest[kind + "s"].append({"file": file, "dtype": dtype, "stored_as": stored, "shape": list(tensor.shape)})

    # Node count from the exported graph; op histogram and signature as the archive spells them
    # (the serialized targets an importer sees), read back with Python's own JSON parser.
    manifest["fx_call_function_nodes"] = sum(1 for node in ep.graph.nodes if node.op == "call_function")
    graph_module = model_json(os.path.join(folder, "model.pt2"))["graph_module"]
    histogram = collections.Counter(node["target"] for node in graph_module["graph"]["nodes"])
    manifest["op_histogram"] = dict(sorted(histogram.items()))
    manifest["nodes"] = sum(histogram.values())  # serialized nodes (getitem nodes fold into outputs)
    manifest["input_specs"] = [next(iter(spec)) for spec in graph_module["signature"]["input_specs"]]
    manifest["output_specs"] = [next(iter(spec)) for spec in graph_module["signature"]["output_specs"]]
    manifest.update(extra or {})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(folder, "torch_version.txt"), "w") as f:
        f.write(torch.__version__ + "\n")
    return manifest


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, p)) for p in os.listdir(folder) if os.path.isfile(os.path.join(folder, p)))


def export_one(name, module, inputs, kwargs, out_dir):
    import torch

    folder = os.path.join(out_dir, name)
    no_reference = kwargs.pop("no_eager_reference", False)
    eager_reference = not no_reference
    exact = kwargs.pop("exact", False)  # nrt must give torch's bits: the test compares exactly
    training_ir = kwargs.pop("training_ir", False)  # keep torch.export's default IR (in-place ops)
    expected = eager_outputs(module, inputs) if eager_reference else []
    ep = torch.export.export(module, inputs, **kwargs)
    if not training_ir:
        # run_decompositions({}) functionalizes (buffer mutations become outputs) without decomposing.
        ep = ep.run_decompositions({})
    note = None
    if not eager_reference:  # True, or the note's own words
        note = no_reference if isinstance(no_reference, str) else "no eager outputs: the fake process group computes nothing meaningful"
    manifest = write_program(folder, ep, inputs, expected, note, {"exact": True} if exact else None)
    print(f"torch_corpus: {name}: {manifest['nodes']} nodes, {folder_bytes(folder)} bytes")


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


# ---------------------------------------------------------------------------------------------
# --zoo: real architectures (torchvision, transformers, torch.nn) at small sizes with random
# weights, each exported three ways, run by nrt-run against torch's eager outputs. The table says
# which models nrt runs today and which kernels the rest miss. Output goes to a scratch folder;
# --commit copies chosen folders into the corpus.

ZOO_FORMS = ("default", "decomp_empty", "core_aten")
# Files of a corpus folder (what --commit copies); the zoo also keeps expect/ for nrt-run.
CORPUS_FILES = ("model.pt2", "manifest.json", "torch_version.txt")
# The executor's corpus test compares float32 within 1e-5 (tests/executor/torch_corpus_test.cc).
CI_TOLERANCE = 1e-5


def convert_form(ep, form):
    """One of the three forms a user hands over; ep is the program torch.export.export returned."""
    if form == "default":
        return ep  # training IR as export returns it: not functionalized, may hold in-place ops
    if form == "decomp_empty":
        return ep.run_decompositions({})  # functionalized, nothing decomposed
    return ep.run_decompositions()  # core ATen opset


def randomize_batchnorm(model):
    """Fresh BatchNorm running statistics are the identity (mean 0, var 1); random ones exercise them."""
    import torch

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.running_mean is not None:
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
    return model


def torchvision_builders():
    """name -> builder returning (module, inputs): classifiers with 10 classes at 64x64 (ViT 32x32)."""
    import torch
    import torchvision.models as tvm

    def classifier(factory, size=64):
        def build():
            return randomize_batchnorm(factory(weights=None, num_classes=10)).eval(), (torch.randn(1, 3, size, size),)

        return build

    def vit():
        model = tvm.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10
        )
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)  # zero-initialized: the output would be all 0
        return model.eval(), (torch.randn(1, 3, 32, 32),)

    builders = {
        name: classifier(getattr(tvm, name))
        for name in (
            "resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "regnet_y_400mf",
            "shufflenet_v2_x0_5", "squeezenet1_0", "mnasnet0_5", "densenet121", "convnext_tiny", "swin_t",
        )
    }  # fmt: skip
    builders["vit"] = vit

    # The same architectures at widths small enough to commit (convnext_tiny and swin_t weigh
    # 107 MB): layer scale, stochastic depth, shifted windows and their padding all stay.
    def convnext_small_config():
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt

        model = ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, None, 2)], num_classes=10)
        return model.eval(), (torch.randn(1, 3, 64, 64),)

    def swin_small_config():
        from torchvision.models.swin_transformer import SwinTransformer

        model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
                                num_classes=10)
        return model.eval(), (torch.randn(1, 3, 40, 40),)

    builders["convnext_small_config"] = convnext_small_config
    builders["swin_small_config"] = swin_small_config
    builders.update(torchvision_family_builders())
    return builders


def torchvision_family_builders():
    """Segmentation, video, MaxViT and Swin V2 at widths small enough to commit (the real ones weigh
    13-130 MB); every block type, attention and resampling of the architecture stays."""
    import torch
    import torch.nn as nn
    import torchvision.models as tvm

    def deeplabv3():
        # torchvision's DeepLabV3 (dilated MobileNetV3 backbone, ASPP head, bilinear upsampling
        # back to the input size), the head at 16 channels instead of 256.
        from torchvision.models.segmentation.deeplabv3 import ASPP, _deeplabv3_mobilenetv3

        backbone = tvm.mobilenet_v3_small(width_mult=0.25, dilated=True)
        model = _deeplabv3_mobilenetv3(backbone, num_classes=4, aux=False)
        head_in = model.classifier[0].convs[0][0].in_channels
        model.classifier = nn.Sequential(ASPP(head_in, [12, 24, 36], out_channels=16), nn.Conv2d(16, 16, 3, padding=1, bias=False),
                                         nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 4, 1))  # fmt: skip
        return OutTensor(randomize_batchnorm(model).eval(), "out"), (torch.randn(1, 3, 48, 40),)

    def lraspp():
        from torchvision.models.segmentation.lraspp import _lraspp_mobilenetv3

        backbone = tvm.mobilenet_v3_small(width_mult=0.25, dilated=True)
        model = _lraspp_mobilenetv3(backbone, num_classes=4)
        return OutTensor(randomize_batchnorm(model).eval(), "out"), (torch.randn(1, 3, 48, 40),)

    def r3d():
        # torchvision's r3d_18 (VideoResNet: 3-D stem, BasicBlocks of Conv3DSimple, 3-D average
        # pooling) with one block per stage and widths 4-32 instead of two blocks and 64-512.
        from torchvision.models.video.resnet import BasicBlock, Conv3DSimple, VideoResNet

        class SmallVideoResNet(VideoResNet):
            def __init__(self, widths=(4, 8, 16, 32), num_classes=10):
                nn.Module.__init__(self)
                self.inplanes = widths[0]
                self.stem = nn.Sequential(nn.Conv3d(3, widths[0], (3, 7, 7), (1, 2, 2), (1, 3, 3), bias=False),
                                          nn.BatchNorm3d(widths[0]), nn.ReLU(inplace=True))  # fmt: skip
                self.layer1 = self._make_layer(BasicBlock, Conv3DSimple, widths[0], 1, stride=1)
                self.layer2 = self._make_layer(BasicBlock, Conv3DSimple, widths[1], 1, stride=2)
                self.layer3 = self._make_layer(BasicBlock, Conv3DSimple, widths[2], 1, stride=2)
                self.layer4 = self._make_layer(BasicBlock, Conv3DSimple, widths[3], 1, stride=2)
                self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
                self.fc = nn.Linear(widths[3], num_classes)

        return randomize_batchnorm(SmallVideoResNet()).eval(), (torch.randn(1, 3, 4, 32, 32),)

    def maxvit():
        # MaxViT blocks (MBConv, block and grid attention with relative positions through einsum).
        model = tvm.MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[8],
                           block_layers=[1], head_dim=4, stochastic_depth_prob=0.0, num_classes=10)  # fmt: skip
        return randomize_batchnorm(model).eval(), (torch.randn(1, 3, 32, 32),)

    def swin_v2():
        from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

        model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 1], num_heads=[2, 2], window_size=[4, 4],
                                num_classes=10, block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)  # fmt: skip
        return model.eval(), (torch.randn(1, 3, 40, 40),)

    return {"deeplabv3_small_config": deeplabv3, "lraspp_small_config": lraspp, "r3d_small_config": r3d,
            "maxvit_small_config": maxvit, "swin_v2_small_config": swin_v2}  # fmt: skip


class OutTensor:
    """Wraps a segmentation model returning {"out": tensor} so that it returns the tensor."""

    def __new__(cls, model, key):
        import torch

        class Picked(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(x)[key]

        return Picked()


def transformers_builders():
    """Tiny configs (hidden 32, 2 layers, 4 heads (2 key/value heads where grouped), vocab 128,
    batch 2, sequence 8). Every model taking an attention mask has a second entry <name>_mask whose
    second row ends in 3 padding positions."""
    import torch
    import transformers as tf

    class HfOutputs(torch.nn.Module):
        """Calls the model with positional tensors as named arguments and returns the named outputs
        as plain tensors (the corpus wants a flat tuple of tensors, not a ModelOutput)."""

        def __init__(self, model, arg_names, output_keys):
            super().__init__()
            self.model, self.arg_names, self.output_keys = model, arg_names, output_keys

        def forward(self, *args):
            out = self.model(**dict(zip(self.arg_names, args)), return_dict=True)
            return tuple(out[key] for key in self.output_keys)

    vocab, seq = 128, 8
    # Special tokens inside the tiny vocabulary (the defaults are real vocabularies' ids).
    tokens = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)
    decoder_only = dict(
        vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, use_cache=False,
    )  # fmt: skip
    encoder = dict(
        vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=64,
    )  # fmt: skip
    seq2seq = dict(
        vocab_size=vocab, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, use_cache=False,
    )  # fmt: skip

    def ids():
        return torch.randint(3, vocab, (2, seq))  # above the special tokens (RoBERTa's padding is 1)

    def mask():
        m = torch.ones(2, seq, dtype=torch.long)
        m[1, -3:] = 0
        return m

    def image(size=32):
        return torch.randn(1, 3, size, size)

    def whisper_config():
        # The encoder wants 2 * max_source_positions frames of num_mel_bins.
        return tf.WhisperConfig(
            num_mel_bins=16, max_source_positions=16, max_target_positions=32, decoder_start_token_id=1,
            suppress_tokens=None, begin_suppress_tokens=None, **tokens, **seq2seq,
        )  # fmt: skip

    def features():
        return torch.randn(2, 16, 32)

    def one_layer(config):
        return dict(config, num_hidden_layers=1)

    def audio():
        return torch.randn(1, 400)

    # name: (model factory, [(argument, input factory)], output keys, mask argument or None)
    specs = {
        "gpt2": (lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=4, use_cache=False, **tokens)),
                 [("input_ids", ids)], ["logits"], "attention_mask"),
        "bert": (lambda: tf.BertModel(tf.BertConfig(**encoder)),
                 [("input_ids", ids)], ["last_hidden_state", "pooler_output"], "attention_mask"),
        "distilbert": (lambda: tf.DistilBertModel(tf.DistilBertConfig(vocab_size=vocab, dim=32, hidden_dim=64, n_layers=2, n_heads=4, max_position_embeddings=64)),
                       [("input_ids", ids)], ["last_hidden_state"], "attention_mask"),
        "roberta": (lambda: tf.RobertaModel(tf.RobertaConfig(**encoder)),
                    [("input_ids", ids)], ["last_hidden_state", "pooler_output"], "attention_mask"),
        "llama": (lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**decoder_only)), [("input_ids", ids)], ["logits"], "attention_mask"),
        "qwen2": (lambda: tf.Qwen2ForCausalLM(tf.Qwen2Config(**decoder_only)), [("input_ids", ids)], ["logits"], "attention_mask"),
        "mistral": (lambda: tf.MistralForCausalLM(tf.MistralConfig(**decoder_only)), [("input_ids", ids)], ["logits"], "attention_mask"),
        "phi": (lambda: tf.PhiForCausalLM(tf.PhiConfig(partial_rotary_factor=0.5, **decoder_only)),
                [("input_ids", ids)], ["logits"], "attention_mask"),
        "gemma": (lambda: tf.GemmaForCausalLM(tf.GemmaConfig(head_dim=8, **decoder_only)), [("input_ids", ids)], ["logits"], "attention_mask"),
        "t5_encoder": (lambda: tf.T5EncoderModel(tf.T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, use_cache=False)),
                       [("input_ids", ids)], ["last_hidden_state"], "attention_mask"),
        "t5": (lambda: tf.T5Model(tf.T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, use_cache=False)),
               [("input_ids", ids), ("decoder_input_ids", ids)], ["last_hidden_state", "encoder_last_hidden_state"], "attention_mask"),
        "bart": (lambda: tf.BartModel(tf.BartConfig(max_position_embeddings=64, **seq2seq)),
                 [("input_ids", ids), ("decoder_input_ids", ids)], ["last_hidden_state", "encoder_last_hidden_state"], "attention_mask"),
        "vit_hf": (lambda: tf.ViTModel(tf.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32, patch_size=8)),
                   [("pixel_values", image)], ["last_hidden_state", "pooler_output"], None),
        # Whisper's encoder takes no attention mask (every frame counts); the decoder's mask is the variant.
        "whisper_encoder": (lambda: tf.WhisperModel(whisper_config()).get_encoder(),
                            [("input_features", features)], ["last_hidden_state"], None),
        "whisper": (lambda: tf.WhisperModel(whisper_config()),
                    [("input_features", features), ("decoder_input_ids", ids)], ["last_hidden_state", "encoder_last_hidden_state"],
                    "decoder_attention_mask"),
        "clip_text": (lambda: tf.CLIPTextModel(tf.CLIPTextConfig(**tokens, **encoder)),
                      [("input_ids", ids)], ["last_hidden_state", "pooler_output"], "attention_mask"),
        # The families of issue 29's table (MoE routing, ALiBi, disentangled attention, rotary
        # variants, windowed vision attention, audio feature extraction, segmentation), one layer
        # each: committed in all three forms, their graphs are most of the corpus's bytes.
        "mixtral": (lambda: tf.MixtralForCausalLM(tf.MixtralConfig(num_local_experts=4, num_experts_per_tok=2, **one_layer(decoder_only))),
                    [("input_ids", ids)], ["logits"], None),
        "bloom": (lambda: tf.BloomModel(tf.BloomConfig(vocab_size=vocab, hidden_size=32, n_layer=1, n_head=4, use_cache=False, **tokens)),
                  [("input_ids", ids)], ["last_hidden_state"], "attention_mask"),
        "deberta_v2": (lambda: tf.DebertaV2Model(tf.DebertaV2Config(relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8,
                                                                    max_relative_positions=16, **one_layer(encoder))),
                       [("input_ids", ids)], ["last_hidden_state"], None),
        "falcon": (lambda: tf.FalconForCausalLM(tf.FalconConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                                                use_cache=False, **tokens)),
                   [("input_ids", ids)], ["logits"], None),
        "gptj": (lambda: tf.GPTJForCausalLM(tf.GPTJConfig(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=1, n_head=4, rotary_dim=4,
                                                          use_cache=False, **tokens)),
                 [("input_ids", ids)], ["logits"], None),
        "swin_hf": (lambda: tf.SwinModel(tf.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[2, 1], num_heads=[2, 2], window_size=2)),
                    [("pixel_values", image)], ["last_hidden_state", "pooler_output"], None),
        "wav2vec2": (lambda: tf.Wav2Vec2Model(tf.Wav2Vec2Config(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                                                                conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                                                num_conv_pos_embedding_groups=4, feat_extract_norm="group")),
                     [("input_values", audio)], ["last_hidden_state"], None),
        "segformer": (lambda: tf.SegformerForSemanticSegmentation(tf.SegformerConfig(
                          num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16], num_attention_heads=[1, 2],
                          patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2], decoder_hidden_size=16, num_labels=3)),
                      [("pixel_values", image)], ["logits"], None),
        "clip_vision": (lambda: tf.CLIPVisionModel(tf.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8)),
                        [("pixel_values", image)], ["last_hidden_state", "pooler_output"], None),
    }  # fmt: skip

    def builder(make_model, arguments, outputs, mask_argument):
        def build():
            model = make_model().eval()
            names = [name for name, _ in arguments] + ([mask_argument] if mask_argument else [])
            inputs = [make() for _, make in arguments] + ([mask()] if mask_argument else [])
            return HfOutputs(model, names, outputs).eval(), tuple(inputs)

        return build

    builders = {}
    for name, (make_model, arguments, outputs, mask_argument) in specs.items():
        builders[name] = builder(make_model, arguments, outputs, None)
        if mask_argument:
            builders[name + "_mask"] = builder(make_model, arguments, outputs, mask_argument)
    return builders


def torch_nn_builders():
    """Recurrent layers, nn.Transformer layers (batch 2, sequence 5-6, small widths) and in-place
    mutation as the default IR records it."""
    import torch
    import torch.nn as nn

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)

        def forward(self, x, h0, c0):
            return self.lstm(x, (h0, c0))

    class Recurrent(nn.Module):
        """nn.GRU / nn.RNN, with or without an initial state."""

        def __init__(self, layer):
            super().__init__()
            self.layer = layer

        def forward(self, x, *h0):
            return self.layer(x, *h0)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
            # No nested tensors: they zero padded positions in eager, which the export does not.
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

        def forward(self, x, *padding):
            return self.encoder(x, src_key_padding_mask=padding[0] if padding else None)

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerDecoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
            self.decoder = nn.TransformerDecoder(layer, 2)

        def forward(self, tgt, memory):
            causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
            return self.decoder(tgt, memory, tgt_mask=causal, tgt_is_causal=True)

    class BufferAndViewMutation(nn.Module):
        """In-place ops as the default IR keeps them: on a buffer, on a graph input that is also
        an output, through a view, through a transposed (non-contiguous) view."""

        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(3))
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            self.count.add_(1)
            y = torch.relu_(self.fc(x))
            y.view(-1).mul_(2)
            y.t().add_(1.5)
            return y + self.count, x.add_(1)

    class InPlaceChain(nn.Module):
        """Chains of in-place ops, fill_/copy_/zero_, and in-place on a strided slice."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)

        def forward(self, x):
            y = nn.functional.relu(self.conv(x), inplace=True)
            y = nn.functional.hardswish(y, inplace=True)
            y.mul_(0.5).clamp_(max=0.3)
            y[:, ::2].masked_fill_(y[:, ::2] > 0.2, -1.0)
            z = torch.zeros_like(y)
            z.fill_(2.0)
            z[:, 1:].copy_(y[:, :-1])
            w = y.clone()
            y.zero_()
            return y, z, w

    def padding():
        m = torch.zeros(2, 6, dtype=torch.bool)
        m[1, -2:] = True  # True = ignore
        return m

    def x():
        return torch.randn(2, 5, 8)

    return {
        "lstm": lambda: (Lstm().eval(), (x(), torch.randn(4, 2, 16), torch.randn(4, 2, 16))),
        "gru": lambda: (Recurrent(nn.GRU(8, 16, num_layers=2, batch_first=True)).eval(), (x(), torch.randn(2, 2, 16))),
        "gru_nobias": lambda: (Recurrent(nn.GRU(8, 16, batch_first=True, bias=False)).eval(), (x(),)),
        "rnn_tanh": lambda: (Recurrent(nn.RNN(8, 16, batch_first=True)).eval(), (x(), torch.randn(1, 2, 16))),
        "rnn_relu": lambda: (Recurrent(nn.RNN(8, 16, nonlinearity="relu", batch_first=True)).eval(), (x(), torch.randn(1, 2, 16))),
        "transformer_encoder": lambda: (Encoder().eval(), (torch.randn(2, 6, 32),)),
        "transformer_encoder_mask": lambda: (Encoder().eval(), (torch.randn(2, 6, 32), padding())),
        "transformer_decoder": lambda: (Decoder().eval(), (torch.randn(2, 5, 32), torch.randn(2, 6, 32))),
        "gru_bidir_state": lambda: (Recurrent(nn.GRU(8, 16, num_layers=2, bidirectional=True)).eval(),
                                    (torch.randn(5, 2, 8), torch.randn(4, 2, 16))),
        "rnn_relu_unbatched": lambda: (Recurrent(nn.RNN(8, 16, nonlinearity="relu", bidirectional=True)).eval(),
                                       (torch.randn(5, 8), torch.randn(2, 16))),
        "inplace_buffer_view": lambda: (BufferAndViewMutation().eval(), (torch.randn(2, 3),)),
        "inplace_chain": lambda: (InPlaceChain().eval(), (torch.randn(1, 3, 6, 6),)),
    }


def zoo_builders():
    """name -> builder; a group whose library fails to import becomes one failing entry, named after it."""

    def failing(message):
        def build():
            raise RuntimeError(message)

        return build

    builders = {}
    for group in (torchvision_builders, transformers_builders, torch_nn_builders):
        try:
            builders.update(group())
        except Exception as error:  # e.g. torchvision or transformers missing: the rest still runs
            builders[group.__name__] = failing(one_line(error))
    return builders


def one_line(error, limit=300):
    text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def write_expect_dir(folder, user_outputs, expected):
    """nrt-run --expect DIR compares each user output with DIR/<its value name>.npy."""
    import numpy as np
    import torch

    expect = os.path.join(folder, "expect")
    os.makedirs(expect, exist_ok=True)
    for name, tensor in zip(user_outputs, expected):
        tensor = tensor.detach().cpu()
        np.save(os.path.join(expect, f"{name}.npy"), (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy())
    return expect


def parse_missing_ops(message):
    """Targets of nrt's 'no cpu kernel for N targets:' error: one line each, '  aten::x.y (node n)' or
    '  aten::x.y (5 nodes: n, n_1, ...)'."""
    if "no cpu kernel for" not in message:
        return []
    return sorted({m.group(1) for m in re.finditer(r"^\s+(\S+) \((?:node |\d+ nodes: )", message, re.MULTILINE)})


def run_nrt(nrt_run, folder, tolerance, timeout=600):
    """Runs nrt-run on one zoo folder (names from the manifest's zoo entry) and returns
    {runs, matches, max_abs, max_rel, missing_ops, error}."""
    zoo = json.load(open(os.path.join(folder, "manifest.json")))["zoo"]
    command = [nrt_run, "-q", os.path.join(folder, "model.pt2")]
    for i, name in enumerate(zoo["user_inputs"]):
        command += ["--input", f"{name}={os.path.join(folder, f'input_{i}.npy')}"]
    command += ["--expect", os.path.join(folder, "expect"), "--rtol", str(tolerance), "--atol", str(tolerance), "--json"]
    result = {"runs": False, "matches": False, "max_abs": None, "max_rel": None, "missing_ops": [], "error": None}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        result["error"] = f"nrt-run timed out after {timeout} s"
        return result
    except OSError as error:
        result["error"] = f"nrt-run: {one_line(error)}"
        return result
    try:
        report = json.loads(proc.stdout)
    except ValueError:  # a crash prints no JSON
        why = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        result["error"] = f"nrt-run {why}, no JSON: {one_line(proc.stderr[-500:] or proc.stdout[-500:])}"
        return result
    if "error" in report:
        message = report["error"].get("message", "")
        result["missing_ops"] = parse_missing_ops(message)
        result["error"] = f"{report['error'].get('id', '')} {report['error'].get('name', '')}: {one_line(message)}"
        return result
    comparisons = [o.get("comparison") or {} for o in report.get("outputs", [])]
    result["runs"] = True
    result["matches"] = bool(comparisons) and all(c.get("ok") for c in comparisons)
    for key, field in (("max_abs", "max_abs_error"), ("max_rel", "max_rel_error")):
        values = [c[field] for c in comparisons if c.get(field) is not None]
        result[key] = max(values) if values else None
    problems = [f"{o['name']}: {c.get('problem') or 'differs'}" for o, c in zip(report["outputs"], comparisons) if not c.get("ok")]
    result["error"] = "; ".join(problems) or None
    return result


def export_model(name, build, forms, zoo_dir, nrt_run):
    """Builds one model, exports it in every form, writes the folders and runs nrt: one row per form."""
    import torch

    def row(form, **fields):
        base = {"model": name, "form": form, "exported": False, "runs": False, "matches": False, "max_abs": None,
                "max_rel": None, "missing_ops": [], "error": None, "mb": None, "seconds": None}  # fmt: skip
        base.update(fields)
        return base

    torch.manual_seed(0)  # the same weights and inputs whatever --only selects
    stage = "build"
    try:
        module, inputs = build()
        stage = "eager run"
        expected = eager_outputs(module, inputs)
        stage = "export"
        exported = torch.export.export(module, inputs)
    except Exception as error:  # one model never stops the sweep
        return [row(form, error=f"{stage}: {one_line(error)}") for form in forms]

    rows = []
    for form in forms:
        started = time.time()
        folder = os.path.join(zoo_dir, f"{name}__{form}")
        try:
            ep = convert_form(exported, form)
            signature = ep.graph_signature
            user_outputs = list(signature.user_outputs)
            if len(user_outputs) != len(expected):
                raise RuntimeError(f"{len(user_outputs)} user outputs, {len(expected)} eager outputs")
            shutil.rmtree(folder, ignore_errors=True)  # no stale files from an earlier sweep
            extra = {"zoo": {"model": name, "form": form, "user_inputs": list(signature.user_inputs), "user_outputs": user_outputs}}
            write_program(folder, ep, inputs, expected, extra=extra)
            write_expect_dir(folder, user_outputs, expected)
        except Exception as error:
            rows.append(row(form, error=f"{form}: {one_line(error)}", seconds=round(time.time() - started, 1)))
            continue
        result = run_nrt(nrt_run, folder, tolerance=1e-4)
        rows.append(row(form, exported=True, mb=round(folder_bytes(folder) / 2**20, 2),
                        seconds=round(time.time() - started, 1), **result))  # fmt: skip
    return rows


def yes_no(value):
    return "yes" if value else "no"


def print_table(rows, elapsed):
    def number(value, spec):
        return "" if value is None else format(value, spec)

    header = ("model", "form", "exported", "runs", "matches", "max_abs", "max_rel", "MB", "missing ops")
    lines = [header]
    for r in rows:
        lines.append((r["model"], r["form"], yes_no(r["exported"]), yes_no(r["runs"]), yes_no(r["matches"]),
                      number(r["max_abs"], ".1e"), number(r["max_rel"], ".1e"), number(r["mb"], ".1f"),
                      ", ".join(r["missing_ops"])))  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)) + "  " + line[-1])
    failures = [r for r in rows if r["error"] and not r["missing_ops"]]
    if failures:
        print("\nother failures:")
        for r in failures:
            print(f"  {r['model']}__{r['form']}: {r['error']}")
    count = lambda key: sum(1 for r in rows if r[key])  # noqa: E731
    models = len({r["model"] for r in rows})
    print(f"\nzoo: {models} models, {len(rows)} exports: {count('exported')} exported, {count('runs')} run, "
          f"{count('matches')} match, {sum(1 for r in rows if r['missing_ops'])} miss kernels; {elapsed:.0f} s")  # fmt: skip


def save_table(rows, path):
    """Merges this sweep's rows into path (a --only run keeps the other models' rows)."""
    import torch

    table = {}
    if os.path.isfile(path):
        for r in json.load(open(path)).get("rows", []):
            table[(r["model"], r["form"])] = r
    for r in rows:
        table[(r["model"], r["form"])] = r
    with open(path, "w") as f:
        json.dump({"torch_version": torch.__version__, "rows": sorted(table.values(), key=lambda r: (r["model"], ZOO_FORMS.index(r["form"])))},
                  f, indent=1)  # fmt: skip
        f.write("\n")


def selected(name, only):
    return not only or any(fnmatch.fnmatchcase(name, pattern) for pattern in only)


def run_zoo(args):
    nrt_run = os.path.abspath(args.nrt_run)
    if not os.access(nrt_run, os.X_OK):
        sys.exit(f"torch_corpus: {nrt_run} is not executable (build //cli:nrt-run, or set NRT_RUN / --nrt-run)")
    os.makedirs(args.zoo_dir, exist_ok=True)
    # Export warns about every nn.RNN/LSTM/GRU's _flat_weights; harmless here and very long.
    warnings.filterwarnings("ignore", message="The tensor attributes .*_flat_weights")
    started = time.time()
    rows = []
    for name, build in zoo_builders().items():
        if selected(name, args.only):
            model_rows = export_model(name, build, args.forms, args.zoo_dir, nrt_run)
            for r in model_rows:
                status = "matches" if r["matches"] else "runs, differs" if r["runs"] else r["error"] or "fails"
                print(f"torch_corpus: zoo {name}__{r['form']}: {status}", flush=True)
            rows += model_rows
    if not rows:
        sys.exit(f"torch_corpus: --only {' '.join(args.only)} names no zoo model; the zoo: {' '.join(zoo_builders())}")
    print()
    print_table(rows, time.time() - started)
    save_table(rows, os.path.join(args.zoo_dir, "zoo_table.json"))
    print(f"table: {os.path.join(args.zoo_dir, 'zoo_table.json')}")


def commit_subset(args):
    """Copies zoo folders (NAME is <model>__<form>, or <model> for all its forms; NAME=DEST renames)
    into --commit-dir, after checking that nrt matches them at the CI tolerance."""
    nrt_run = os.path.abspath(args.nrt_run)
    chosen = []  # (source folder, destination name)
    for spec in args.commit:
        source, _, dest = spec.partition("=")
        names = [source] if "__" in source else [f"{source}__{form}" for form in ZOO_FORMS]
        names = [n for n in names if os.path.isfile(os.path.join(args.zoo_dir, n, "model.pt2"))]
        if not names:
            sys.exit(f"torch_corpus: no zoo folder for {source} in {args.zoo_dir} (run --zoo first)")
        if dest and len(names) > 1:
            sys.exit(f"torch_corpus: {spec}: a destination name needs one form (<model>__<form>=NAME)")
        chosen += [(os.path.join(args.zoo_dir, n), dest or n) for n in names]
    for _, dest in chosen:  # every name checked before anything is copied
        if not re.fullmatch(r"[a-z0-9_]+", dest):
            sys.exit(f"torch_corpus: {dest}: corpus names are lowercase letters, digits and underscores")
        manifest = os.path.join(args.commit_dir, dest, "manifest.json")
        if os.path.isfile(manifest) and "zoo" not in json.load(open(manifest)):
            sys.exit(f"torch_corpus: {os.path.dirname(manifest)} is a hand-made corpus model; choose another name")

    total, copied = 0, 0
    for folder, dest in chosen:
        target = os.path.join(args.commit_dir, dest)
        check = run_nrt(nrt_run, folder, tolerance=CI_TOLERANCE)
        if not check["matches"] and not args.commit_failing:
            print(f"torch_corpus: skipping {dest}: nrt does not match at {CI_TOLERANCE} ({check['error']}); "
                  "--commit-failing copies it anyway (CI will fail)")  # fmt: skip
            continue
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        for file in sorted(os.listdir(folder)):
            if file in CORPUS_FILES or re.fullmatch(r"(input|output)_\d+\.npy", file):
                shutil.copy2(os.path.join(folder, file), target)
        size = folder_bytes(target)
        total, copied = total + size, copied + 1
        print(f"torch_corpus: {dest}: {size / 2**20:.2f} MB")
    print(f"torch_corpus: copied {copied} of {len(chosen)} into {args.commit_dir}: {total / 2**20:.2f} MB in total")
    if total > 25 * 2**20:
        print("torch_corpus: warning: over 25 MB; commit a smaller subset")
    return 0 if copied == len(chosen) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = os.path.join(here, "..", "testdata", "torch")
    parser.add_argument("--out", default=corpus)
    parser.add_argument("--only", nargs="*", default=None, help="models to export (with --zoo: names or fnmatch patterns)")
    parser.add_argument("--install", action="store_true")
    parser.add_argument(
        "--check",
        metavar="DIR",
        help="instead of exporting: load DIR/<name>.pt2 (archives nrt wrote, e.g. by converting each "
        "model.pt2 to .nrt and back) with torch.export.load, run the saved inputs and compare with the "
        "saved outputs and with the original models/model.json",
    )
    parser.add_argument(
        "--dtensor",
        action="store_true",
        help="write the per-rank DTensor archives (scripts/dtensor_archives.py) into --out, on a gloo group on "
        "127.0.0.1; with --check DIR: load DIR/<case>_rank<r>.pt2 (archives nrt wrote) with torch.export.load on "
        "a gloo group of the mesh's size and compare every rank's output with torch's",
    )
    parser.add_argument(
        "--fr-dumps",
        action="store_true",
        help="run a diverging job under mpirun with NRT_FR_DUMP_FORMAT=torch, check that torchfrtrace names the "
        "missing rank, and write the dumps and torch's report to testdata/fr_torch (scripts/torch_fr_dumps.py)",
    )
    zoo_options = parser.add_argument_group("zoo")
    zoo_options.add_argument("--zoo", action="store_true", help="export the zoo of real models into --zoo-dir and run nrt-run on each")
    zoo_options.add_argument("--zoo-dir", default="/tmp/zoo", help="scratch folder of the zoo (default /tmp/zoo)")
    zoo_options.add_argument("--forms", nargs="+", choices=ZOO_FORMS, default=list(ZOO_FORMS))
    zoo_options.add_argument(
        "--nrt-run",
        default=os.environ.get("NRT_RUN", os.path.join(here, "..", "bazel-bin", "cli", "nrt-run")),
        help="nrt-run binary (default: $NRT_RUN, else bazel-bin/cli/nrt-run)",
    )
    zoo_options.add_argument(
        "--commit",
        nargs="+",
        metavar="NAME",
        help="copy zoo folders into --commit-dir: <model>__<form>, <model> (its forms), <model>__<form>=DEST",
    )
    zoo_options.add_argument("--commit-dir", default=corpus, help="destination of --commit (default testdata/torch)")
    zoo_options.add_argument("--commit-failing", action="store_true", help="--commit even what nrt does not match at CI tolerance")
    args = parser.parse_args()
    args.forms = [form for form in ZOO_FORMS if form in args.forms]  # table order, whatever the command's
    if args.zoo or args.commit:  # --zoo --commit NAME: sweep, then copy from the fresh sweep
        if args.zoo:
            ensure_torch(args.install)
            run_zoo(args)
        sys.exit(commit_subset(args) if args.commit else 0)
    ensure_torch(args.install)
    if args.fr_dumps:
        import torch_fr_dumps

        repo = os.path.join(here, "..")
        sys.exit(0 if torch_fr_dumps.make(repo, args.nrt_run, os.path.join(repo, "testdata", "fr_torch")) else 1)
    if args.dtensor:
        import dtensor_archives

        if args.check:  # per-rank archives nrt wrote, loaded on a gloo group
            sys.exit(0 if dtensor_archives.check(args.check, args.only) else 1)
        dtensor_archives.make(args.out, args.only)
        sys.exit(0)

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
