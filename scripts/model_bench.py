#!/usr/bin/env python3
"""Model benchmark: nrt-run against torch eager, ExecuTorch+XNNPACK and ONNX Runtime (CPU).

By hand only, where torch is installed (never in CI). Every model is built from code with random
weights (no downloads), exported with torch.export, converted with `nrt-inspect convert` and then
timed by four engines at each thread count:

  nrt        nrt-run MODEL.nrt --input NAME=x.npy --warmup W --repeat R --threads T   (its printed median)
  torch      the eager nn.Module, torch.set_num_threads(T), torch.no_grad()
  xnnpack    ExecuTorch's .pte lowered with the XnnpackPartitioner, XNNPACK's pool reset to T
  ort        onnxruntime's CPUExecutionProvider on torch.onnx.export's model, intra_op_num_threads=T

Each figure is one fresh process (this script re-run with --measure), so no engine warms another's
caches or thread pools; rounds alternate the engines' order, and the table takes the median over
rounds of each process's median over --repeat runs (after --warmup runs). Peak RSS is the
process's ru_maxrss. Speedups are other_time / nrt_time: above 1, nrt is faster.

  /work/etvenv/bin/python scripts/model_bench.py [--models resnet18 mobilenet_v2 ...] [--threads 1 2]
        [--rounds 3] [--repeat 20] [--engines nrt torch xnnpack ort] [--work /tmp/model_bench]
        [--nrt-run bazel-bin/cli/nrt-run] [--nrt-inspect bazel-bin/cli/nrt-inspect] [--table FILE.md]

Needs torch, torchvision, transformers, executorch and onnxruntime (pip install executorch
onnxruntime onnx onnxscript torchvision transformers). An engine that cannot export or run a model
gets "-" in its cell and the reason below the table; the run goes on. --list names the models.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENGINES = ("nrt", "torch", "xnnpack", "ort")


# ---- models: name -> (builder, description); a builder returns (module, example input). Every
# module's forward names its input x (torchvision's do; the wrappers below too): nrt-run --input x=.

def _vision(name, side):
    def build():
        import torch
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        return model, torch.randn(1, 3, side, side)
    return build


def _causal_lm(config_class, hidden, layers, heads, kv_heads, inter, vocab, seq, **extra):
    def build():
        import torch
        import transformers
        torch.manual_seed(0)
        config = getattr(transformers, config_class)(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
            intermediate_size=inter, vocab_size=vocab, max_position_embeddings=max(seq, 128), **extra)
        model = getattr(transformers, config_class.replace("Config", "ForCausalLM"))(config).eval()
        return _Logits(model), torch.randint(0, vocab, (1, seq))
    return build


def _Logits(model, key="logits"):
    """`model` returning only the tensor the benchmark compares: logits or the last hidden state
    (the class is defined here, where torch is imported: the parent process never imports it)."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            out = self.model(x, use_cache=False) if key == "logits" else self.model(x)
            return out[key] if not isinstance(out, tuple) else out[0]
    return Logits()


def _bert():
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.BertConfig()  # BERT-base: hidden 768, 12 layers
    model = transformers.BertModel(config).eval()
    return _Logits(model, "last_hidden_state"), torch.randint(0, config.vocab_size, (1, 128))


def _gpt2():
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.GPT2Config()  # GPT-2 small
    return _Logits(transformers.GPT2LMHeadModel(config).eval()), torch.randint(0, config.vocab_size, (1, 128))


def _whisper_encoder():
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.WhisperConfig(d_model=128, encoder_layers=2, encoder_attention_heads=4, decoder_layers=2,
                                        decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
                                        num_mel_bins=80, max_source_positions=64, vocab_size=1000, pad_token_id=0,
                                        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    encoder = WhisperEncoder(config).eval()
    return _Logits(encoder, "last_hidden_state"), torch.randn(1, 80, 128)


MODELS = {
    "resnet18": (_vision("resnet18", 224), "torchvision resnet18, 1x3x224x224"),
    "resnet50": (_vision("resnet50", 224), "torchvision resnet50, 1x3x224x224"),
    "mobilenet_v2": (_vision("mobilenet_v2", 224), "torchvision mobilenet_v2, 1x3x224x224"),
    "mobilenet_v2_64": (_vision("mobilenet_v2", 64), "torchvision mobilenet_v2, 1x3x64x64"),
    "mobilenet_v3_small": (_vision("mobilenet_v3_small", 224), "torchvision mobilenet_v3_small, 224"),
    "mobilenet_v3_small_64": (_vision("mobilenet_v3_small", 64), "torchvision mobilenet_v3_small, 64"),
    "efficientnet_b0": (_vision("efficientnet_b0", 224), "torchvision efficientnet_b0, 224"),
    "efficientnet_b0_64": (_vision("efficientnet_b0", 64), "torchvision efficientnet_b0, 64"),
    "convnext_tiny": (_vision("convnext_tiny", 224), "torchvision convnext_tiny, 224"),
    "vit_b_16": (_vision("vit_b_16", 224), "torchvision vit_b_16, 224"),
    "swin_t": (_vision("swin_t", 224), "torchvision swin_t, 224"),
    "alexnet": (_vision("alexnet", 224), "torchvision alexnet, 224"),
    "bert_base": (_bert, "transformers BERT-base, seq 128"),
    "gpt2": (_gpt2, "transformers GPT-2 small, seq 128"),
    "llama_1024": (_causal_lm("LlamaConfig", 1024, 4, 16, 16, 2816, 32000, 128), "Llama, hidden 1024, 4 layers, seq 128"),
    "llama_tiny": (_causal_lm("LlamaConfig", 64, 2, 4, 2, 176, 1000, 32), "Llama, hidden 64, 2 layers, GQA, seq 32"),
    "mistral_tiny": (_causal_lm("MistralConfig", 128, 2, 4, 2, 352, 1000, 32), "Mistral, hidden 128, 2 layers, seq 32"),
    "qwen2_tiny": (_causal_lm("Qwen2Config", 128, 2, 4, 2, 352, 1000, 32), "Qwen2, hidden 128, 2 layers, seq 32"),
    "whisper_encoder_tiny": (_whisper_encoder, "Whisper encoder, d_model 128, 2 layers, 80x128 features"),
}


# ---- preparing a model's files: x.npy, model.pt2 -> model.nrt, model.pte, model.onnx

def prepare(name, work, args, engines):
    """Writes the model's files under work/name; returns {engine: reason} for engines that failed."""
    import numpy as np
    import torch
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    failures = {}
    model, x = MODELS[name][0]()
    np.save(os.path.join(folder, "x.npy"), x.numpy())
    exported = None
    try:
        with torch.no_grad():
            exported = torch.export.export(model, (x,))
        torch.export.save(exported, os.path.join(folder, "model.pt2"))
    except Exception as e:  # noqa: BLE001 - one model's failure must not stop the table
        for engine in ("nrt", "xnnpack"):
            failures[engine] = f"torch.export: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    if "nrt" in engines and exported is not None:
        out = subprocess.run([args.nrt_inspect, "convert", os.path.join(folder, "model.pt2"), "-o",
                              os.path.join(folder, "model.nrt")], capture_output=True, text=True)
        if out.returncode != 0:
            failures["nrt"] = "convert: " + (out.stderr.strip().splitlines() or ["?"])[-1][:200]
    if "xnnpack" in engines and exported is not None:
        try:
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
            from executorch.exir import to_edge_transform_and_lower
            program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
            with open(os.path.join(folder, "model.pte"), "wb") as f:
                f.write(program.buffer)
        except Exception as e:  # noqa: BLE001
            failures["xnnpack"] = f"lowering: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    if "ort" in engines:
        try:
            with torch.no_grad():
                torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), input_names=["x"], dynamo=True)
        except Exception as e:  # noqa: BLE001
            failures["ort"] = f"torch.onnx.export: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    return failures


# ---- one figure, in this (fresh) process

def median_ms(call, warmup, repeat):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(engine, name, threads, work, warmup, repeat):
    import numpy as np
    folder = os.path.join(work, name)
    x = np.load(os.path.join(folder, "x.npy"))
    if engine == "torch":
        import torch
        torch.set_num_threads(threads)
        model, _ = MODELS[name][0]()
        tx = torch.from_numpy(x)
        with torch.no_grad():
            return median_ms(lambda: model(tx), warmup, repeat)
    if engine == "xnnpack":
        import torch
        from executorch.extension.pybindings import portable_lib
        portable_lib._unsafe_reset_threadpool(threads)
        module = portable_lib._load_for_executorch(os.path.join(folder, "model.pte"))
        tx = torch.from_numpy(x)
        return median_ms(lambda: module.forward((tx,)), warmup, repeat)
    if engine == "ort":
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(os.path.join(folder, "model.onnx"), options,
                                               providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        return median_ms(lambda: session.run(None, feed), warmup, repeat)
    raise ValueError(engine)


def figure(engine, name, threads, args):
    """(median ms, peak RSS MiB) of one fresh process, or raises RuntimeError with the reason."""
    folder = os.path.join(args.work, name)
    if engine == "nrt":
        command = [args.nrt_run, os.path.join(folder, "model.nrt"), "--input",
                   f"x={os.path.join(folder, 'x.npy')}", "--warmup", str(args.warmup), "--repeat",
                   str(args.repeat), "--threads", str(threads)]
    else:
        command = [sys.executable, os.path.abspath(__file__), "--measure", engine, name, str(threads),
                   "--work", args.work, "--repeat", str(args.repeat), "--warmup", str(args.warmup)]
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    with open(os.path.join(folder, "stderr.txt"), "w+") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True, env=env)
        stdout = process.stdout.read()
        # wait4, not wait: the child's own peak RSS (KiB on Linux), not the largest of all children.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read()
    if process.returncode != 0:
        raise RuntimeError((stderr.strip().splitlines() or ["exit %d" % process.returncode])[-1][:200])
    if engine == "nrt":
        medians = [float(line.split()[2]) for line in stdout.splitlines() if line.startswith("time: median")]
        if not medians:
            raise RuntimeError("nrt-run printed no median")
        ms = medians[0]
    else:
        ms = json.loads(stdout.strip().splitlines()[-1])["ms"]
    return ms, usage.ru_maxrss / 1024.0


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def cpu_text():
    """The CPU the figures came from: its model, clock, widest float vectors and core count (rankings
    between engines change with the vector width: AVX-512 against AVX2)."""
    model, mhz, flags = "an unknown CPU", "", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name" and model == "an unknown CPU":
                    model = value
                elif key == "cpu MHz" and not mhz:
                    mhz = f" at {float(value) / 1000:.1f} GHz"
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    vectors = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model}{mhz} ({vectors}, {os.cpu_count()} cores)"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--engines", nargs="*", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--work", default="/tmp/model_bench")
    parser.add_argument("--nrt-run", default=os.environ.get("NRT_RUN", os.path.join(ROOT, "bazel-bin/cli/nrt-run")))
    parser.add_argument("--nrt-inspect", default=os.path.join(ROOT, "bazel-bin/cli/nrt-inspect"))
    parser.add_argument("--table", help="also write the markdown table here")
    parser.add_argument("--reuse", action="store_true",
                        help="keep a model's files from an earlier run in --work (x.npy, model.nrt/.pte/.onnx) "
                             "instead of exporting again; convert to .nrt again all the same")
    parser.add_argument("--list", action="store_true", help="name the models and exit")
    parser.add_argument("--measure", nargs=3, metavar=("ENGINE", "MODEL", "THREADS"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.list:
        for name, (_, what) in MODELS.items():
            print(f"{name:24} {what}")
        return 0
    if args.measure:
        engine, name, threads = args.measure
        ms = measure(engine, name, int(threads), args.work, args.warmup, args.repeat)
        print(json.dumps({"ms": ms}))
        return 0
    if args.prepare:
        print(json.dumps(prepare(args.prepare, args.work, args, args.engines)))
        return 0
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error("unknown model(s) " + ", ".join(unknown) + " (--list names them)")
    if "nrt" in args.engines and not os.access(args.nrt_run, os.X_OK):
        parser.error(f"{args.nrt_run} is not an executable: build it (bazel build //cli:all) or pass --nrt-run")

    failures = {}  # (model, engine) -> reason
    for name in args.models:
        # In a child: this process never imports torch, so that the figures' children (whose
        # ru_maxrss starts from the RSS of the process that forked them) measure their own peak.
        print(f"[prepare] {name}: {MODELS[name][1]}", file=sys.stderr, flush=True)
        folder = os.path.join(args.work, name)
        wanted = {"xnnpack": "model.pte", "ort": "model.onnx"}
        if args.reuse and os.path.exists(os.path.join(folder, "model.pt2")) and all(
                os.path.exists(os.path.join(folder, wanted[e])) for e in args.engines if e in wanted):
            if "nrt" in args.engines:  # nrt's side is what changes between runs: convert again
                out = subprocess.run([args.nrt_inspect, "convert", os.path.join(folder, "model.pt2"), "-o",
                                      os.path.join(folder, "model.nrt")], capture_output=True, text=True)
                if out.returncode != 0:
                    failures[(name, "nrt")] = "convert: " + (out.stderr.strip().splitlines() or ["?"])[-1][:200]
            continue
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--prepare", name, "--work", args.work,
                              "--nrt-inspect", args.nrt_inspect, "--engines", *args.engines],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode != 0:
            reason = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1][:200]
            for engine in args.engines:
                failures[(name, engine)] = f"building the model failed: {reason}"
            continue
        for engine, reason in json.loads(out.stdout.strip().splitlines()[-1]).items():
            failures[(name, engine)] = reason

    times = {}  # (model, engine, threads) -> [ms per round]
    rss = {}
    total = len(args.models) * len(args.threads) * args.rounds * len(args.engines)
    done = 0
    for name in args.models:
        for threads in args.threads:
            for round_index in range(args.rounds):
                shift = round_index % len(args.engines)
                order = args.engines[shift:] + args.engines[:shift]  # alternate who runs first
                for engine in order:
                    done += 1
                    if (name, engine) in failures:
                        continue
                    try:
                        ms, peak = figure(engine, name, threads, args)
                    except RuntimeError as e:
                        failures[(name, engine)] = f"run: {e}"
                        continue
                    times.setdefault((name, engine, threads), []).append(ms)
                    rss[(name, engine)] = max(rss.get((name, engine), 0.0), peak)
                    print(f"[{done}/{total}] {name} {engine} threads={threads}: {ms:.2f} ms", file=sys.stderr, flush=True)

    def cell_ms(name, engine, threads):
        values = times.get((name, engine, threads))
        return statistics.median(values) if values else None

    others = [e for e in args.engines if e != "nrt"]
    header = ["model"]
    for threads in args.threads:
        header += [f"nrt ms ({threads}t)"] + [f"{e}/nrt ({threads}t)" for e in others]
    header += ["peak RSS MiB (" + ", ".join(args.engines) + ")"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    speedups = {(e, t): [] for e in others for t in args.threads}
    for name in args.models:
        row = [name]
        for threads in args.threads:
            base = cell_ms(name, "nrt", threads)
            row.append(f"{base:.2f}" if base else "-")
            for engine in others:
                other = cell_ms(name, engine, threads)
                if base and other:
                    speedups[(engine, threads)].append(other / base)
                    row.append(f"{other / base:.2f}")
                else:
                    row.append("-")
        row.append(" / ".join(f"{rss[(name, e)]:.0f}" if (name, e) in rss else "-" for e in args.engines))
        lines.append("| " + " | ".join(row) + " |")
    row = ["geomean"]
    for threads in args.threads:
        row.append("")
        row += [f"{geomean(speedups[(e, threads)]):.2f}" for e in others]
    row.append("")
    lines.append("| " + " | ".join(row) + " |")
    table = "\n".join(lines)
    notes = [f"- {name} / {engine}: {reason}" for (name, engine), reason in sorted(failures.items())]
    command = "python3 scripts/model_bench.py " + " ".join(sys.argv[1:])
    text = (f"{table}\n\nother_time / nrt_time (above 1: nrt faster); medians over {args.rounds} rounds of "
            f"{args.repeat} runs each, one fresh process per figure, on {cpu_text()}. `{command}`\n")
    if notes:
        text += "\nNot measured:\n" + "\n".join(notes) + "\n"
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
