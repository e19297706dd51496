#!/usr/bin/env python3
"""nrt-run against torch eager on the zoo of scripts/torch_corpus.py, as a ratio table.

For each zoo model: the model is built and exported as torch_corpus.py does (same seed, same
inputs), saved in one form (default: decomp_empty) and run by `nrt-run --repeat R --json`; torch
eager runs the same module on the same inputs R times in this process. Both medians are taken at
1 thread and at 2 threads (torch.set_num_threads(n); OPENBLAS_NUM_THREADS=n for nrt-run, whose
own kernels are single-threaded: BLAS is its only parallel part). The ratio is nrt / torch
(below 1: nrt is faster). With --profile, the slowest op targets of nrt's profile are listed
for every model nrt loses on.

By hand only (needs torch; CI never runs it):

  python3 scripts/torch_compare.py [--only 'gpt2*' ...] [--repeat 50] [--threads 1 2]
      [--form decomp_empty] [--nrt-run bazel-bin/cli/nrt-run] [--profile] [--json FILE]

This machine sets OPENBLAS_CORETYPE=Haswell; the script leaves it as it finds it.
"""

import argparse
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import torch_corpus  # noqa: E402  (the zoo's builders and writers)


def torch_median_ms(module, inputs, repeat, threads):
    import torch

    torch.set_num_threads(threads)
    times = []
    with torch.no_grad():
        for _ in range(repeat + 1):
            copies = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
            start = time.perf_counter()
            module(*copies)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[1:])  # the first run warms caches and allocators


def nrt_report(nrt_run, folder, repeat, threads, profile):
    zoo = json.load(open(os.path.join(folder, "manifest.json")))["zoo"]
    command = [nrt_run, "-q", os.path.join(folder, "model.pt2"), "--repeat", str(repeat), "--json"]
    for i, name in enumerate(zoo["user_inputs"]):
        command += ["--input", f"{name}={os.path.join(folder, f'input_{i}.npy')}"]
    if profile:
        command.append("--profile")
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    report = json.loads(proc.stdout)
    if "error" in report:
        raise RuntimeError(report["error"].get("message", "nrt-run failed").splitlines()[0])
    return report


def compare_model(name, build, args, scratch):
    import torch

    torch.manual_seed(0)
    module, inputs = build()
    exported = torch.export.export(module, tuple(t.clone() for t in inputs))
    ep = torch_corpus.convert_form(exported, args.form)
    folder = os.path.join(scratch, name)
    expected = torch_corpus.eager_outputs(module, inputs)
    extra = {"zoo": {"model": name, "form": args.form, "user_inputs": list(ep.graph_signature.user_inputs),
                     "user_outputs": list(ep.graph_signature.user_outputs)}}  # fmt: skip
    torch_corpus.write_program(folder, ep, inputs, expected, extra=extra)
    row = {"model": name, "form": args.form}
    for threads in args.threads:
        torch_ms = torch_median_ms(module, inputs, args.repeat, threads)
        report = nrt_report(args.nrt_run, folder, args.repeat, threads, args.profile and threads == args.threads[0])
        nrt_ms = report["time_ms"]["median"]
        row[f"torch_ms_{threads}"] = torch_ms
        row[f"nrt_ms_{threads}"] = nrt_ms
        row[f"ratio_{threads}"] = nrt_ms / torch_ms if torch_ms > 0 else None
        if "profile" in report:
            row["slowest_targets"] = [(r["name"], round(r["share"], 3)) for r in report["profile"]["by_target"][:4]]
    return row


def print_table(rows, threads):
    header = f"{'model':24}" + "".join(f"  {'nrt ms':>9} {'torch ms':>9} {'ratio':>6} ({t}t)" for t in threads)
    print(header)
    for row in rows:
        if "error" in row:
            print(f"{row['model']:24}  {row['error']}")
            continue
        line = f"{row['model']:24}"
        for t in threads:
            line += f"  {row[f'nrt_ms_{t}']:9.3f} {row[f'torch_ms_{t}']:9.3f} {row[f'ratio_{t}']:6.2f}     "
        print(line.rstrip())
    for t in threads:
        ratios = [r[f"ratio_{t}"] for r in rows if "error" not in r and r.get(f"ratio_{t}")]
        if ratios:
            wins = sum(1 for x in ratios if x < 1)
            print(f"{t} thread(s): median ratio {statistics.median(ratios):.2f}, nrt faster on {wins} of {len(ratios)}")
    losers = [r for r in rows if "error" not in r and r.get(f"ratio_{threads[0]}", 0) > 1 and r.get("slowest_targets")]
    if losers:
        print("where nrt loses, its slowest op targets (share of node time):")
        for r in losers:
            print(f"  {r['model']:24} " + ", ".join(f"{t} {s:.0%}" for t, s in r["slowest_targets"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=[], help="model names or fnmatch patterns")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--form", default="decomp_empty", choices=["default", "decomp_empty", "core_aten"])
    parser.add_argument("--nrt-run", default=os.environ.get("NRT_RUN", os.path.join(ROOT, "bazel-bin", "cli", "nrt-run")))
    parser.add_argument("--profile", action="store_true", help="name nrt's slowest op targets per model")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args()
    torch_corpus.ensure_torch(False)

    rows = []
    with tempfile.TemporaryDirectory(prefix="nrt_compare_") as scratch:
        for name, build in torch_corpus.zoo_builders().items():
            if args.only and not any(fnmatch.fnmatch(name, pattern) for pattern in args.only):
                continue
            try:
                rows.append(compare_model(name, build, args, scratch))
            except Exception as error:  # one model never stops the table
                rows.append({"model": name, "error": torch_corpus.one_line(error, 120)})
            print(f"torch_compare: {name} done", file=sys.stderr)
    print_table(rows, args.threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
